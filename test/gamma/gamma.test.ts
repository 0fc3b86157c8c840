import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { gamma } from '../../src/ops/gamma/index.js';
import { gammaLut8 } from '../../src/ops/gamma/lut.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { pythonArrays } from '../helpers/python.js';

// Fixtures: scripts/make_gamma_fixtures.py (skimage.exposure.adjust_gamma of Debian's scikit-image 0.19).
const CASES = [[0.5, 1], [2.2, 1], [1, 1], [0.8, 1.3]] as const;
const INPUTS = [
  { stem: 'camera', path: fixture('images', 'camera.png'), ext: 'png' },
  { stem: 'chelsea', path: fixture('images', 'chelsea.png'), ext: 'png' },
  { stem: 'moon16', path: fixture('images', 'moon16.npy'), ext: 'png' },
  { stem: 'camera_unit_f32', path: fixture('gamma', 'camera_unit_f32.npy'), ext: 'npy' },
];
const ref = (stem: string, g: number, k: number, ext: string) => fixture('gamma', `${stem}_g${g.toFixed(1)}_k${k.toFixed(1)}.${ext}`);

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

/** float32 on the GPU: WGSL's pow is exp2(γ·log2 x), within a few ulp of powf (docs/gamma.md). */
const GPU_F32_TOLERANCE = 4e-7;

test('the uint8 LUT truncates as skimage does: gamma 1 maps i·(1/255)·255 below i for some i', () => {
  const lut = gammaLut8(1, 1);
  const dropped = [...lut].map((v, i) => i - v).filter((d) => d !== 0);
  assert.ok(dropped.length > 0 && dropped.every((d) => d === 1), `${dropped.length} values lowered by one`);
});

for (const input of INPUTS) {
  for (const [g, k] of CASES) {
    const want = ref(input.stem, g, k, input.ext);
    if (input.stem === 'moon16' && k > 1) continue; // numpy's cast above 65535 is undefined: no reference
    test(`gamma ${g} gain ${k} on ${input.stem}: CPU and GPU equal skimage.exposure.adjust_gamma`, async (t) => {
      const img = await readImage(input.path);
      const skimage = await readImage(want);
      // float32: exact against the formula with glibc's powf; skimage's own file may differ by one ulp where numpy
      // used SVML's power (AVX-512 CPUs, as the machine that made the fixtures) — see the fixture script.
      const expected = img.dtype === 'float32' ? await readImage(want.replace('.npy', '_powf.npy')) : skimage;
      const cpu = (await gamma(img, { gamma: g, gain: k })).output;
      assertSame(cpu, expected, 'cpu');
      if (img.dtype === 'float32') assert.ok(compareWithin(cpu, skimage, 1.2e-7).identical, 'cpu within one ulp of skimage');
      const gpu = await gpuOrSkip(t);
      if (!gpu) return;
      const out = (await gamma(img, { gamma: g, gain: k, gpu })).output;
      if (img.dtype === 'float32') {
        const c = compareWithin(out, expected, GPU_F32_TOLERANCE);
        assert.ok(c.identical, `gpu f32: max |diff| ${c.maxAbsDiff}`);
      } else {
        assertSame(out, expected, 'gpu');
      }
    });
  }
}

test('GPU == CPU on odd sizes, colour and 16-bit, on the worker pool; a GpuImage stays resident', async (t) => {
  const pool = new NodeWorkerPool(2);
  try {
    const rgb = imageFrom(randomBytes(37 * 29 * 3, 5), [29, 37], 3);
    const u16 = imageFrom(randomU16(31 * 17, 6), [17, 31]);
    for (const img of [rgb, u16]) {
      const cpu = (await gamma(img, { gamma: 0.7, gain: 0.9, pool })).output;
      const gpu = await gpuOrSkip(t);
      if (!gpu) continue;
      assertSame((await gamma(img, { gamma: 0.7, gain: 0.9, gpu })).output, cpu, `${img.dtype}×${img.channels} host`);
      const dev = await GpuImage.upload(gpu, img);
      const r = await gamma(dev, { gamma: 0.7, gain: 0.9 });
      assert.ok(r.output instanceof GpuImage);
      assertSame(await r.output.toHost(), cpu, `${img.dtype}×${img.channels} resident`);
      r.output.release();
      dev.release();
    }
  } finally {
    await pool.close();
  }
});

test('work beyond the binding limit is split and equals the CPU (8-bit LUT and float32 kernel)', async (t) => {
  const gpu = await gpuWithBindingLimit(t, 4096);
  if (!gpu) return;
  const u8 = imageFrom(randomBytes(301 * 97, 9), [97, 301]);
  const f32 = imageFrom(Float32Array.from(randomBytes(211 * 53, 3), (v) => v / 255), [53, 211]);
  for (const img of [u8, f32]) {
    const r = await gamma(img, { gamma: 1.8, gpu });
    assert.ok((r.timings.slabs ?? 1) > 2, `${img.dtype}: ${r.timings.slabs} pieces`);
    const cpu = (await gamma(img, { gamma: 1.8 })).output;
    const c = compareWithin(r.output, cpu, img.dtype === 'float32' ? GPU_F32_TOLERANCE : 0);
    assert.ok(c.identical, `${img.dtype}: max |diff| ${c.maxAbsDiff}`);
  }
});

test('bad input is refused before any work, as skimage refuses it: negative values, gamma < 0', async (t) => {
  const negative = await readImage(fixture('images', 'camera_f32.npy')); // has values below 0
  await assert.rejects(gamma(negative, { gamma: 2 }), InvalidArgumentError);
  const gpu = await gpuOrSkip(t);
  if (gpu) await assert.rejects(gamma(negative, { gamma: 2, gpu }), InvalidArgumentError);
  const img = imageFrom(new Uint8Array(4), [2, 2]);
  await assert.rejects(gamma(img, { gamma: -1 }), /gamma must be ≥ 0/);
});

test('imgpu gamma as a process: the file equals skimage; pipeline and batch include it; errors are one line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-gamma-'));
  try {
    const out = join(dir, 'camera.png');
    const r = cli('gamma', fixture('images', 'camera.png'), out, '--gamma', '0.5', '--device', 'both');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /identical/);
    const p = cli('pipeline', fixture('images', 'camera.png'), join(dir, 'p.png'), 'gamma --gamma 0.5 | gamma --gamma 1');
    assert.equal(p.status, 0, p.stderr);
    const b = cli('gamma', fixture('images', 'camera.png'), fixture('images', 'moon.png'), join(dir, 'batch') + '/', '--gamma', '2.2', '--quiet');
    assert.equal(b.status, 0, b.stderr);
    assertOneLineError(cli('gamma', fixture('images', 'camera.png'), out, '--gamma', '-2'), 2, /gamma must be ≥ 0/);
    const want = await readImage(ref('camera', 0.5, 1, 'png'));
    assertSame(await readImage(out), want, 'cli');
    // skimage 0.19's gamma 1 truncates (v/255)·255 and so is no identity on 8-bit data: the chain's file is both
    // skimage steps, which differs from either step alone (a dropped step fails).
    const chain = pythonArrays("from skimage import exposure\nO['p'] = exposure.adjust_gamma(exposure.adjust_gamma(I['src'], 0.5), 1)",
      { src: await readImage(fixture('images', 'camera.png')) }).p;
    assertSame(await readImage(join(dir, 'p.png')), chain, 'pipeline');
    const moon = (await gamma(await readImage(fixture('images', 'moon.png')), { gamma: 2.2 })).output;
    assertSame(await readImage(join(dir, 'batch', 'moon.png')), moon, 'batch');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

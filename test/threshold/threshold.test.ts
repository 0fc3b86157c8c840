import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { download, readbackCount } from '../../src/core/gpu/transfer.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { HISTOGRAM_METHODS } from '../../src/ops/histogram/index.js';
import { isodataOfWindow } from '../../src/ops/threshold/adaptive-kernels.js';
import { isodataThreshold, otsuThreshold } from '../../src/ops/threshold/global.js';
import { gaussianKernel, gaussThresholdRows } from '../../src/ops/threshold/local-kernels.js';
import { threshold, type ThresholdOptions, type ThresholdResult } from '../../src/ops/threshold/index.js';
import { runOperation } from '../../src/core/op.js';
import { otsuKernelCompiled, otsuKernelReady } from '../../src/ops/threshold/gpu.js';
import { otsuWgsl } from '../../src/ops/threshold/otsu.wgsl.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { isodataWindowReference } from '../helpers/window-reference.js';
import { pythonArrays } from '../helpers/python.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REF = JSON.parse(readFileSync(fixture('threshold', 'thresholds.json'), 'utf8')) as Record<string, { otsu: number; isodata: number; isodata_all: number[] }>;
const PHOTOS = ['camera', 'coins', 'page', 'moon'];

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} pixels differ (first at ${c.firstMismatch})`);
}

test('hand-computed: bimodal histogram, constant image, isodata tie rule', () => {
  const h = new Uint32Array(256);
  h[10] = 50; h[200] = 50;
  assert.equal(otsuThreshold(h), 10, 'OpenCV keeps the first maximum: every t in [10, 199] separates equally');
  // isodata: mean_low(t) = 10, mean_high = 200 for t in [10, 199]; (10 + 200) / 2 = 105 → the only fixed point.
  assert.equal(isodataThreshold(h), 105);
  const c = new Uint32Array(256);
  c[77] = 9;
  assert.equal(otsuThreshold(c), 0, 'constant image: no valid split, OpenCV returns 0');
  assert.equal(isodataThreshold(c), 77, 'constant image: skimage returns the value');
});

for (const name of PHOTOS) {
  test(`${name}: Otsu equals cv2 THRESH_OTSU (value and image), isodata equals skimage — CPU and GPU`, async (t) => {
    const img = await readImage(fixture('images', `${name}.png`));
    const refImg = await readImage(fixture('threshold', `${name}_otsu.png`));
    const cpu = await threshold(img, { method: 'otsu' });
    assert.equal(cpu.threshold, REF[name].otsu);
    assertSame(cpu.output, refImg, 'cpu otsu');
    const iso = await threshold(img, { method: 'isodata' });
    assert.equal(iso.threshold, REF[name].isodata);
    assert.equal(iso.output.data.filter((v) => v === 255).length, img.data.filter((v) => v > REF[name].isodata).length);
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    for (const hist of HISTOGRAM_METHODS) {
      const g: { threshold?: number; output: Image } = await threshold(img, { method: 'otsu', gpu, hist });
      assert.equal(g.threshold, REF[name].otsu, `gpu otsu (${hist})`);
      assertSame(g.output, refImg, `gpu otsu (${hist})`);
      const gi: { threshold?: number; output: Image } = await threshold(img, { method: 'isodata', gpu, hist });
      assert.equal(gi.threshold, REF[name].isodata, `gpu isodata (${hist})`);
      assertSame(gi.output, iso.output, `gpu isodata (${hist})`);
    }
  });
}

test('GPU Otsu (software doubles on the device) equals the CPU (OpenCV double) on random and skewed images, 8- and 16-bit', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  await otsuKernelCompiled(gpu); // the device kernel, not the steps a first call may take while it compiles
  for (let s = 1; s <= 12; s++) {
    const [h, w] = [17 + s * 13, 29 + s * 7];
    const data = randomBytes(h * w, s, 40 + s * 17);
    if (s % 3 === 0) for (let i = 0; i < data.length; i += 3) data[i] = 250; // a second mode: a plateau of equal σ
    const img = imageFrom(data, [h, w]);
    const cpu = await threshold(img);
    const g: { threshold?: number; output: Image } = await threshold(img, { gpu });
    assert.equal(g.threshold, cpu.threshold, `seed ${s}`);
    assertSame(g.output, cpu.output, `seed ${s}`);
  }
  const u16 = imageFrom(randomU16(300 * 200, 9, 50000), [300, 200]);
  const c16 = await threshold(u16);
  const g16 = await threshold(u16, { gpu });
  assert.equal(g16.threshold, c16.threshold, '16-bit otsu');
  assertSame(g16.output, c16.output, '16-bit otsu');
  assert.ok(g16.output.data.every((v) => v === 0 || v === 65535));
  const gi16 = await threshold(u16, { gpu, method: 'isodata' });
  assert.equal(gi16.threshold, (await threshold(u16, { method: 'isodata' })).threshold, '16-bit isodata');
});

test('Otsu ties: CPU and GPU pick cv2 THRESH_OTSU\'s bin on 200 histograms of exact and near ties, np.arange(0, 181, 3) first (issue 24 item 14)', async (t) => {
  const pixels = (await readImage(fixture('threshold', 'otsu-ties-pixels.npy'))).data as Uint8Array;
  const rows = (await readImage(fixture('threshold', 'otsu-ties-cv2.npy'))).data;
  const gpu = await gpuOrSkip(t);
  if (gpu) await otsuKernelCompiled(gpu);
  const mismatches: string[] = [];
  for (let k = 0; k < rows.length; k += 3) {
    const [at, n, want] = [rows[k], rows[k + 1], rows[k + 2]];
    const img = imageFrom(pixels.slice(at, at + n), [1, n]);
    const cpu = (await threshold(img)).threshold;
    const g = gpu ? (await threshold(img, { gpu })).threshold : want;
    if (cpu !== want || g !== want) mismatches.push(`case ${k / 3}: cv2 ${want}, CPU ${cpu}, GPU ${g}`);
  }
  assert.deepEqual(mismatches, []);
});

test('GPU Otsu = CPU (OpenCV double) on 300 random histograms: sparse, skewed, few-valued, huge counts', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const mismatches: string[] = [];
  for (let s = 1; s <= 300; s++) {
    const r = randomBytes(64, s);
    const n = 1 + (r[0] % 7 === 0 ? 4000 : r[1] * 3); // mostly small images: ties are likelier
    const levels = 1 + (r[2] % 12);
    const data = randomBytes(n, s + 1000, levels);
    for (let i = 0; i < n; i++) data[i] = r[8 + data[i]] ^ (s % 5 === 0 ? (data[i] & 1) : 0);
    const img = imageFrom(data, [1, n]);
    const cpu = (await threshold(img)).threshold;
    const g = (await threshold(img, { gpu })).threshold;
    if (g !== cpu) mismatches.push(`seed ${s}: CPU ${cpu}, GPU ${g}`);
  }
  assert.deepEqual(mismatches, []);
});

/** The Otsu kernel alone on a 256-bin histogram: [threshold, path (0 fast, 1 exact software doubles)]. */
async function otsuKernel(gpu: GpuContext, hist: Uint32Array): Promise<[number, number]> {
  const pipeline = await gpu.pipeline('otsu', otsuWgsl, 'main');
  const make = (size: number, usage: number) => gpu.device.createBuffer({ size, usage });
  const histBuf = make(1024, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
  const lut = make(1024, GPUBufferUsage.STORAGE);
  const result = make(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const params = make(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  try {
    gpu.device.queue.writeBuffer(histBuf, 0, hist as Uint32Array<ArrayBuffer>);
    gpu.device.queue.writeBuffer(params, 0, new Uint32Array([hist.reduce((a, b) => a + b, 0), 256, 1, 255]));
    const enc = gpu.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    const entries = [histBuf, lut, result, params].map((buffer, binding) => ({ binding, resource: { buffer } }));
    pass.setBindGroup(0, gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
    pass.dispatchWorkgroups(1);
    pass.end();
    gpu.device.queue.submit([enc.finish()]);
    const r = await download(gpu, result, new Uint32Array(4));
    return [r[0], r[1]];
  } finally {
    for (const b of [histBuf, lut, result, params]) b.destroy();
  }
}

/** 400 histograms: random counts, plateaus (exact ties) and nudged ones, huge totals, skip-boundary classes. */
function otsuHistograms(): { what: string; hist: Uint32Array }[] {
  const out: { what: string; hist: Uint32Array }[] = [];
  for (let s = 1; s <= 400; s++) {
    const r = randomBytes(300, s + 5000);
    const hist = new Uint32Array(256);
    const kind = s % 5;
    if (kind === 0) { // random counts over a random support, some sparse
      for (let i = r[0]; i <= Math.min(255, r[0] + r[1]); i++) hist[i] = r[i % 256 + 2] % 4 === 0 && s % 2 ? 0 : r[i % 256 + 20] * (1 + (s % 7) * 1000);
    } else if (kind === 1) { // two or three values: a plateau of equal σ, or one nudged by a pixel
      const a = r[0] % 200, b = a + 1 + (r[1] % 50), n = 1 + r[2] * (s % 3 === 0 ? 100000 : 1);
      hist[a] = n;
      hist[b] = n * (1 + (r[3] % 3));
      if (s % 2) hist[(b + 1 + (r[4] % 10)) % 256] += 1 + (r[5] % 3);
    } else if (kind === 2) { // huge totals: pixels in low bins that OpenCV skips (its μ1 drops them), near ties
      for (let i = 30; i < 256; i++) hist[i] = 100000 + r[i] * 1000;
      const skipped = Math.floor(0.9 * hist.reduce((a, b) => a + b, 0) * 2 ** -23);
      hist[1 + (r[0] % 29)] = skipped >> 1;
      hist[1 + (r[1] % 29)] += skipped - (skipped >> 1);
    } else if (kind === 3) { // a class of exactly / about N·FLT_EPSILON pixels: the skip boundary
      const c = 1 + (r[0] % 8), off = (s % 3) - 1;
      hist[r[1] % 50] = c;
      hist[100 + (r[2] % 100)] = c * (2 ** 23) - c + off * (1 + (r[3] % 50));
      hist[220] = 0;
    } else { // few-valued random images: near ties
      const levels = 2 + (r[0] % 6);
      for (let i = 0; i < levels; i++) hist[r[i + 1]] += 1 + r[i + 10] % (s % 3 === 0 ? 3 : 40);
    }
    out.push({ what: `seed ${s} (kind ${kind})`, hist });
  }
  return out;
}

test('GPU Otsu takes the fast path only where it is OpenCV\'s bin: both paths run, and GPU = CPU on 400 histograms', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const rnd = new Uint32Array(256);
  randomBytes(256, 77).forEach((v, i) => { rnd[i] = v; });
  assert.deepEqual(await otsuKernel(gpu, rnd), [otsuThreshold(rnd), 0], 'a random histogram: fast path');
  const arange = new Uint32Array(256);
  for (let v = 0; v <= 180; v += 3) arange[v] = 1;
  assert.deepEqual(await otsuKernel(gpu, arange), [90, 1], 'np.arange(0, 181, 3): near tie, exact path, cv2\'s 90');
  const constant = new Uint32Array(256);
  constant[7] = 1000;
  assert.deepEqual(await otsuKernel(gpu, constant), [0, 0], 'constant: no valid bin, 0 on the fast path');
  const paths = [0, 0];
  const mismatches: string[] = [];
  for (const { what, hist } of otsuHistograms()) {
    const [g, path] = await otsuKernel(gpu, hist);
    paths[path]++;
    if (g !== otsuThreshold(hist)) mismatches.push(`${what}: CPU ${otsuThreshold(hist)}, GPU ${g} (path ${path})`);
  }
  assert.deepEqual(mismatches, []);
  assert.ok(paths[0] > 100 && paths[1] > 50, `both paths taken: fast ${paths[0]}, exact ${paths[1]}`);
});

test('a resident GpuImage is thresholded on the device and stays there', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await readImage(fixture('images', 'coins.png'));
  const dev = await GpuImage.upload(gpu, img);
  for (const method of ['otsu', 'isodata'] as const) {
    const r = await threshold(dev, { method });
    assert.ok(r.output instanceof GpuImage);
    assert.equal(r.threshold, REF.coins[method]);
    assertSame(await r.output.toHost(), (await threshold(img, { method })).output, method);
    r.output.release();
  }
  dev.release();
});

test('8-bit Otsu runs as steps (device histogram, host threshold) until its kernel is compiled, then as the kernel; the same result either way; without extras (batch, pipelines) the compile is not started', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const img = await readImage(fixture('images', 'coins.png'));
  const want = await threshold(img, { method: 'otsu' });
  const kernelsOf = (r: ThresholdResult<Image>) => r.timings.kernels.map((k) => k.name);
  const fresh = await createNodeGpuContext();
  try {
    assert.equal(otsuKernelReady(fresh), false, 'a new context has not compiled it; asking starts the compile');
    const first = await threshold(img, { gpu: fresh, method: 'otsu', profile: true });
    assert.equal(first.threshold, want.threshold);
    assertSame(first.output, want.output, 'while compiling (or just after)');
    await otsuKernelCompiled(fresh);
    assert.equal(otsuKernelReady(fresh), true);
    const after = await threshold(img, { gpu: fresh, method: 'otsu', profile: true });
    assert.ok(kernelsOf(after).includes('threshold.otsu'), `the kernel once compiled: ${kernelsOf(after).join(', ')}`);
    assert.equal(after.threshold, want.threshold);
    assertSame(after.output, want.output, 'the kernel');
  } finally {
    fresh.destroy();
  }
  const other = await createNodeGpuContext();
  try {
    // A batch neither waits for the compile nor starts it (a process that started it waits for it at exit).
    const batchLike = await runOperation(threshold.op, img, { method: 'otsu' }, { gpu: other, extras: false, profile: true });
    assert.ok(!kernelsOf(batchLike).includes('threshold.otsu'), `no extras: the steps, not the kernel: ${kernelsOf(batchLike).join(', ')}`);
    assertSame(batchLike.output, want.output, 'no extras, steps');
    assert.equal(otsuKernelReady(other, false), false, 'no extras: the compile was not started');
    await otsuKernelCompiled(other);
    const compiled = await runOperation(threshold.op, img, { method: 'otsu' }, { gpu: other, extras: false, profile: true });
    assert.ok(kernelsOf(compiled).includes('threshold.otsu'), 'no extras, once compiled: the kernel');
    assertSame(compiled.output, want.output, 'no extras, kernel');
  } finally {
    other.destroy();
  }
});

test('the global thresholds\' GPU steps write in place over a resident input given up (RunOptions.inPlace), as Otsu\'s kernel does', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await readImage(fixture('images', 'coins.png'));
  // isodata always runs as steps; Otsu does while its kernel compiles (the same histogram → host threshold → LUT).
  const want = await threshold(img, { method: 'isodata' });
  const resident = await GpuImage.upload(gpu, img);
  const apart = await runOperation(threshold.op, resident, { method: 'isodata' }, { extras: false });
  assert.notEqual(apart.output, resident, 'not in place unless asked');
  assertSame(await apart.output.toHost(), want.output, 'apart');
  apart.output.release();
  const over = await runOperation(threshold.op, resident, { method: 'isodata' }, { extras: false, inPlace: true });
  assert.equal(over.output, resident, 'the input is the output');
  assertSame(await resident.toHost(), want.output, 'in place');
  resident.release();
});

test('extras: false (batch, pipelines): GPU Otsu reads nothing back, the image is the same; by default the threshold is read', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await readImage(fixture('images', 'coins.png'));
  const dev = await GpuImage.upload(gpu, img);
  const before = readbackCount(gpu);
  const r = await runOperation(threshold.op, dev, { method: 'otsu' }, { extras: false, wait: false, profile: false });
  assert.equal(readbackCount(gpu), before, 'no readback for the threshold');
  assert.equal(r.threshold, undefined, 'not read, not returned');
  assertSame(await r.output.toHost(), (await threshold(img, { method: 'otsu' })).output, 'the image');
  r.output.release();
  const counted = readbackCount(gpu);
  const d = await runOperation(threshold.op, dev, { method: 'otsu' }, { wait: false, profile: false });
  assert.equal(readbackCount(gpu), counted + 1, 'by default the threshold is read back');
  assert.equal(d.threshold, REF.coins.otsu);
  d.output.release();
  dev.release();
});

test('bad input: float images and unknown methods are typed errors', async () => {
  await assert.rejects(threshold(imageFrom(new Float32Array(4), [2, 2])), /supports uint8 and uint16/);
  await assert.rejects(threshold(imageFrom(new Uint8Array(4), [2, 2]), { method: 'magic' as never }), /method must be one of/);
});

const LOCAL_CASES: [name: string, window: number, offset: number][] = [['page', 11, 2], ['page', 25, 5], ['camera', 15, 3], ['coins', 31, -4]];
for (const method of ['mean', 'gaussian'] as const) {
  test(`${method}: equals cv2.adaptiveThreshold(ADAPTIVE_THRESH_${method.toUpperCase()}_C) on real images, CPU and GPU`, async (t) => {
    const gpu = await gpuOrSkip(t);
    for (const [name, window, offset] of LOCAL_CASES) {
      const img = await readImage(fixture('images', `${name}.png`));
      const ref = await readImage(fixture('threshold', `${name}_${method}_${window}_${offset}.png`));
      const cpu = await threshold(img, { method, window, offset });
      assert.equal(cpu.threshold, undefined);
      assertSame(cpu.output, ref, `cpu ${name} ${window} ${offset}`);
      if (gpu) assertSame((await threshold(img, { method, window, offset, gpu })).output, ref, `gpu ${name} ${window} ${offset}`);
    }
  });
}

test('mean and gaussian: equal cv2.adaptiveThreshold (BORDER_REPLICATE, the one border it and imgpu have) run now, on photos at their real sizes — 512×512, 303×384, odd 301×256 and 29×45 — windows up to larger than the image, fractional and negative offsets, CPU and GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  const cases: [name: string, window: number, offset: number][] = [['camera', 21, 1.5], ['coins', 101, 4], ['camera_301x256', 9, -2.5], ['camera_301x256', 45, 0], ['cat_29x45', 51, 3], ['cat_29x45', 3, -0.25]];
  const images = Object.fromEntries(await Promise.all([...new Set(cases.map(([n]) => n))].map(async (n) => [n, await readImage(fixture('images', `${n}.png`))] as const)));
  const calls = cases.flatMap(([name, window, offset], i) => (['mean', 'gaussian'] as const).map((m) =>
    `O['${m}${i}'] = cv2.adaptiveThreshold(I['${name}'], 255, cv2.ADAPTIVE_THRESH_${m.toUpperCase()}_C, cv2.THRESH_BINARY, ${window}, ${offset})`));
  const refs = pythonArrays(calls.join('\n'), images);
  for (const [i, [name, window, offset]] of cases.entries()) {
    for (const method of ['mean', 'gaussian'] as const) {
      const what = `${method} ${name} window ${window} offset ${offset}`;
      assertSame((await threshold(images[name], { method, window, offset })).output, refs[`${method}${i}`], `cpu ${what}`);
      if (gpu) assertSame((await threshold(images[name], { method, window, offset, gpu })).output, refs[`${method}${i}`], `gpu ${what}`);
    }
  }
});

test('gaussian on low-contrast noise (blur values within a float32 step of x.5): CPU and GPU = cv2.adaptiveThreshold, windows 11–101 (issue 24 item 15)', async (t) => {
  const [h, w] = [300, 320];
  const noise = randomBytes(w * h, 15, 4).map((v) => 181 + v);
  const img = imageFrom(noise, [h, w]);
  const gpu = await gpuOrSkip(t);
  for (const k of [11, 15, 31, 101]) {
    const bits = (await readImage(fixture('threshold', `gauss-noise-k${k}-bits.npy`))).data;
    const want = new Uint8Array(w * h).map((_, i) => ((bits[(i / w | 0) * (w / 8) + ((i % w) >> 3)] >> (7 - (i & 7))) & 1) * 255);
    const ref = imageFrom(want, [h, w]);
    assertSame((await threshold(img, { method: 'gaussian', window: k })).output, ref, `CPU, window ${k}`);
    if (gpu) assertSame((await threshold(img, { method: 'gaussian', window: k, gpu })).output, ref, `GPU, window ${k}`);
  }
});

test('local thresholds: GPU equals CPU on odd sizes, windows larger than the image; bad windows are typed errors', async (t) => {
  const gpu = await gpuOrSkip(t);
  for (const [i, shape] of ([[1, 1], [3, 7], [13, 29], [70, 33]] as [number, number][]).entries()) {
    const img = imageFrom(randomBytes(shape[0] * shape[1], i + 7), shape);
    for (const method of ['mean', 'gaussian'] as const) {
      for (const window of [3, 9, 15, 101]) {
        const cpu = await threshold(img, { method, window, offset: 1.5 });
        if (gpu) assertSame((await threshold(img, { method, window, offset: 1.5, gpu })).output, cpu.output, `${method} ${shape} ${window}`);
      }
    }
  }
  const img = imageFrom(randomBytes(100, 3), [10, 10]);
  await assert.rejects(threshold(img, { method: 'mean', window: 10 }), /window must be odd/);
  await assert.rejects(threshold(img, { method: 'mean', window: 1 }), /window must be ≥ 3/);
  await assert.rejects(threshold(imageFrom(new Uint16Array(100), [10, 10]), { method: 'gaussian' }), /8-bit/);
  await assert.rejects(threshold(imageFrom(new Uint8Array(200), [2, 10, 10] as never), { method: 'mean' }), /2D images/);
});

test('adaptive: the exact window rule reproduces skimage isodata on whole-image histograms', async () => {
  for (const name of PHOTOS) {
    const img = await readImage(fixture('images', `${name}.png`));
    const hist = new Uint32Array(256);
    for (const v of img.data) hist[v]++;
    assert.equal(isodataOfWindow(hist, 0, -1), REF[name].isodata, name);
  }
});

test('adaptive: CPU (sliding histogram) and GPU (sliding and naive) equal an independent per-pixel numpy reference (and skimage\'s global isodata as the fallback), on real photos at their sizes and odd crops', async (t) => {
  const gpu = await gpuOrSkip(t);
  const coins = await readImage(fixture('images', 'coins.png'));
  const crop = imageFrom(coins.data.slice(0, 120 * 384), [120, 384]);
  const cases = ([
    [coins, 31, 15], [await readImage(fixture('images', 'camera_301x256.png')), 15, 10], [await readImage(fixture('images', 'cat_29x45.png')), 9, 5],
    [crop, 15, 15], [crop, 31, 40], [imageFrom(randomBytes(23 * 41, 4), [23, 41]), 7, 0], [imageFrom(randomBytes(9 * 5, 6, 30), [9, 5]), 21, 10],
  ] as const).map(([img, window, contrast]) => ({ img, window, contrast }));
  // window_reference.py: every pixel's border-clipped window histogram counted whole, the documented rule in exact integers.
  const refs = isodataWindowReference(cases);
  for (const [i, { img, window, contrast }] of cases.entries()) {
    const what = `${img.shape.join('×')} window ${window} contrast ${contrast}`;
    const cpu = await threshold(img, { method: 'adaptive', window, contrast });
    assert.equal(cpu.fallback, refs[i].fallback, `fallback (skimage threshold_isodata) ${what}`);
    assertSame(cpu.output, refs[i].output, `cpu ${what}`);
    if (!gpu) continue;
    for (const scheme of ['sliding', 'naive'] as const) {
      const g: { output: Image; fallback?: number } = await threshold(img, { method: 'adaptive', window, contrast, gpu, scheme });
      assert.equal(g.fallback, refs[i].fallback);
      assertSame(g.output, refs[i].output, `gpu ${scheme} ${what}`);
    }
  }
});

test('adaptive: uniform windows fall back to the global threshold; bad windows are typed errors', async () => {
  const flat = imageFrom(new Uint8Array(400).fill(90), [20, 20]);
  const r = await threshold(flat, { method: 'adaptive', window: 5 });
  assert.equal(r.fallback, 90);
  assert.ok(r.output.data.every((v) => v === 0), 'a constant image has no foreground');
  // Two flat halves, a step between: far from the step the windows are flat and follow the global threshold.
  const step = imageFrom(new Uint8Array(400).map((_, i) => (i % 20 < 10 ? 40 : 200)), [20, 20]);
  const s = await threshold(step, { method: 'adaptive', window: 5 });
  assert.equal(s.fallback, 120);
  assert.equal(s.output.data[0], 0);
  assert.equal(s.output.data[19], 255);
  await assert.rejects(threshold(step, { method: 'adaptive', window: 257 }), /window must be ≤ 255|≤ 2047/);
  await assert.rejects(threshold(step, { method: 'adaptive', window: 4 }), /window must be odd/);
});

test('every method honours a caller\'s out image on the CPU and the GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  const img = await readImage(fixture('images', 'coins.png'));
  for (const method of ['otsu', 'isodata', 'adaptive', 'mean', 'gaussian'] as const) {
    const expected = (await threshold(img, { method })).output;
    for (const on of gpu ? [{}, { gpu }] : [{}]) {
      const out = imageFrom(new Uint8Array(img.data.length), img.shape as [number, number]);
      const r = await threshold(img, { method, out, ...on });
      assert.equal(r.output, out, `${method} returns out`);
      assertSame(out, expected, `${method} ${'gpu' in on ? 'gpu' : 'cpu'}`);
    }
  }
  await assert.rejects(threshold(img, { out: imageFrom(new Uint8Array(4), [2, 2]) }), /out image is 2×2/);
});

test('gaussian: the generated CPU passes equal the generic loops bit for bit (windows 3–31, offsets, noise and a photo)', async () => {
  const photo = await readImage(fixture('images', 'camera_301x256.png'));
  const noise = randomBytes(301 * 256, 11);
  for (const src of [photo.data as Uint8Array, noise]) {
    for (const win of [3, 5, 7, 9, 11, 15, 21, 31]) {
      for (const off of [-7, 0, 2, 5]) {
        const kernel = gaussianKernel(win);
        const a = new Uint8Array(src.length), b = new Uint8Array(src.length);
        gaussThresholdRows({ src, w: 301, h: 256, kernel, idelta: off, maxv: 255, dst: a, start: 0, end: 256 });
        gaussThresholdRows({ src, w: 301, h: 256, kernel, idelta: off, maxv: 255, dst: b, start: 0, end: 256, generate: false });
        assert.ok(Buffer.from(a).equals(Buffer.from(b)), `window ${win}, offset ${off}`);
      }
    }
  }
});

test('images beyond one storage binding: global methods in ranges, local ones in row slabs with the window as halo (GPU equals CPU)', async (t) => {
  // 64 KiB bindings: camera (512×512) takes 4 ranges of pixels, and the local methods' u32-per-pixel buffers
  // row slabs of 32 rows (halos included).
  const gpu = await gpuWithBindingLimit(t, 64 << 10);
  if (!gpu) return;
  const img = await readImage(fixture('images', 'camera.png'));
  const cases = [
    { method: 'otsu' }, { method: 'isodata' }, { method: 'isodata', hist: 'subhist' },
    { method: 'mean', window: 11 }, { method: 'gaussian', window: 21, offset: 3 }, { method: 'mean', window: 31 },
    { method: 'adaptive', window: 15 }, { method: 'adaptive', window: 9, scheme: 'naive' },
  ] as const;
  for (const c of cases) {
    const cpu = await threshold(img, c);
    const r = await threshold(img, { ...c, gpu });
    assert.ok((r.timings.slabs ?? 1) > 1, `${JSON.stringify(c)}: split`);
    assertSame(r.output, cpu.output, JSON.stringify(c));
    const dev = await GpuImage.upload(gpu, img);
    const res = await threshold(dev, c);
    assertSame(await res.output.toHost(), cpu.output, `${JSON.stringify(c)} resident`);
    res.output.release();
    dev.release();
  }
});

test('options: the derived ThresholdOptions as a user writes it; impl and its old name hist pick the GPU histogram (API)', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const opts: ThresholdOptions = { method: 'isodata', impl: 'subhist', window: 15, contrast: 10, scheme: 'naive', offset: 1.5 };
  // @ts-expect-error: the derived type knows the methods
  const badMethod: ThresholdOptions = { method: 'magic' };
  // @ts-expect-error: and the histogram algorithms, under the old name too
  const badHist: ThresholdOptions = { hist: 'sorted' };
  assert.ok(badMethod && badHist);
  const r: { threshold?: number; fallback?: number; output: Image } = await threshold(img, opts);
  assert.equal(r.threshold, REF.coins.isodata);
  await assert.rejects(threshold(img, { hist: 'sorted' as never }), /impl\/hist must be one of atomic\|subhist/);
  await assert.rejects(threshold(img, { impl: 'atomic', hist: 'subhist' }), /impl and hist \(another name for it\) are both given/);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const on of [{ impl: 'subhist' }, { hist: 'subhist' }] as const) {
    const g: ThresholdResult<Image> = await threshold(img, { method: 'isodata', gpu, profile: true, ...on });
    assert.equal(g.threshold, REF.coins.isodata);
    assert.ok(g.timings.kernels.some((k) => k.name.startsWith('histogram.subhist')), `${JSON.stringify(on)}: ${g.timings.kernels.map((k) => k.name)}`);
  }
});

test('CLI: --impl and its old name --hist; the JSON params name impl', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-threshold-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const flag of ['--impl', '--hist']) {
    const r = cli('threshold', fixture('images', 'coins.png'), join(dir, 'o.png'), '--method', 'isodata', flag, 'subhist', '--device', 'cpu', '--json');
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.params.impl, 'subhist', flag);
    assert.equal(j.threshold, REF.coins.isodata, flag);
  }
  assertOneLineError(cli('threshold', fixture('images', 'coins.png'), join(dir, 'o.png'), '--hist', 'sorted'), 2, /impl\/hist must be one of/);
  assertOneLineError(cli('threshold', fixture('images', 'coins.png'), join(dir, 'o.png'), '--impl', 'atomic', '--hist', 'subhist'), 2, /both given/);
});

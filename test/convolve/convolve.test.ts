import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { convolve, correlate, DEFAULT_CONV_SCHEDULE, denseKernel, filter, separableKernel, type ConvImpl, type ConvSchedule, type FilterOptions } from '../../src/ops/convolve/index.js';
import { ALL_OPERATIONS } from '../../src/ops/registry.js';
import { runOperation } from '../../src/core/op.js';
import { fixture, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { pythonArrays } from '../helpers/python.js';

const TOL = 1e-5;
const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const load = (name: string) => readImage(fixture('convolve', `${name}.npy`));

function assertClose(got: Image, want: Image, what: string): void {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  const c = compareWithin(got, want, TOL);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements beyond ±${c.tolerance} (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

type Case = [input: 'img2d' | 'vol3d', ref: string, run: (img: Image, o: FilterOptions) => Promise<{ output: Image }>, impls: ConvImpl[]];
const SEP: ConvImpl[] = ['naive', 'tiled', 'separable', 'fused'];
const DENSE: ConvImpl[] = ['naive', 'tiled'];
const f = (spec: string, extra: FilterOptions = {}) => (img: Image, o: FilterOptions) => filter(img, spec, { ...o, ...extra });
const withKernel = (name: string, op: typeof correlate, extra: FilterOptions, anchor?: number[]) => async (img: Image, o: FilterOptions) => {
  const k = await load(name);
  return op(img, denseKernel(k.data, [...k.shape], anchor), { ...o, ...extra });
};
const MODES = ['reflect', 'reflect101', 'replicate', 'wrap', 'constant'] as const;

// References: scripts/make_convolution_fixtures.py (scipy.ndimage and OpenCV 4.6 on real data).
const CASES: Case[] = [
  ...MODES.map((m): Case => ['img2d', `sp2-sobel-x-${m}`, f('sobel-x', { border: m }), SEP]),
  ...MODES.map((m): Case => ['img2d', `sp2-correlate-${m}`, withKernel('k2d', correlate, { border: m, cval: -2 }), DENSE]),
  ['img2d', 'sp2-sobel-y-reflect', f('sobel-y'), SEP],
  ['img2d', 'sp2-prewitt-x-reflect101', f('prewitt-x', { border: 'mirror' }), SEP],
  ['img2d', 'sp2-gauss2-reflect', f('gauss:2'), SEP],
  ['img2d', 'sp2-gauss2-constant', f('gauss:2', { border: 'constant', cval: 3 }), ['separable', 'fused']],
  ['img2d', 'sp2-box5-reflect', f('box:5'), SEP],
  ['img2d', 'sp2-laplace-reflect101', f('laplace', { border: 'reflect101' }), DENSE],
  ['img2d', 'sp2-convolve-reflect', withKernel('k2d', convolve, {}), DENSE],
  ['img2d', 'sp2-correlate-even-reflect', withKernel('keven', correlate, {}, [1, 0]), DENSE],
  ['img2d', 'sp2-roberts-reflect', f('roberts'), DENSE],
  ['img2d', 'sp2-sobel-reflect', f('sobel'), SEP],
  ['img2d', 'cv2-sobel-x', f('sobel-x', { border: 'reflect101' }), SEP],
  ['img2d', 'cv2-sobel-y', f('sobel-y', { border: 'reflect101' }), SEP],
  ['img2d', 'cv2-gauss2', f('gauss:2', { border: 'reflect101' }), SEP],
  ['img2d', 'cv2-filter2d', withKernel('k2d', correlate, { border: 'reflect101' }), DENSE],
  ...MODES.map((m): Case => ['vol3d', `sp3-correlate-${m}`, withKernel('k3d', correlate, { border: m, cval: 1.5 }), DENSE]),
  ...(['x', 'y', 'z'] as const).map((a): Case => ['vol3d', `sp3-sobel-${a}-reflect`, f(`sobel-${a}`), SEP]),
  ['vol3d', 'sp3-sobel-reflect', f('sobel'), SEP],
  ['vol3d', 'sp3-prewitt-z-reflect101', f('prewitt-z', { border: 'reflect101' }), SEP],
  ['vol3d', 'sp3-gauss-reflect', f('gauss:2,1.5,0.8', { truncate: 3 }), SEP],
  ['vol3d', 'sp3-laplace-replicate', f('laplace', { border: 'nearest' }), DENSE],
];

for (const [input, ref, run, impls] of CASES) {
  const lib = ref.startsWith('cv2') ? 'OpenCV' : 'scipy.ndimage';
  test(`${ref} (${input}) equals ${lib} within ${TOL}: CPU, and GPU ${impls.join('/')}`, async (t) => {
    const img = await load(input);
    const want = await load(ref);
    assertClose((await run(img, {})).output, want, 'cpu');
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    for (const impl of impls) assertClose((await run(img, { gpu, impl })).output, want, `gpu ${impl}`);
  });
}

test('the CPU path on the worker pool equals the inline CPU path, u8 input promoted to float32', async () => {
  const img = await readImage(fixture('images', 'camera_301x256.png'), { gray: true });
  const pool = new NodeWorkerPool(4);
  try {
    for (const spec of ['sobel', 'gauss:1.5', 'laplace']) {
      const a = (await filter(img, spec)).output;
      const b = (await filter(img, spec, { pool })).output;
      assert.equal(a.dtype, 'float32');
      assert.ok(compareImages(a, b).identical, spec);
    }
  } finally {
    await pool.close();
  }
});

test('GPU == CPU on odd sizes, u8/u16/f32 inputs, every implementation and border, resident GpuImage in and out', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const [d, h, w] = [5, 23, 37];
  const f32 = new Float32Array(d * h * w).map((_, i) => Math.sin(i * 0.61) * 50 + (i % 13));
  const u16 = Uint16Array.from(f32, (v) => Math.abs(v) * 300);
  const u8 = Uint8Array.from(f32, (v) => Math.abs(v) * 3);
  for (const data of [f32, u16, u8]) {
    const img: Image = { data, shape: [d, h, w], channels: 1, dtype: data instanceof Float32Array ? 'float32' : data instanceof Uint16Array ? 'uint16' : 'uint8' };
    for (const border of [...MODES, 'valid'] as const) {
      const k = separableKernel([[1, -2, 0.5], [0.25, 1, 0, 2, 1], [3, 1, -1, 2]], [1, 2, 1]);
      // With a nonzero constant the dense definition (naive, tiled) and scipy's sequential 1-D passes
      // (separable, fused) differ near the border: each GPU implementation meets the CPU path of its kind.
      const sequential = (await correlate(img, k, { border, cval: 7 })).output;
      const dense = (await correlate(img, k, { border, cval: 7, impl: 'naive' })).output;
      for (const impl of SEP) {
        const g = (await correlate(img, k, { border, cval: 7, gpu, impl })).output;
        assertClose(g, impl === 'naive' || impl === 'tiled' ? dense : sequential, `${img.dtype} ${border} ${impl}`);
      }
    }
  }
  const img: Image = { data: f32, shape: [d, h, w], channels: 1, dtype: 'float32' };
  const up = await GpuImage.upload(gpu, img);
  const res = await filter(up, 'sobel', { gpu });
  assert.ok(res.output instanceof GpuImage);
  assertClose(await res.output.toHost(), (await filter(img, 'sobel')).output, 'resident');
  res.output.release();
  up.release();
});

test('separable: the x-y pass in workgroup memory (tile shapes with partial tiles, several rounds and z chunks), the per-axis passes and the z pass loading 1–4 planes ahead equal the CPU on odd sizes, 2D and 3D, every border', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const planes: [ConvSchedule['plane'], number][] = [[null, 1], [null, 3], [DEFAULT_CONV_SCHEDULE.plane, 2], [{ tw: 16, th: 8, cx: 4, cy: 2, zc: 2 }, 3], [{ tw: 8, th: 4, cx: 1, cy: 4, zc: 3 }, 4], [{ tw: 64, th: 16, cx: 2, cy: 2, zc: 4 }, 1]];
  // An even x kernel with its anchor and a zero y weight, as in the test above.
  const k3 = separableKernel([[1, -2, 0.5], [0.25, 1, 0, 2, 1], [3, 1, -1, 2]], [1, 2, 1]);
  const k2 = separableKernel([[0.25, 1, 0, 2, 1], [3, 1, -1, 2]], [2, 1]);
  for (const [shape, k] of [[[5, 23, 37], k3], [[29, 41], k2]] as const) {
    const f32 = new Float32Array(shape.reduce((a: number, b: number) => a * b, 1)).map((_, i) => Math.sin(i * 0.37) * 40 + (i % 11));
    const u8 = Uint8Array.from(f32, (v) => Math.abs(v) * 3);
    for (const data of [f32, u8]) {
      const img: Image = { data, shape: [...shape], channels: 1, dtype: data instanceof Float32Array ? 'float32' : 'uint8' };
      for (const border of [...MODES, 'valid'] as const) {
        const want = (await correlate(img, k, { border, cval: 7 })).output;
        for (const [plane, zdepth] of planes) {
          const got = (await correlate(img, k, { border, cval: 7, gpu, impl: 'separable', schedule: { ...DEFAULT_CONV_SCHEDULE, plane, zdepth } })).output;
          assertClose(got, want, `${shape.join('x')} ${img.dtype} ${border} ${JSON.stringify(plane)} zdepth ${zdepth}`);
        }
      }
    }
  }
});

test('slabs: a volume split along z (forced small limit) and a 2D image split along y equal the whole run bit for bit', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const vol = await load('vol3d');
  for (const [spec, border, planes] of [['sobel', 'reflect', 4], ['gauss:1,1,0.5', 'constant', 5], ['laplace', 'wrap', 4], ['box:3', 'valid', 4]] as const) {
    for (const impl of ['auto', 'separable', 'naive'] as ConvImpl[]) {
      if (impl === 'separable' && spec === 'laplace') continue;
      const whole = await filter(vol, spec, { gpu, border, impl, cval: 100 });
      const split = await filter(vol, spec, { gpu, border, impl, cval: 100, maxSlabBytes: planes * 40 * 44 * 4 });
      assert.ok((split.timings.slabs ?? 1) > 1, 'split into slabs');
      assert.ok(compareImages(split.output, whole.output).identical, `${spec} ${border} ${impl}: slabs differ`);
    }
  }
  const img = await load('img2d');
  const whole = await filter(img, 'gauss:2', { gpu });
  const split = await filter(img, 'gauss:2', { gpu, maxSlabBytes: 30 * 128 * 4 });
  assert.ok((split.timings.slabs ?? 1) > 1);
  assert.ok(compareImages(split.output, whole.output).identical, '2D slabs differ');
});

test('a volume over the adapter binding limit is processed in slabs automatically (= CPU)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  if (limit > 512 * 1024 * 1024) {
    t.skip(`this adapter binds ${limit} bytes: the software adapter in CI (128 MiB) runs this test`);
    return;
  }
  const [h, w] = [512, 512];
  const d = Math.ceil((limit / 4 + 1) / (h * w)) + 2; // float32 voxels just over the limit
  const data = new Float32Array(d * h * w);
  for (let i = 0; i < data.length; i++) data[i] = ((i * 2654435761) >>> 20) & 1023;
  const vol: Image = { data, shape: [d, h, w], channels: 1, dtype: 'float32' };
  const g = await filter(vol, 'sobel-z', { gpu });
  assert.ok((g.timings.slabs ?? 1) > 1, `a ${data.byteLength}-byte volume ran whole under a ${limit}-byte limit`);
  assertClose(g.output, (await filter(vol, 'sobel-z')).output, 'slabbed GPU vs CPU');
});

/**
 * Non-finite elements exactly where the reference has them (NaN for NaN, the same infinity), finite ones within
 * TOL of the largest finite reference value.
 */
function assertSameNonFinite(got: Image, want: Image, what: string): void {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  let max = 0;
  for (const v of want.data) if (Number.isFinite(v)) max = Math.max(max, Math.abs(v));
  const bad: string[] = [];
  for (let i = 0; i < want.data.length; i++) {
    const a = got.data[i], b = want.data[i];
    const ok = Number.isFinite(b) ? Number.isFinite(a) && Math.abs(a - b) <= TOL * max : Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
    if (!ok) bad.push(`[${i}] ${a} vs ${b}`);
  }
  assert.deepEqual(bad.slice(0, 8), [], `${what}: ${bad.length} elements differ`);
}

// scripts/make_parity_fixtures.py: scipy.ndimage on float32 inputs holding NaN, +inf and −inf (nf-in2d, nf-in3d).
const NF: [ref: string, input: 'nf-in2d' | 'nf-in3d', run: (img: Image, o: FilterOptions) => Promise<{ output: Image }>][] = [
  ['sobel-x', 'nf-in2d', f('sobel-x')], ['sobel-y', 'nf-in2d', f('sobel-y')], ['sobel', 'nf-in2d', f('sobel')],
  ['prewitt-x', 'nf-in2d', f('prewitt-x')], ['box-3x5', 'nf-in2d', f('box:3x5')], ['box-4x2', 'nf-in2d', f('box:4x2')],
  ['gauss-1', 'nf-in2d', f('gauss:1')], ['laplace', 'nf-in2d', f('laplace')],
  ['kd', 'nf-in2d', (img, o) => correlate(img, denseKernel([0, 0, 0, 1, 2, 1, 0, -1, 0], [3, 3]), o)],
  ['kr', 'nf-in2d', (img, o) => correlate(img, denseKernel([0, 0, 0, 1, 2, 1, 0, 0, 0], [3, 3]), o)],
  ['3d-sobel-z', 'nf-in3d', f('sobel-z')], ['3d-box-3x3x3', 'nf-in3d', f('box:3')],
];

test('NaN and ±inf spread as in scipy.ndimage: every weight of sobel/prewitt multiplies (0·NaN = NaN), box filters are running sums, correlate skips zero weights — CPU and every GPU implementation (issue 24 item 16)', async (t) => {
  const gpu = await gpuOrSkip(t);
  for (const [name, input, run] of NF) {
    const img = await load(input);
    for (const mode of MODES) {
      const want = await load(`nf-${name}-${mode}`);
      const o: FilterOptions = { border: mode };
      assertSameNonFinite((await run(img, o)).output, want, `CPU ${name} ${mode}`);
      if (!gpu) continue;
      for (const impl of name === 'kd' || name === 'laplace' ? DENSE : SEP) {
        assertSameNonFinite((await run(img, { ...o, gpu, impl })).output, want, `GPU ${impl} ${name} ${mode}`);
      }
      // Split into slabs of a few planes (rows): a box's running sums cross them.
      const maxSlabBytes = input === 'nf-in3d' ? 4 * 8 * 9 * 4 : 11 * 13 * 4;
      assertSameNonFinite((await run(img, { ...o, gpu, maxSlabBytes })).output, want, `GPU slabs ${name} ${mode}`);
    }
  }
});

test('the issue\'s cases: sobel-x of a 3×3 zero image with a NaN centre is all NaN; box:3x1 of a row with a NaN at x = 1 is NaN along the row', async (t) => {
  const centre: Image = { data: Float32Array.from([0, 0, 0, 0, NaN, 0, 0, 0, 0]), shape: [3, 3], channels: 1, dtype: 'float32' };
  const row: Image = { data: Float32Array.from([0, NaN, 0, 0, 0, 0, 0, 0]), shape: [1, 8], channels: 1, dtype: 'float32' };
  const runs: [string, Image, string][] = [['sobel-x', centre, 'sobel-x'], ['box', row, 'box:3x1']];
  const gpu = await gpuOrSkip(t);
  for (const [what, img, spec] of runs) {
    assert.ok((await filter(img, spec)).output.data.every(Number.isNaN), `CPU ${what}`);
    if (gpu) for (const impl of SEP) assert.ok((await filter(img, spec, { gpu, impl })).output.data.every(Number.isNaN), `GPU ${impl} ${what}`);
  }
});

test('saturate casts back to the input type as cv2 ddepth -1 (rounded half to even, clamped)', async (t) => {
  // Half-weight kernels on 8-bit data make exact .5 ties wherever the two pixels' sum is odd (about half the image),
  // and [-0.5, 0, 1.5] also leaves 0..255 on both sides: cv2.filter2D(ddepth=-1) rounds the ties half to even.
  const img = await readImage(fixture('images', 'camera.png'), { gray: true });
  const kernels: Record<string, number[]> = { half: [0.5, 0, 0.5], skew: [-0.5, 0, 1.5] };
  const want = pythonArrays(Object.keys(kernels).map((k) =>
    `O['${k}'] = cv2.filter2D(I['src'], -1, np.array([${kernels[k].join(', ')}], np.float32).reshape(1, 3), borderType=cv2.BORDER_REFLECT_101)`).join('\n'), { src: img });
  const gpu = await gpuOrSkip(t);
  for (const [name, w] of Object.entries(kernels)) {
    const k = denseKernel(w, [1, 3]), o: FilterOptions = { border: 'reflect101' };
    const exact = (await correlate(img, k, o)).output.data;
    const ties = exact.filter((v) => v % 1 === 0.5 || v % 1 === -0.5).length;
    assert.ok(ties > exact.length / 4, `${name}: only ${ties} exact .5 ties in the data`);
    if (name === 'skew') assert.ok(exact.some((v) => v < 0) && exact.some((v) => v > 255), 'skew: nothing to clamp');
    const r = (await correlate(img, k, { ...o, saturate: true })).output;
    assert.equal(r.dtype, 'uint8');
    assert.ok(compareImages(r, want[name]).identical, `CPU ${name}: ${compareImages(r, want[name]).mismatches} pixels differ from cv2.filter2D`);
    if (!gpu) continue;
    for (const impl of DENSE) {
      const g = (await correlate(img, k, { ...o, saturate: true, gpu, impl })).output;
      assert.ok(compareImages(g, want[name]).identical, `GPU ${impl} ${name}: ${compareImages(g, want[name]).mismatches} pixels differ from cv2.filter2D`);
    }
  }
});

test('uint16 box with saturate equals cv2.blur bit for bit (window sums rounded as OpenCV does), CPU and GPU (issue 24 item 15)', async (t) => {
  // scripts/make_parity_fixtures.py: cv2.blur of randomU16(127 × 131, 16); 131 % 8 = 3 columns take OpenCV's scalar tail.
  const noise: Image = { data: randomU16(127 * 131, 16), shape: [127, 131], channels: 1, dtype: 'uint16' };
  const gpu = await gpuOrSkip(t);
  // And a sum OpenCV scales in float32 to 65280 where the exact quotient rounds to 65279: 40×48 of 65535, one 382.
  const spike: Image = { data: new Uint16Array(40 * 48).fill(65535), shape: [40, 48], channels: 1, dtype: 'uint16' };
  spike.data[20 * 48 + 24] = 382;
  for (const [kw, kh, input, ref] of [[7, 11], [16, 16], [2, 2], [5, 1], [15, 17, spike, 'spike-']] as const) {
    const img = input ?? noise;
    const want = await load(`cv2-blur-u16-${ref ?? ''}${kw}x${kh}`);
    const spec = `box:${kw}x${kh}`, o: FilterOptions = { saturate: true, border: 'reflect101' };
    const cpu = (await filter(img, spec, o)).output;
    assert.equal(cpu.dtype, 'uint16');
    assert.ok(compareImages(cpu, want).identical, `CPU ${spec}: ${compareImages(cpu, want).mismatches} pixels differ`);
    if (!gpu) continue;
    for (const impl of SEP) {
      const g = (await filter(img, spec, { ...o, gpu, impl })).output;
      assert.ok(compareImages(g, want).identical, `GPU ${impl} ${spec}: ${compareImages(g, want).mismatches} pixels differ`);
    }
  }
});

test('bad kernels and parameters are typed errors before any work', async () => {
  const img = await load('img2d');
  const vol = await load('vol3d');
  assert.throws(() => denseKernel([1, 2, 3, 4], [2, 2]), /even kernel size .* needs an explicit anchor/);
  assert.throws(() => denseKernel([1, NaN, 1], [1, 3]), /weight 1 is NaN/);
  assert.throws(() => separableKernel([[1], [1, Infinity, 1]]), InvalidArgumentError);
  assert.throws(() => denseKernel([1, 2, 3], [1, 3], [0, 3]), /anchor 3 along x/);
  await assert.rejects(filter(img, 'box:200', { border: 'valid' }), /larger than the image/);
  await assert.rejects(filter(img, 'sobel-z'), /no z axis/);
  await assert.rejects(filter(img, 'gauss:1.5mm'), /millimetres needs the voxel spacing/);
  await assert.rejects(filter(img, 'blur'), /unknown filter/);
  await assert.rejects(filter(img, 'sobel', { border: 'mirrored' as never }), /border must be one of/);
  await assert.rejects(correlate(img, denseKernel(new Array(27).fill(1), [3, 3, 3])), /3D kernel .* needs a volume/);
  await assert.rejects(filter(vol, 'roberts'), /defined for 2D/);
});

test('the gradient magnitude of a DICOM series keeps its geometry; valid moves the origin by the anchor', async () => {
  const ct = await readImage(fixture('volumes', 'ct-series'));
  const r = await filter(ct, 'sobel');
  assert.deepEqual(r.output.geometry, ct.geometry);
  const v = await filter(ct, 'box:3', { border: 'valid' });
  assert.deepEqual(v.output.shape, [4, 126, 126]);
  const g = ct.geometry!;
  assert.ok(Math.abs(v.output.geometry!.origin[2] - (g.origin[2] + g.spacing[2])) < 1e-9);
  const mm = await filter(ct, 'gauss:1.3229mm'); // 2 voxels in x and y (0.661468 mm), 0.53 along z (2.5 mm)
  const vox = await filter(ct, `gauss:${g.spacing.map((s) => 1.3229 / s).join(',')}`);
  assertClose(mm.output, vox.output, 'sigma in mm');
});

test('view: the filtered image as a view of mapped memory equals the copied one', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await load('img2d');
  const copied = await filter(img, 'sobel', { gpu });
  const viewed = await runOperation(filter.op, img, { filter: 'sobel' }, { gpu, view: true });
  assert.ok(viewed.release);
  assert.ok(compareImages(viewed.output, copied.output).identical);
  viewed.release!();
});

test('an all-zero kernel gives zeros, NaN input included (scipy.ndimage.correlate skips zero weights), on every path', async (t) => {
  const img = await load('img2d');
  const data = img.data.slice() as Float32Array;
  data[100] = NaN;
  const bad: Image = { ...img, data };
  const k = denseKernel(new Array(9).fill(0), [3, 3]);
  const zeros = (out: Image, what: string) => assert.ok(out.data.every((v) => v === 0), what);
  zeros((await correlate(bad, k)).output, 'cpu');
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const impl of DENSE) zeros((await correlate(bad, k, { gpu, impl })).output, `gpu ${impl}`);
});

// The options type is derived from the declaration (filterParams): a call as a user writes it compiles, and what
// the declaration refuses is a compile error. `border` takes its modes and their OpenCV/scipy names (the names
// that were choices before borderParam); each gives the mode's result, on the API and on the command line, where
// the JSON `params` show the canonical mode.
test('FilterOptions as a user writes it; border aliases (scipy mirror/nearest, OpenCV BORDER_*) equal their modes, API and CLI', async () => {
  const typed: FilterOptions = { border: 'BORDER_REFLECT_101', cval: 0, impl: 'separable', truncate: 3, saturate: false, pool: undefined };
  // @ts-expect-error an implementation the declaration does not offer
  const badImpl: FilterOptions = { impl: 'fast' };
  // @ts-expect-error saturate is a boolean
  const badSaturate: FilterOptions = { saturate: 'yes' };
  assert.ok(badImpl && badSaturate);
  const img = await readImage(fixture('images', 'camera_301x256.png'), { gray: true });
  const same = (a: Image, b: Image, what: string) => assert.ok(compareImages(a, b).identical, what);
  same((await filter(img, 'gauss:2', typed)).output, (await filter(img, 'gauss:2', { ...typed, border: 'reflect101' })).output, 'BORDER_REFLECT_101');
  for (const [alias, mode] of [['mirror', 'reflect101'], ['nearest', 'replicate'], ['reflect_101', 'reflect101'], ['BORDER_REFLECT', 'reflect'], ['BORDER_WRAP', 'wrap']] as const) {
    same((await filter(img, 'sobel', { border: alias })).output, (await filter(img, 'sobel', { border: mode })).output, alias);
  }
  assert.equal(filter.op, ALL_OPERATIONS.filter, 'the registry runs the declared operation');
  // The declared range holds on the API as on the command line (the API passed truncate 0.1 through unchecked).
  await assert.rejects(filter(img, 'gauss:2', { truncate: 0.1 }), /truncate must be ≥ 0\.5, got 0\.1/);
  const tmp = mkdtempSync(join(tmpdir(), 'imgpu-filter-'));
  const run = (border: string) => {
    const out = join(tmp, `${border}.npy`);
    const r = spawnSync(process.execPath, [BIN, 'filter', fixture('images', 'camera_301x256.png'), out, '--filter', 'sobel', '--border', border, '--device', 'cpu', '--json'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return { params: JSON.parse(r.stdout).params, out };
  };
  const alias = run('nearest'), mode = run('replicate');
  assert.equal(alias.params.border, 'replicate', 'the JSON params show the canonical mode');
  same(await readImage(alias.out), await readImage(mode.out), 'CLI --border nearest');
  const bad = spawnSync(process.execPath, [BIN, 'filter', fixture('images', 'camera_301x256.png'), join(tmp, 'x.npy'), '--border', 'mirrored', '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /border must be one of reflect\|reflect101\|replicate\|wrap\|constant\|valid \(or .*mirror.*\), got mirrored/);
});

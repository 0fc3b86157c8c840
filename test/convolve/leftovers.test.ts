// Issue 39 item 5: the filter defects the differential fuzzing of the last round left open, each against its reference.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { correlate, denseKernel, filter, type ConvImpl, type FilterOptions } from '../../src/ops/convolve/index.js';
import { fixture, randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { pythonArrays } from '../helpers/python.js';

const TOL = 1e-5;
const SEP: ConvImpl[] = ['naive', 'tiled', 'separable', 'fused'];
const DENSE: ConvImpl[] = ['naive', 'tiled'];
const MODES = ['reflect', 'reflect101', 'replicate', 'wrap', 'constant'] as const;
const SCIPY: Record<(typeof MODES)[number], string> = { reflect: 'reflect', reflect101: 'mirror', replicate: 'nearest', wrap: 'wrap', constant: 'constant' };

function assertClose(got: Image, want: Image, what: string): void {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  const c = compareWithin(got, want, TOL);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements beyond ±${c.tolerance} (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

/** A float32 image of seeded values in [0, scale) times `scale`. */
function floats(shape: number[], seed: number, scale = 1): Image {
  const n = shape.reduce((a, b) => a * b, 1);
  const b = randomBytes(n, seed);
  return { data: Float32Array.from(b, (v) => (v - 100) * scale), shape: shape as Image['shape'], channels: 1, dtype: 'float32' };
}

test('box:1x1 with saturate is the identity on 8-bit images (cv2.blur ksize 1×1 is), CPU and GPU', async (t) => {
  const img = await readImage(fixture('images', 'camera_301x256.png'), { gray: true });
  const cpu = (await filter(img, 'box:1x1', { saturate: true })).output;
  assert.equal(cpu.dtype, 'uint8');
  assert.ok(compareImages(cpu, img).identical, `CPU: ${compareImages(cpu, img).mismatches} pixels changed`);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const impl of SEP) {
    const g = (await filter(img, 'box:1x1', { saturate: true, gpu, impl })).output;
    assert.ok(compareImages(g, img).identical, `GPU ${impl}: ${compareImages(g, img).mismatches} pixels changed`);
  }
});

test('kernels larger than the image (odd sizes) equal scipy.ndimage for every border, and cv2.filter2D / cv2.blur where OpenCV has the border, CPU and GPU', async (t) => {
  const img2 = floats([5, 7], 3); // a 5×7 image, a 9×13 kernel: both axes reach past the far side
  const vol = floats([3, 5, 7], 4); // a 3×5×7 volume, a 5×7×9 kernel
  const k2w = Array.from(floats([9, 13], 5, 0.01).data);
  const k3w = Array.from(floats([5, 7, 9], 6, 0.01).data);
  const u8: Image = { data: randomBytes(5 * 7, 7), shape: [5, 7], channels: 1, dtype: 'uint8' };
  const py = pythonArrays(`
k2 = np.array(${JSON.stringify(k2w)}, np.float64).reshape(9, 13)
k3 = np.array(${JSON.stringify(k3w)}, np.float64).reshape(5, 7, 9)
cv = {'reflect': cv2.BORDER_REFLECT, 'mirror': cv2.BORDER_REFLECT_101, 'nearest': cv2.BORDER_REPLICATE, 'constant': cv2.BORDER_CONSTANT}
for m in ${JSON.stringify(Object.values(SCIPY))}:
    x2, x3 = I['img2'].astype(np.float64), I['vol'].astype(np.float64)
    O['k2-' + m] = ndimage.correlate(x2, k2, mode=m, cval=1.5).astype(np.float32)
    O['k3-' + m] = ndimage.correlate(x3, k3, mode=m, cval=1.5).astype(np.float32)
    O['g2-' + m] = ndimage.gaussian_filter(x2, 3, mode=m, cval=1.5).astype(np.float32)
    O['b3-' + m] = ndimage.uniform_filter(x3, (5, 9, 11), mode=m, cval=1.5).astype(np.float32)
    if m in cv and m != 'constant':
        O['cv-k2-' + m] = cv2.filter2D(I['img2'], -1, k2.astype(np.float32), borderType=cv[m])
        O['cv-blur-' + m] = cv2.blur(I['u8'], (13, 9), borderType=cv[m])
`, { img2, vol, u8 });
  const gpu = await gpuOrSkip(t);
  // Each mode on one GPU implementation, the next mode on the next: every implementation meets the far border rule,
  // and the test compiles a few dozen shader variants (each costs seconds on the software adapter), not hundreds.
  for (const [i, mode] of MODES.entries()) {
    const m = SCIPY[mode];
    const o: FilterOptions = { border: mode, cval: 1.5 };
    const runs: [string, (x: FilterOptions) => Promise<{ output: Image }>, ConvImpl[], string[]][] = [
      ['correlate 9×13 on 5×7', (x) => correlate(img2, denseKernel(k2w, [9, 13]), { ...o, ...x }), DENSE, [`k2-${m}`, `cv-k2-${m}`]],
      ['correlate 5×7×9 on 3×5×7', (x) => correlate(vol, denseKernel(k3w, [5, 7, 9]), { ...o, ...x }), DENSE, [`k3-${m}`]],
      ['gauss:3 on 5×7', (x) => filter(img2, 'gauss:3', { ...o, ...x }), SEP, [`g2-${m}`]],
      ['box:11x9x5 on 3×5×7', (x) => filter(vol, 'box:11x9x5', { ...o, ...x }), SEP, [`b3-${m}`]],
    ];
    for (const [what, run, impls, refs] of runs) {
      const cpu = (await run({})).output;
      for (const r of refs) if (py[r]) assertClose(cpu, py[r], `CPU ${what} ${mode} vs ${r}`);
      const impl = impls[i % impls.length];
      if (gpu) assertClose((await run({ gpu, impl })).output, py[refs[0]], `GPU ${impl} ${what} ${mode}`);
    }
    if (!py[`cv-blur-${m}`]) continue;
    const want = py[`cv-blur-${m}`];
    const blur = (x: FilterOptions) => filter(u8, 'box:13x9', { border: mode, saturate: true, ...x });
    assert.ok(compareImages((await blur({})).output, want).identical, `CPU box:13x9 ${mode} = cv2.blur`);
    const impl = SEP[i % SEP.length];
    if (gpu) assert.ok(compareImages((await blur({ gpu, impl })).output, want).identical, `GPU ${impl} box:13x9 ${mode} = cv2.blur`);
  }
  await assert.rejects(filter(img2, 'gauss:3', { border: 'valid' }), /no output lies inside/);
});

test('the Sobel gradient magnitude stays finite where its squares leave float32 (np.hypot of scipy sobel outputs), and exact for tiny gradients, CPU and GPU', async (t) => {
  // Values of ±1e19..1e21: each Sobel output is finite in float32, its square is not. And ±1e-24: squares underflow.
  const big = floats([13, 17], 8, 1e19);
  const tiny = floats([13, 17], 9, 1e-26);
  const vol = floats([5, 7, 9], 10, 1e19);
  const py = pythonArrays(`
for n in ('big', 'tiny'):
    x = I[n].astype(np.float64)
    O[n] = np.hypot(ndimage.sobel(x, axis=1).astype(np.float32), ndimage.sobel(x, axis=0).astype(np.float32))
x = I['vol'].astype(np.float64)
O['vol'] = np.sqrt(sum(ndimage.sobel(x, axis=a) ** 2 for a in range(3))).astype(np.float32)
`, { big, tiny, vol });
  const gpu = await gpuOrSkip(t);
  for (const [name, img] of [['big', big], ['tiny', tiny], ['vol', vol]] as const) {
    assert.ok(py[name].data.every((v) => Number.isFinite(v) && v > 0) || name === 'tiny', `${name}: the reference is finite`);
    assertClose((await filter(img, 'sobel')).output, py[name], `CPU sobel magnitude ${name}`);
    // The magnitude is its own kernel, after whichever implementation computed the parts: the default one here.
    if (gpu) assertClose((await filter(img, 'sobel', { gpu })).output, py[name], `GPU sobel magnitude ${name}`);
  }
});

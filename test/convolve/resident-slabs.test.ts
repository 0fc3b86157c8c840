import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import { GpuLimitError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { filter } from '../../src/ops/convolve/index.js';
import { randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

// A resident image beyond one storage binding (a pipeline's: "… | filter …") ended in "WebGPU validation failed"
// (exit 70); it now runs in device-side row (plane) slabs with the kernels' reach as halo, bit for bit the whole
// image's result (the same taps in the same order per output).
test('a resident image beyond one storage binding is filtered in slabs: equal to the whole-image GPU result', async (t) => {
  const whole = await gpuOrSkip(t);
  const small = await gpuWithBindingLimit(t, 64 << 10);
  if (!whole || !small) return;
  const img2d = imageFrom(randomBytes(211 * 173, 51), [211, 173]);
  const vol = imageFrom(randomU16(12 * 40 * 37, 52, 4000), [12, 40, 37]);
  const cases: [Image, string, Parameters<typeof filter>[2]][] = [
    [img2d, 'sobel', {}], [img2d, 'gauss:2.5', { saturate: true }], [img2d, 'box:5x9', { border: 'constant', cval: 7 }],
    [img2d, 'prewitt-y', { border: 'replicate' }], [vol, 'gauss:1', { border: 'reflect101' }], [vol, 'sobel-z', {}],
  ];
  for (const [img, spec, opts] of cases) {
    const ref = (await filter(img, spec, { ...opts, gpu: whole })).output;
    const dev = await GpuImage.upload(small, img);
    const r = await filter(dev, spec, opts);
    assert.ok((r.timings.slabs ?? 1) > 1, `${spec}: split`);
    assertSame(await r.output.toHost(), ref, `${img.shape.join('×')} ${spec} ${JSON.stringify(opts)}`);
    r.output.release();
    dev.release();
  }
  const dev = await GpuImage.upload(small, img2d);
  // 'valid' (a shrunk output) and 'wrap' (reads the far side) cannot be cut into slabs on the device: refused.
  for (const border of ['valid', 'wrap'] as const) await assert.rejects(filter(dev, 'sobel', { border }), GpuLimitError, border);
  dev.release();
});

// NaN and ±inf spread through a box filter as running sums along whole lines (scipy's uniform_filter): a slab
// does not hold the lines' beginnings, so each hands the first NaN/±inf of every line to the next.
test('a resident float32 image beyond one binding: NaN and ±inf spread across slabs as on the CPU (scipy)', async (t) => {
  const small = await gpuWithBindingLimit(t, 64 << 10);
  if (!small) return;
  const img2d = imageFrom(Float32Array.from(randomBytes(211 * 173, 53), (v) => v - 128), [211, 173]);
  const vol = imageFrom(Float32Array.from(randomBytes(12 * 40 * 37, 54), (v) => v / 7), [12, 40, 37]);
  // Non-finite values near the top, in the middle and near the bottom, on rows (planes) that slabs cut.
  for (const [i, v] of [[5 * 173 + 3, NaN], [60 * 173 + 100, Infinity], [61 * 173 + 20, -Infinity], [150 * 173 + 7, Infinity], [209 * 173 + 170, NaN]]) img2d.data[i] = v;
  for (const [i, v] of [[1 * 1480 + 300, Infinity], [5 * 1480 + 17, NaN], [9 * 1480 + 1000, -Infinity]]) vol.data[i] = v;
  const cases: [Image, string, Parameters<typeof filter>[2]][] = [
    [img2d, 'box:5x9', {}], [img2d, 'box:4x2', { border: 'constant', cval: 7 }], [img2d, 'sobel', {}],
    [vol, 'box:3', { border: 'reflect101' }], [vol, 'box:1x1x5', {}],
  ];
  for (const [img, spec, opts] of cases) {
    const want = (await filter(img, spec, opts)).output;
    const dev = await GpuImage.upload(small, img);
    const r = await filter(dev, spec, opts);
    assert.ok((r.timings.slabs ?? 1) > 1, `${spec}: split`);
    const got = await r.output.toHost();
    // docs/convolution.md's tolerance (1e-5 · max|ref|; NaN = NaN, ±Inf = the same infinity).
    const c = compareWithin(got, want, 1e-5);
    assert.ok(c.identical, `${img.shape.join('×')} ${spec}: ${c.mismatches} elements differ (first at ${c.firstMismatch}, max |diff| ${c.maxAbsDiff})`);
    r.output.release();
    dev.release();
  }
});

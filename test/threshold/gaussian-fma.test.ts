import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { FMA_PROBE_CASES, fma32, runFmaProbe, unfused32 } from '../../src/core/gpu/fma-probe.js';
import { imageFrom } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { fixture, randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

const f32 = (x: number) => Math.fround(x) === x;
const normal = (x: number) => x === 0 || Math.abs(x) >= 2 ** -126;

test('fma probe cases: float32 operands, normal results, fused ≠ product-rounded-first on every one', () => {
  for (const [a, b, c] of FMA_PROBE_CASES) {
    assert.ok([a, b, c].every(f32), `${a}, ${b}, ${c}: float32`);
    const fused = fma32(a, b, c), unfused = unfused32(a, b, c);
    assert.ok(normal(fused) && normal(unfused), `${a}·${b} + ${c}: normal results`);
    assert.notEqual(fused, unfused, `${a}·${b} + ${c}: fused and unfused differ`);
  }
});

/** The lavapipe test noise (test/threshold/threshold.test.ts): blur values within a float32 step of x.5. */
const [h, w] = [300, 320];
const noise = imageFrom(randomBytes(w * h, 15, 4).map((v) => 181 + v), [h, w]);
async function cv2Gaussian(k: number) {
  const bits = (await readImage(fixture('threshold', `gauss-noise-k${k}-bits.npy`))).data;
  return imageFrom(new Uint8Array(w * h).map((_, i) => ((bits[(i / w | 0) * (w / 8) + ((i % w) >> 3)] >> (7 - (i & 7))) & 1) * 255), [h, w]);
}
const gaussKernels = (names: { name: string }[]) => names.map((k) => k.name).filter((n) => n.startsWith('threshold.gaussian'));

test('the fma probe: lavapipe\'s fma() rounds the product first, so the Gaussian threshold runs the software fma (= cv2)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const got = await runFmaProbe(gpu);
  const fused = await gpu.fusedFma();
  assert.equal(fused, FMA_PROBE_CASES.every(([a, b, c], i) => got[i] === fma32(a, b, c)), 'the answer follows the probe');
  if (/llvmpipe|lavapipe/i.test(Object.values(gpu.adapter).join(' '))) {
    assert.equal(fused, false);
    assert.deepEqual(Array.from(got), FMA_PROBE_CASES.map(([a, b, c]) => unfused32(a, b, c)), 'lavapipe: product rounded, then the sum');
  } else t.diagnostic(`${gpu.adapter.description}: fma() ${fused ? 'fused' : 'not fused'}`);
  const r = await threshold(noise, { method: 'gaussian', window: 31, gpu, profile: true });
  assert.deepEqual(gaussKernels(r.timings.kernels), fused ? ['threshold.gaussian.rows.fma', 'threshold.gaussian.cols.fma'] : ['threshold.gaussian.rows', 'threshold.gaussian.cols']);
  assert.ok(compareImages(r.output, await cv2Gaussian(31)).identical, 'equals cv2.adaptiveThreshold');
});

test('fma: \'native\' forces the fma() variant: it compiles and runs (on lavapipe it misses cv2 only at near-tie pixels)', async (t) => {
  const shared = await gpuOrSkip(t);
  if (!shared) return;
  const gpu = await createNodeGpuContext({ fma: 'native' });
  try {
    assert.equal(await gpu.fusedFma(), true);
    for (const k of [11, 31]) {
      const r = await threshold(noise, { method: 'gaussian', window: k, gpu, profile: true });
      assert.deepEqual(gaussKernels(r.timings.kernels), ['threshold.gaussian.rows.fma', 'threshold.gaussian.cols.fma']);
      const { mismatches } = compareImages(r.output, await cv2Gaussian(k));
      t.diagnostic(`window ${k}: ${mismatches} of ${w * h} pixels differ from cv2`);
      // Noise within a float32 step of x.5: only pixels whose mean is a near tie can move — a handful, not a broken kernel.
      assert.ok(mismatches <= w * h / 1000, `window ${k}: ${mismatches} pixels differ`);
    }
    if (/llvmpipe|lavapipe/i.test(Object.values(gpu.adapter).join(' '))) {
      // 1000×1000 noise: lavapipe's unfused fma() moves a few pixels there (11 for window 31) — the variant did run.
      const big = imageFrom(randomBytes(1000 * 1000, 15, 4).map((v) => 181 + v), [1000, 1000]);
      const [native, soft] = await Promise.all([gpu, shared].map(async (g) => (await threshold(big, { method: 'gaussian', window: 31, gpu: g })).output));
      const { mismatches } = compareImages(native, soft);
      t.diagnostic(`lavapipe, 1000×1000, window 31: native fma() moved ${mismatches} pixels`);
      assert.ok(mismatches > 0 && mismatches <= 100, `${mismatches} pixels differ`);
    }
  } finally {
    gpu.destroy();
  }
});

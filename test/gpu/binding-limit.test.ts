import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { clahe } from '../../src/ops/clahe/index.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { histogram } from '../../src/ops/histogram/index.js';
import { morph } from '../../src/ops/morph/index.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

// Issue 24: an image beyond the adapter's storage-binding limit ended in "WebGPU validation failed — this is a bug"
// (exit 70). Here for real on the test adapter: 4096 × 32769 8-bit pixels are 64 rows more than lavapipe's 128 MiB
// binding (the other tests split at lowered limits, on small images). Heavy on a software adapter: one image, few ops.
test('an 8-bit image just beyond a 128 MiB binding: equalize, histogram, morph and CLAHE on the GPU equal the CPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const [h, w] = [32769, 4096];
  const img = imageFrom(randomBytes(h * w, 24, 200), [h, w]);
  const split = img.data.byteLength > gpu.limits.maxStorageBufferBindingSize;
  const check = (slabs: number | undefined, what: string) => { if (split) assert.ok((slabs ?? 1) > 1, `${what}: split`); };

  let r = await equalize(img, { gpu });
  check(r.timings.slabs, 'equalize');
  assertSame(r.output, (await equalize(img)).output, 'equalize');

  const counts = await histogram(img, { gpu, method: 'subhist' });
  check(counts.timings.slabs, 'histogram');
  assert.deepEqual([...counts.output], [...(await histogram(img)).output], 'histogram');

  r = await morph(img, { op: 'open', se: 'rect:5x5', gpu });
  check(r.timings.slabs, 'morph');
  assertSame(r.output, (await morph(img, { op: 'open', se: 'rect:5x5' })).output, 'morph');

  r = await clahe(img, { gpu });
  check(r.timings.slabs, 'clahe');
  assertSame(r.output, (await clahe(img)).output, 'clahe');
});

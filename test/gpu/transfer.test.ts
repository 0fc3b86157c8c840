import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { capacityFor, UPLOAD_CHUNK } from '../../src/core/gpu/transfer.js';
import type { Image } from '../../src/core/image.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { parsePipeline, runPipeline } from '../../src/ops/pipeline.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

test('chunked uploads (over 2 chunks, a tail not a multiple of the chunk) come back byte for byte', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const n of [2 * UPLOAD_CHUNK + 12345, 3 * UPLOAD_CHUNK, 1001]) {
    const img: Image = { data: randomBytes(n, n), shape: [1, n], channels: 1, dtype: 'uint8' };
    const dev = await GpuImage.upload(gpu, img);
    assert.ok(compareImages(await dev.toHost(), img).identical, `${n} bytes`);
    dev.release();
  }
});

test('outputs as views of mapped memory equal copied outputs; release() detaches them', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img: Image = { data: randomBytes(1920 * 1081, 5), shape: [1081, 1920], channels: 1, dtype: 'uint8' };
  const copied = await equalize(img, { gpu });
  const viewed = await equalize(img, { gpu, view: true });
  assert.ok(viewed.release, 'a release handle');
  assert.ok(compareImages(viewed.output, copied.output).identical);
  viewed.release!();
  assert.equal(viewed.output.data.byteLength, 0, 'the view is detached after release');
  const p = await runPipeline(img, parsePipeline('equalize | threshold --method otsu'), { gpu, view: true });
  const q = await runPipeline(img, parsePipeline('equalize | threshold --method otsu'), { gpu });
  assert.ok(compareImages(p.output, q.output).identical);
  p.release!();
});

test('pooled buffers come in size classes: close sizes share one capacity, never past the limits', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  assert.equal(capacityFor(gpu, 12_000_000), capacityFor(gpu, 12_500_000));
  assert.ok(capacityFor(gpu, 12_000_000) <= 12_000_000 * 1.125 + 16);
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  assert.ok(capacityFor(gpu, limit - 100) <= limit);
  assert.equal(capacityFor(gpu, 1000), 1008);
});

test('staged images: pixels written into mapped upload memory arrive without a copy; discard gives it back', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img: Image = { data: randomBytes(1023 * 777, 9), shape: [777, 1023], channels: 1, dtype: 'uint8' };
  const staged = await GpuImage.staging(gpu, img.shape, 'uint8');
  (staged.image.data as Uint8Array).set(img.data);
  const dev = staged.upload();
  assert.equal(staged.image.data.byteLength, 0, 'the staging view is detached once submitted');
  assert.ok(compareImages(await dev.toHost(), img).identical);
  assert.throws(() => staged.upload(), /already submitted/);
  dev.release();
  const unused = await GpuImage.staging(gpu, [10, 10], 'uint16', 3);
  assert.equal(unused.image.data.length, 300);
  unused.discard();
  await assert.rejects(GpuImage.staging(gpu, [0, 5], 'uint8'), /empty/);
});

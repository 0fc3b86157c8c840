import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { capacityFor, download, idleChunkCount, idleStagingStats, readbackCount, STAGE_CHUNK, stageOffThread, transferTuning, UPLOAD_CHUNK } from '../../src/core/gpu/transfer.js';
import type { Image } from '../../src/core/image.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { parsePipeline, runPipeline } from '../../src/ops/pipeline.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

test('uploads in chunks (over 2 chunks, a tail not a multiple of the chunk) and in one piece come back byte for byte', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  try {
    for (const chunk of [UPLOAD_CHUNK, 0, undefined]) {
      transferTuning.uploadChunk = chunk;
      for (const n of [2 * UPLOAD_CHUNK + 12345, 3 * UPLOAD_CHUNK, 1001, (1 << 20) + 3]) {
        const img: Image = { data: randomBytes(n, n), shape: [1, n], channels: 1, dtype: 'uint8' };
        const dev = await GpuImage.upload(gpu, img);
        assert.ok(compareImages(await dev.toHost(), img).identical, `${n} bytes, chunk ${chunk}`);
        dev.release();
      }
    }
  } finally {
    transferTuning.uploadChunk = undefined;
  }
});

test('downloads in chunks (a tail not a multiple of the chunk) equal one piece; readbacks counted once; staging reused', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  try {
    for (const n of [1001, 4096 + 13, (1 << 20) + 3]) {
      const img: Image = { data: randomBytes(n, n + 7), shape: [1, n], channels: 1, dtype: 'uint8' };
      const dev = await GpuImage.upload(gpu, img);
      for (const chunk of [256, 4096, 0]) {
        transferTuning.downloadChunk = chunk;
        const before = readbackCount(gpu);
        assert.ok(compareImages(await dev.toHost(), img).identical, `${n} bytes, chunk ${chunk}`);
        assert.equal(readbackCount(gpu), before + 1);
      }
      dev.release();
    }
  } finally {
    transferTuning.downloadChunk = undefined;
  }
});

test('upload staging memory stays bounded when images grow one size class after another', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  let biggest = 0;
  for (let i = 0; i < 24; i++) {
    const n = (1 << 20) + i * (300 << 10);
    biggest = n;
    const img: Image = { data: randomBytes(n, i), shape: [1, n], channels: 1, dtype: 'uint8' };
    const dev = await GpuImage.upload(gpu, img);
    if (i === 23) assert.ok(compareImages(await dev.toHost(), img).identical);
    dev.release();
  }
  await gpu.finish();
  const idle = idleStagingStats(gpu);
  assert.ok(idle.count <= 4, `${idle.count} idle staging buffers`);
  assert.ok(idle.bytes <= 4 * 2 * Math.max(biggest, UPLOAD_CHUNK), `${idle.bytes} bytes of idle staging`);
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
  // Under 1 MiB: up to 256 bytes as padded, then powers of two (a folder's per-photo tables share buffers).
  assert.equal(capacityFor(gpu, 200), 208);
  assert.equal(capacityFor(gpu, 1000), 1024);
  assert.equal(capacityFor(gpu, 300_000), 1 << 19);
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

test('off-thread staging goes through uniform chunks: bytes arrive intact, and the chunks kept are the most needed at once', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // Growing sizes (a folder of photos): per-size staging kept a buffer per power of two (4 + 16 + 32 + 64 MiB here);
  // chunks are shared, so only the largest request's count is ever made.
  const sizes = [3 << 20, 9 << 20, (17 << 20) + 5, 4 * STAGE_CHUNK + 100, 1001];
  for (const round of [0, 1]) {
    for (const n of sizes) {
      const data = randomBytes(n, n + round);
      const staged = await stageOffThread(gpu, data);
      const dev = staged.submit('test');
      const back = await download(gpu, dev, new Uint8Array(n));
      gpu.buffers.release(dev);
      assert.ok(Buffer.from(back).equals(Buffer.from(data)), `${n} bytes, round ${round}`);
      await gpu.finish();
    }
    assert.equal(idleChunkCount(gpu), 5, `round ${round}: chunks kept`);
  }
  // Two at once need both their chunks; a discarded one gives its chunks back.
  const a = await stageOffThread(gpu, randomBytes(3 * STAGE_CHUNK, 1));
  const b = await stageOffThread(gpu, randomBytes(3 * STAGE_CHUNK, 2));
  a.discard();
  b.discard();
  await gpu.finish();
  assert.equal(idleChunkCount(gpu), 6);
});

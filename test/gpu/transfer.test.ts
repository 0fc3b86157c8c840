import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { capacityFor, download, downloadAfter, downloadChunks, idleChunkCount, idleStagingStats, readbackCount, STAGE_CHUNK, stageOffThread, stagingView, transferTuning, UPLOAD_CHUNK } from '../../src/core/gpu/transfer.js';
import type { Image } from '../../src/core/image.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { runOperation } from '../../src/core/op.js';
import { parsePipeline, runChain, runPipeline } from '../../src/ops/pipeline.js';
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
  const viewed = await runOperation(equalize.op, img, {}, { gpu, view: true });
  assert.ok(viewed.release, 'a release handle');
  assert.ok(compareImages(viewed.output, copied.output).identical);
  viewed.release!();
  assert.equal(viewed.output.data.byteLength, 0, 'the view is detached after release');
  const p = await runChain(img, parsePipeline('equalize | threshold --method otsu'), { gpu, view: true });
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

test('downloadChunks: a readback across many staging chunks gives its bytes (u32 in any piece, copies spanning pieces, on and off the JavaScript thread); readbacks of any size reuse the chunks', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const chunk = 4112; // a size no other readback's staging has (those are powers of two), so the pool holds none before
  transferTuning.readChunk = chunk;
  try {
    const n = 5 * chunk + 40;
    const data = randomBytes(n, 3);
    const dev = (await stageOffThread(gpu, data)).submit('test');
    const word = (at: number) => new DataView(data.buffer, data.byteOffset).getUint32(at, true);
    const before = readbackCount(gpu);
    const whole = await downloadChunks(gpu, dev, n);
    assert.equal(readbackCount(gpu), before + 1, 'one readback');
    for (const at of [0, chunk - 4, chunk, 2 * chunk + 4, n - 4]) assert.equal(whole.u32(at), word(at), `u32 at ${at}`);
    for (const offThread of [false, true]) {
      const all = new Uint8Array(n);
      await whole.copyTo(all, 0, offThread);
      assert.ok(Buffer.from(all).equals(Buffer.from(data)), `whole, off the thread: ${offThread}`);
      const part = new Uint8Array(2 * chunk + 100);
      await whole.copyTo(part, chunk - 50, offThread);
      assert.ok(Buffer.from(part).equals(Buffer.from(data.subarray(chunk - 50, 3 * chunk + 50))), `a span over three pieces, off the thread: ${offThread}`);
    }
    whole.release();
    whole.release(); // twice: once
    // Every readback takes the same chunks: a second round of other sizes creates none.
    for (const m of [100, 2 * chunk + 16, n]) (await downloadChunks(gpu, dev, m)).release();
    const created = gpu.buffers.created;
    for (const m of [3 * chunk, 17, n - 16, chunk]) {
      const v = await downloadChunks(gpu, dev, m);
      assert.equal(v.u32(m - 4 - ((m - 4) % 4)), word(m - 4 - ((m - 4) % 4)), `${m} bytes`);
      v.release();
    }
    assert.equal(gpu.buffers.created, created, 'no staging created for other sizes');
    // needed: the first chunk read back first, then only the chunks holding the bytes wanted. While one holds k chunks,
    // another of n bytes (6 chunks) creates at most k: 4 at most below, 6 if all were taken.
    for (const want of [10, chunk + 1, 3 * chunk + 20, 2 * n]) {
      let seen = 0;
      const v = await downloadChunks(gpu, dev, n, 0, (u32) => ((seen = u32(0)), want));
      assert.equal(seen, word(0), 'needed reads the first chunk');
      assert.equal(v.byteLength, Math.min(want, n));
      const got = new Uint8Array(v.byteLength);
      await v.copyTo(got, 0, true);
      assert.ok(Buffer.from(got).equals(Buffer.from(data.subarray(0, v.byteLength))), `${want} bytes wanted`);
      // The chunks not needed are free already, while this readback still holds its own.
      if (want < n) {
        const other = await downloadChunks(gpu, dev, n);
        other.release();
      }
      v.release();
    }
    assert.equal(gpu.buffers.created - created, 4, 'the chunks not needed were reused by the other readback');
    gpu.buffers.release(dev);
  } finally {
    transferTuning.readChunk = undefined;
  }
});

test('uploads and readbacks recorded into a recording: one submission for all, the readback mapped only once it is submitted, the upload memory reused after', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const queue = gpu.device.queue;
  const submit = queue.submit.bind(queue);
  let submits = 0;
  Object.defineProperty(queue, 'submit', { value: (b: Iterable<GPUCommandBuffer>) => (submits++, submit(b)), configurable: true });
  const timer = new KernelTimer(gpu, false);
  try {
    for (const n of [1001, 2 * STAGE_CHUNK + 40]) {
      const data = randomBytes(n, n + 5);
      const staged = await stageOffThread(gpu, data);
      const mapped = await stagingView(gpu, n);
      new Uint8Array(mapped.bytes, 0, n).set(data);
      const idle = idleChunkCount(gpu);
      submits = 0;
      const rec = new Recording(gpu, timer, 'test', true);
      const a = staged.submit('a', rec), b = mapped.submit('b', rec);
      rec.retain(a);
      rec.retain(b);
      const before = readbackCount(gpu);
      const views = [downloadAfter(rec, a, n), downloadAfter(rec, b, n)];
      let resolved = false;
      void Promise.all(views).then(() => (resolved = true));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(resolved, false, 'nothing is mapped before the recording is submitted');
      assert.equal(submits, 0, 'nothing submitted apart');
      rec.submit();
      assert.equal(submits, 1, 'one submission for the uploads and the readbacks');
      assert.equal(readbackCount(gpu), before + 2);
      for (const [i, v] of (await Promise.all(views)).entries()) {
        assert.ok(Buffer.from(new Uint8Array(v.bytes, 0, n)).equals(Buffer.from(data)), `${n} bytes, ${i ? 'stagingView' : 'stageOffThread'}`);
        v.release();
      }
      await gpu.finish();
      if (n > STAGE_CHUNK) assert.equal(idleChunkCount(gpu), idle + 3, 'the upload chunks are idle again after the submission');
    }
  } finally {
    Object.defineProperty(queue, 'submit', { value: submit, configurable: true });
    timer.destroy();
  }
});

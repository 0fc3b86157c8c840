import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { BufferPool } from '../../src/core/gpu/buffer-pool.js';
import { acquireStorage, downloadView } from '../../src/core/gpu/transfer.js';
import { gpuOrSkip } from '../helpers/gpu.js';

/** A stand-in for a GPUBuffer: what the pool reads of one, and whether it was destroyed. */
function fakeBuffer(size: number, usage = 1): GPUBuffer & { destroyed: boolean } {
  const b = { size, usage, destroyed: false, destroy: () => { b.destroyed = true; } };
  return b as unknown as GPUBuffer & { destroyed: boolean };
}

test('BufferPool beyond its budget destroys the least recently released free buffers, and keeps the one released', () => {
  const pool = new BufferPool();
  pool.maxFreeBytes = 100;
  const [a, b, c] = [fakeBuffer(40), fakeBuffer(40), fakeBuffer(50)];
  pool.release(a);
  pool.release(b);
  pool.release(c); // 130 > 100: the oldest (a) goes, c stays
  assert.equal(a.destroyed, true);
  assert.equal(b.destroyed, false);
  assert.equal(c.destroyed, false);
  let made = 0;
  const create = (s: number) => (made++, fakeBuffer(s));
  assert.equal(pool.acquire(50, 1, create), c);
  assert.equal(pool.acquire(40, 1, create), b);
  assert.equal(made, 0);
});

test('BufferPool keeps what calls in flight held together beyond its budget: the next round creates nothing', () => {
  // Ten calls on a large volume in flight at once return ten outputs; destroying most of them made every call of the
  // next round create (and Dawn zero-fill) its output again.
  const pool = new BufferPool();
  pool.maxFreeBytes = 100;
  let made = 0;
  const create = (s: number) => (made++, fakeBuffer(s));
  for (let round = 0; round < 3; round++) {
    const held = Array.from({ length: 5 }, () => pool.acquire(60, 1, create));
    for (const b of held) pool.release(b);
    assert.ok(held.every((b) => !(b as ReturnType<typeof fakeBuffer>).destroyed));
  }
  assert.equal(made, 5);
});

test('BufferPool never holds more than the peak the work held at once, or what is lent plus its budget', () => {
  const pool = new BufferPool();
  pool.maxFreeBytes = 100;
  const lent = Array.from({ length: 5 }, () => pool.acquire(60, 1, (s) => fakeBuffer(s))); // peak 300
  for (const b of lent) pool.release(b);
  const again = pool.acquire(60, 1, () => assert.fail('a free one fits')); // 60 lent, 240 free
  const foreign = fakeBuffer(60); // not from the pool: lent 60 + free 300 would pass the peak
  pool.release(foreign);
  assert.equal(lent.filter((b) => (b as ReturnType<typeof fakeBuffer>).destroyed).length, 1, 'the oldest free one goes');
  assert.equal(foreign.destroyed, false);
  pool.release(again);
  pool.clear(); // forgets the peak: the budget is back to maxFreeBytes
  const big = pool.acquire(150, 1, (s) => fakeBuffer(s));
  pool.release(big);
  assert.equal((big as ReturnType<typeof fakeBuffer>).destroyed, false, 'held at once (150) after the clear');
  pool.release(fakeBuffer(60));
  assert.equal((big as ReturnType<typeof fakeBuffer>).destroyed, true, 'lent 0 + free 210 > max(100, 150)');
});

test('BufferPool destroys a released buffer larger than its whole budget, keeping the others', () => {
  const pool = new BufferPool();
  pool.maxFreeBytes = 100;
  const [small, huge] = [fakeBuffer(40), fakeBuffer(200)];
  pool.release(small);
  pool.release(huge);
  assert.equal(huge.destroyed, true);
  assert.equal(small.destroyed, false);
  assert.equal(pool.acquire(40, 1, () => fakeBuffer(40)), small);
});

test('BufferPool beyond its budget destroys device-memory buffers before host-mapped (readback) ones', () => {
  const pool = new BufferPool();
  pool.maxFreeBytes = 100;
  const MAP_READ = 0x1, STORAGE = 0x80;
  const [staging, device, next] = [fakeBuffer(40, MAP_READ | 0x8), fakeBuffer(40, STORAGE), fakeBuffer(40, STORAGE)];
  pool.release(staging);
  pool.release(device);
  pool.release(next); // 120 > 100: the device buffer goes, though the staging buffer is older
  assert.equal(device.destroyed, true);
  assert.equal(staging.destroyed, false);
  assert.equal(pool.acquire(40, MAP_READ | 0x8, () => fakeBuffer(40)), staging);
});

test('pooled storage for growing sizes (a folder of photos) is created about once per doubling, not per size class', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const before = ctx.buffers.created;
  let bytes = 3 << 20;
  const sizes: number[] = [];
  for (let i = 0; i < 36; i++, bytes = Math.round(bytes * 1.04)) {
    // Two buffers per photo, as a decode's coefficients and plane; both back to the pool once it is done.
    const [a, b] = [acquireStorage(ctx, bytes, 'test a'), acquireStorage(ctx, bytes, 'test b')];
    assert.ok(a.size >= bytes && b.size >= bytes);
    sizes.push(a.size);
    ctx.buffers.release(a);
    ctx.buffers.release(b);
  }
  // 3 → 12.3 MB: two buffers at the first size, then two each time the power of two is crossed (4, 8, 16 MiB);
  // without headroom each new size class (8 per doubling) missed.
  assert.ok(ctx.buffers.created - before <= 8, `${ctx.buffers.created - before} buffers created for 36 growing photos`);
  assert.ok(sizes.every((s, i) => s <= 2 * Math.max(3 << 20, Math.round((3 << 20) * 1.04 ** i)) + 16), 'at most twice the bytes');
});

test('BufferPool takes the smallest free buffer of the same usage up to twice as large, and drops a kind once its last buffer is taken', () => {
  const pool = new BufferPool();
  const MiB = 1 << 20;
  const free = [5, 3.5, 9, 4.5, 2.5].map((m) => fakeBuffer(m * MiB, 0x80));
  const otherUsage = fakeBuffer(3.2 * MiB, 0x8);
  for (const b of [...free, otherUsage]) pool.release(b);
  assert.equal(pool.freeKinds, 6);
  const none = () => assert.fail('no buffer should be created');
  assert.equal(pool.acquire(3 * MiB, 0x80, none), free[1]); // 3.5 MiB: not the other usage's 3.2
  assert.equal(pool.acquire(3 * MiB, 0x80, none), free[3]); // then 4.5
  assert.equal(pool.acquire(3 * MiB, 0x80, none), free[0]); // then 5; 9 is more than twice 3
  assert.equal(pool.freeKinds, 3);
  let made = 0;
  pool.acquire(3 * MiB, 0x80, (s) => (made++, fakeBuffer(s, 0x80)));
  assert.equal(made, 1);
  assert.equal(pool.outgrown(4 * MiB, 0x80), true); // 2.5 MiB free, at least half of 4
  assert.equal(pool.outgrown(6 * MiB, 0x80), false);
});

test('pooled storage and readback staging under 1 MiB of many sizes (a folder\'s per-photo tables, coded bytes) reuse one buffer per doubling', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const before = ctx.buffers.created;
  const src = acquireStorage(ctx, 1 << 20, 'test source');
  for (let bytes = 100_000; bytes < 400_000; bytes += 9_973) {
    ctx.buffers.release(acquireStorage(ctx, bytes, 'test small'));
    (await downloadView(ctx, src, bytes)).release();
  }
  ctx.buffers.release(src);
  // 100 → 400 kB crosses two powers of two (128 and 256 KiB): 3 classes each of storage and staging, and the source.
  assert.ok(ctx.buffers.created - before <= 7, `${ctx.buffers.created - before} buffers created for 31 sizes`);
});

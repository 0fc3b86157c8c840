import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { forBlocks, InlinePool } from '../../src/core/cpu/pool.js';
import { histogramRange, histogramTask } from '../../src/ops/histogram/cpu-kernels.js';
import { applyLutTask } from '../../src/ops/lut/cpu-kernels.js';
import { histogramCpu } from '../../src/ops/histogram/cpu.js';
import { loadPointKernels } from '../../src/node/native-kernels.js';
import { inlinePool } from '../../src/core/cpu/pool.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { readImage } from '../../src/io/index.js';
import { fixture, randomBytes } from '../helpers/fixtures.js';

const point = loadPointKernels();
const built = !!point;
const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
// CI builds the native pieces (IMGPU_REQUIRE_NATIVE=1); elsewhere these tests say why they skip.
const skip = built ? false : process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native point kernels not built (scripts/build-native.mjs)';

test('the native point kernels are built where required', { skip: process.env.IMGPU_REQUIRE_NATIVE !== '1' }, () => {
  assert.ok(built, 'dist/native/imgpu-native.node missing: did npm ci run scripts/build-native.mjs?');
});

test('the native kernels are a capability of the Node pool: present where built, absent with IMGPU_NO_NATIVE_KERNELS=1 and on the inline pool', { skip }, async () => {
  const withNative = new NodeWorkerPool(1);
  process.env.IMGPU_NO_NATIVE_KERNELS = '1';
  const without = new NodeWorkerPool(1);
  delete process.env.IMGPU_NO_NATIVE_KERNELS;
  try {
    assert.equal(withNative.native, point);
    assert.equal(without.native, undefined);
    assert.equal(inlinePool.native, undefined);
    // Either way the same counts (the native pass on `withNative`, the JavaScript loops on the others).
    const data = randomBytes(1_000_003, 5);
    const img = { data, shape: [1, data.length] as [number, number], channels: 1 as const, dtype: 'uint8' as const };
    const counts = await Promise.all([withNative, without, inlinePool].map((p) => histogramCpu(img, p)));
    assert.deepEqual(counts[1], counts[0]);
    assert.deepEqual(counts[2], counts[0]);
  } finally {
    await Promise.all([withNative.close(), without.close()]);
  }
});

test('native histogram and LUT (whole image on native threads) equal the JavaScript loops: photograph, noise, unaligned views, any thread count', { skip }, async () => {
  const k = point!;
  const photo = (await readImage(fixture('images', 'chelsea.png'), { gray: true })).data as Uint8Array;
  const lut = Uint8Array.from({ length: 256 }, (_, i) => (i * 91 + 7) & 255);
  const views = [photo, photo.subarray(3), photo.subarray(5, 5 + 100_001), randomBytes(100_003, 7), randomBytes(3_000_017, 9), new Uint8Array(0), randomBytes(17, 2)];
  for (const data of views) {
    const js = histogramRange({ data, start: 0, end: data.length, bins: 256, bits: 8 });
    for (const threads of [1, 2, 3, 16, 64]) {
      const h = new Uint32Array(256);
      k.histogram8(data, h, threads);
      assert.deepEqual(h, js, `histogram, ${data.length} px at +${data.byteOffset}, ${threads} threads`);
      const dst = new Uint8Array(data.length);
      k.applyLut8(data, dst, lut, threads);
      assert.ok(dst.every((v, i) => v === lut[data[i]]), `LUT, ${data.length} px at +${data.byteOffset}, ${threads} threads`);
    }
  }
  // Adds to what `out` holds.
  const h = new Uint32Array(256).fill(1);
  k.histogram8(randomBytes(10, 1), h, 4);
  assert.equal(h.reduce((x, y) => x + y, 0), 256 + 10);
});

test('native kernels refuse wrong lengths and types instead of touching memory', { skip }, () => {
  const k = point!;
  const d = new Uint8Array(100);
  assert.throws(() => k.histogram8(d, new Uint32Array(255), 4), TypeError);
  assert.throws(() => k.histogram8(new Uint16Array(100) as never, new Uint32Array(256), 4), TypeError);
  assert.throws(() => k.applyLut8(d, new Uint8Array(99), new Uint8Array(256), 4), TypeError);
  assert.throws(() => k.applyLut8(d, d, new Uint8Array(255), 4), TypeError);
  assert.throws(() => k.applyLut8(new Uint16Array(100) as never, d, new Uint8Array(256), 4), TypeError);
});

test('forBlocks: every block done once, results summed per worker, same as one pass', async () => {
  const data = randomBytes(1_000_003, 3);
  const whole = histogramRange({ data, start: 0, end: data.length, bins: 256, bits: 8 });
  const pool = new NodeWorkerPool(3);
  try {
    for (const block of [4096, 65536, 1 << 20]) {
      const parts = await forBlocks(pool, data.length, block, histogramTask, { data, bins: 256, bits: 8 }, true);
      assert.ok(parts.length <= pool.size, `${parts.length} results from ${pool.size} workers`);
      const h = new Uint32Array(256);
      for (const p of parts) for (let b = 0; b < 256; b++) h[b] += p[b];
      assert.deepEqual(h, whole, `block ${block}`);
      const out = new Uint8Array(new SharedArrayBuffer(data.length));
      const lut = Uint8Array.from({ length: 256 }, (_, i) => 255 - i);
      await forBlocks(pool, data.length, block, applyLutTask, { src: data, dst: out, lut });
      assert.ok(out.every((v, i) => v === 255 - data[i]), `LUT, block ${block}`);
    }
  } finally {
    await pool.close();
  }
  // Without workers: one call over the whole range.
  const inline = await forBlocks(new InlinePool(), data.length, 4096, histogramTask, { data, bins: 256, bits: 8 }, true);
  assert.deepEqual(inline, [whole]);
});

test('the CLI gives the same bytes with the native kernels and with the JavaScript loops (equalize, otsu)', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-native-'));
  const input = fixture('images', 'chelsea.png');
  for (const args of [['equalize'], ['threshold', '--method', 'otsu']]) {
    const outs = ['0', '1'].map((off) => {
      const out = join(dir, `${args[0]}-${off}.png`);
      const r = spawnSync(process.execPath, [BIN, ...args, input, out, '--device', 'cpu'], { encoding: 'utf8', env: { ...process.env, IMGPU_NO_NATIVE_KERNELS: off } });
      assert.equal(r.status, 0, r.stderr);
      return readFileSync(out);
    });
    assert.ok(outs[0].equals(outs[1]), args.join(' '));
  }
});

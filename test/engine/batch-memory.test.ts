import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { batch } from '../../src/batch.js';
import type { Image } from '../../src/core/image.js';
import { writeImage } from '../../src/io/index.js';
import { bufferClass, RecycledBuffers, SharedGarbage } from '../../src/node/codec-pool.js';

// Issue 39 item 6: a batch's resident memory is bounded independent of its count (docs/memory.md).

const CHILD = fileURLToPath(new URL('../helpers/batch-memory-child.js', import.meta.url));
const IMAGES = 8000;
/**
 * The growth allowed between the peak while the second quarter of the images is written and the peak while the
 * second half is. Measured in anonymous memory: +1.0 to +3.2 MiB (four runs, loaded machine); with the records file
 * rewritten from memory every 2 s (the earlier records.ts) +10.9 MiB at 6,000 images and +13 MiB at 8,000 (RSS),
 * growing with the count. The old-space garbage of larger folders (COLLECT_IMAGES) does not show at this count:
 * V8 collected it on its own here (+1.1, +1.3 MiB with collectImages off); the test below checks its collections.
 */
const GROWTH_MIB = 6;

test(`a folder batch of ${IMAGES} small images (CPU path, a process of its own): anonymous resident memory does not grow with the images written (second half's peak within ${GROWTH_MIB} MiB of the second quarter's)`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-memory-'));
  try {
    const r = spawnSync(process.execPath, [CHILD, dir, String(IMAGES)], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, r.stderr);
    const { peaks, processed, failed } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { peaks: { quarter: number; half: number }; processed: number; failed: number };
    assert.equal(processed, IMAGES);
    assert.equal(failed, 0);
    const growth = (peaks.half - peaks.quarter) / 2 ** 20;
    assert.ok(growth < GROWTH_MIB, `anonymous resident memory grew ${growth.toFixed(1)} MiB from the second quarter's peak (${(peaks.quarter / 2 ** 20).toFixed(0)} MiB) to the second half's (${(peaks.half / 2 ** 20).toFixed(0)} MiB)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('recycled pixel buffers of photos of many sizes: the free ones kept are at most `keep` of the largest class in bytes, not `keep` a class (a codec worker\'s grew with the folder)', () => {
  const keep = 4;
  const recycled = new RecycledBuffers(keep);
  // 40 images of 40 size classes, each the next class up (4 KiB to about 250 KiB), given back once decoded.
  const sizes = [4096];
  while (sizes.length < 40) sizes.push(bufferClass(sizes.at(-1)! + 1));
  const given = sizes.map((n) => recycled.alloc(n));
  for (const b of given) recycled.give(b);
  // Asked again, largest first (a smaller one may be handed a kept buffer up to twice its size), the buffers handed
  // out that are ones given back are the ones kept.
  const again = sizes.toReversed().map((n) => recycled.alloc(n));
  const keptBytes = again.filter((b) => given.includes(b)).reduce((a, b) => a + b.byteLength, 0);
  assert.ok(keptBytes > 0, 'some are recycled');
  assert.ok(keptBytes <= keep * Math.max(...sizes), `${keptBytes} bytes kept, more than ${keep} of the largest (${keep * Math.max(...sizes)})`);
  // The most recent classes are the ones kept: the last photo's buffer comes back.
  assert.ok(again[0] === given.at(-1), 'the last given is kept');
});

test('shared pixel memory dropped: a full collection in every thread once per budget of bytes, not per image nor never (V8 does not count shared buffers: a batch of large photos grew with its count)', () => {
  let collections = 0;
  const garbage = new SharedGarbage(100, () => collections++);
  for (let i = 0; i < 10; i++) garbage.drop(30); // 300 bytes: past 100 at the 4th and the 8th drop
  assert.equal(collections, 2);
  garbage.drop(100); // 60 carried over since the 8th, then 100 more: one budget reached
  assert.equal(collections, 3);
});

test('small images finished with: a full collection every so many images, however few their bytes (their garbage stayed in V8\'s old space: a batch of small images grew with its count)', () => {
  let collections = 0;
  const garbage = new SharedGarbage(1 << 20, () => collections++, 1000);
  for (let i = 0; i < 2300; i++) garbage.drop(i % 2 ? 0 : 200); // 230 KB in all: far from the byte budget
  assert.equal(collections, 2);
  // A byte budget reached resets the count of images too: the next collection is 1,000 images after it.
  for (let i = 0; i < 499; i++) garbage.drop();
  garbage.drop(1 << 20);
  assert.equal(collections, 3);
  for (let i = 0; i < 999; i++) garbage.drop();
  assert.equal(collections, 3);
  garbage.drop();
  assert.equal(collections, 4);
});

test('a folder batch of small images (CPU path) runs a full collection every `collectImages` images written: the per-image garbage left in the main thread\'s old space is freed as it goes, not when V8 gets to it (anonymous memory grew 1.6 KB an image over 30,000 images)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-collect-'));
  const forced: PerformanceEntry[] = [];
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (((e as PerformanceEntry & { detail?: { flags: number } }).detail?.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forced.push(e);
  });
  try {
    const input = join(dir, 'in');
    mkdirSync(input);
    const data = new Uint8Array(48 * 40 * 3).map((_, i) => (i * 7 + (i >> 5)) & 255);
    const img: Image = { data, shape: [40, 48], channels: 3, dtype: 'uint8' };
    await writeImage(join(dir, 'seed.png'), img);
    await writeImage(join(dir, 'seed.jpg'), img);
    for (let i = 0; i < 600; i++) linkSync(join(dir, i % 2 ? 'seed.png' : 'seed.jpg'), join(input, `${String(i).padStart(4, '0')}.${i % 2 ? 'png' : 'jpg'}`));
    gcs.observe({ entryTypes: ['gc'] });
    const run = batch('equalize', { inputs: [input], out: join(dir, 'out'), threads: 2, codecThreads: 2, collectImages: 100 });
    for await (const e of run) void e;
    const summary = await run.done;
    assert.equal(summary.processed, 600);
    await new Promise((resolve) => setImmediate(resolve)); // the observer's entries come after the collections
    // 600 images, 1,920 bytes of output each: far from the byte budget (128 MiB); one collection per 100 images.
    assert.ok(forced.length >= 6, `${forced.length} forced collections in the main thread for 600 images, one every 100 asked`);
  } finally {
    gcs.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
});

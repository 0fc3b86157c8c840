import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defineTask, forChunks, InlinePool, taskTable, type Range } from '../../src/core/cpu/pool.js';
import { histogramTask } from '../../src/ops/histogram/cpu-kernels.js';
import { TASKS } from '../../src/ops/tasks.js';
import type { Image } from '../../src/core/image.js';
import { bufferClass, CodecPool, RecycledBuffers } from '../../src/node/codec-pool.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';

test('task table: one entry per name, the worker side of forBlocks included; a name defined twice is refused', () => {
  assert.equal(TASKS.get(histogramTask.name), histogramTask);
  assert.ok(TASKS.has('core.blocks'));
  assert.throws(() => taskTable([histogramTask, defineTask(histogramTask.name, () => 0)]), /CPU task 'histogram.range' is defined twice/);
});

test('forChunks: the chunks cover [0, n) once, each given the caller\'s arguments with its start and end', async () => {
  const seen = defineTask('test.ranges', ({ tag, start, end }: { tag: string } & Range) => `${tag}:${start}-${end}`);
  assert.deepEqual(await forChunks(new InlinePool(), 10, 1, seen, { tag: 'a' }), ['a:0-10']);
  const fake = Object.assign(new InlinePool(), { size: 3 });
  assert.deepEqual(await forChunks(fake, 10, 1, seen, { tag: 'b' }), ['b:0-4', 'b:4-8', 'b:8-10']);
});

test('a worker pool refuses a task its workers do not know, naming it', async () => {
  const pool = new NodeWorkerPool(1);
  try {
    await assert.rejects(pool.run(defineTask('test.unknown', () => 1), {}), /CPU task 'test.unknown' is not in the workers' table/);
  } finally {
    await pool.close();
  }
});

test('worker pools start their workers with the work that needs them, up to their size, and reuse them', async () => {
  const pool = new NodeWorkerPool(3);
  const codecs = new CodecPool(2);
  try {
    assert.equal(pool.started, 0, 'no task yet, no worker');
    assert.equal(codecs.started, 0);
    codecs.recycle(new SharedArrayBuffer(bufferClass(1 << 20))); // nothing to hand it to: no worker starts for it
    assert.equal(codecs.started, 0);
    const counts = await Promise.all(Array.from({ length: 5 }, (_, i) => pool.run(histogramTask, { data: new Uint8Array(64).fill(i), start: 0, end: 64, bins: 256, bits: 8 })));
    assert.equal(counts.length, 5);
    assert.equal(pool.started, 3, 'five tasks at once start the three workers the pool may have');
    await pool.run(histogramTask, { data: new Uint8Array(64), start: 0, end: 64, bins: 256, bits: 8 });
    assert.equal(pool.started, 3, 'idle workers are reused');
    const dir = mkdtempSync(join(tmpdir(), 'imgpu-codecs-'));
    const img: Image = { data: new Uint8Array(12).fill(7), shape: [3, 4], channels: 1, dtype: 'uint8' };
    await codecs.write(join(dir, 'a.png'), img);
    assert.equal(codecs.started, 1, 'one job, one worker');
    await Promise.all([codecs.read(join(dir, 'a.png'), {}), codecs.read(join(dir, 'a.png'), {}), codecs.read(join(dir, 'a.png'), {})]);
    assert.equal(codecs.started, 2, 'never more than its size');
  } finally {
    await pool.close();
    await codecs.close();
  }
});

test('recycled host buffers: a free one of the class, else the smallest free one up to twice as large, else a new one', () => {
  const pool = new RecycledBuffers(4);
  const small = pool.alloc(1 << 20);
  assert.equal(small.byteLength, bufferClass(1 << 20));
  const bigger = new SharedArrayBuffer(bufferClass(1.5 * 2 ** 20));
  const biggest = new SharedArrayBuffer(bufferClass(1.9 * 2 ** 20));
  const tooBig = new SharedArrayBuffer(bufferClass(2.5 * 2 ** 20));
  for (const b of [tooBig, biggest, bigger]) pool.give(b);
  assert.equal(pool.alloc(1.1 * 2 ** 20), bigger, 'the smallest free one that holds it');
  assert.equal(pool.alloc(1.1 * 2 ** 20), biggest);
  const fresh = pool.alloc(1.1 * 2 ** 20);
  assert.ok(fresh !== tooBig && fresh.byteLength === bufferClass(1.1 * 2 ** 20), 'not one over twice the class: a new one');
  pool.give(small);
  assert.equal(pool.alloc(1 << 20), small, 'the class itself first');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineTask, forChunks, InlinePool, taskTable, type Range } from '../../src/core/cpu/pool.js';
import { histogramTask } from '../../src/ops/histogram/cpu-kernels.js';
import { TASKS } from '../../src/ops/tasks.js';
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

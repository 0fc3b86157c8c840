import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchId, DEFAULT_SHARD, jobId, shardImages } from '../../src/engine/scale/jobs.js';
import type { Job } from '../../src/engine/batch/plan.js';

const image = (input: string, mtimeMs = 1): Job => ({ input: `/in/${input}`, output: `/out/${input}`, key: input, bytes: 100, mtimeMs });

test('scale jobs: shards of --shard images in order, a volume alone', () => {
  const photos = Array.from({ length: 70 }, (_, i) => image(`p${i}.jpg`));
  const jobs = shardImages([...photos.slice(0, 40), image('ct.nii.gz'), ...photos.slice(40)], DEFAULT_SHARD);
  assert.deepEqual(jobs.map((j) => j.length), [32, 1, 32, 6]);
  assert.equal(jobs[1][0].input, '/in/ct.nii.gz');
  assert.deepEqual(jobs.flat().filter((i) => i.input.endsWith('.jpg')).map((i) => i.input), photos.map((p) => p.input), 'every photo once, in order');
});

test('scale jobs: an id derives from the images (path, size, mtime, output) and the recipe, and holds no ":"', () => {
  const a = [image('a.png'), image('b.png')];
  assert.equal(jobId(a, 'r'), jobId([image('a.png'), image('b.png')], 'r'), 'the same work, the same id');
  assert.notEqual(jobId(a, 'r'), jobId(a, 'r2'), 'another recipe');
  assert.notEqual(jobId(a, 'r'), jobId([image('a.png', 2), image('b.png')], 'r'), 'an input modified since');
  assert.notEqual(jobId(a, 'r'), jobId([{ ...image('a.png'), output: '/elsewhere/a.png' }, image('b.png')], 'r'), 'another output');
  assert.match(jobId(a, 'r'), /^j[0-9a-f]{32}$/);
  assert.equal(batchId([jobId(a, 'r')]), batchId([jobId(a, 'r')]));
  assert.notEqual(batchId([jobId(a, 'r')]), batchId([jobId(a, 'r2')]));
});

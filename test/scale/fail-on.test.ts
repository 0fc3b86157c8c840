import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { createWorker, status, submit, watch, type BatchStatus } from '../../src/scale.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { redisServerOrSkip, startRedis } from '../helpers/redis.js';

// --fail-on on the queue: the submitter's failOn travels in each job's payload and the worker reads with it.

const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

/** The batch watched to its end by a worker created in-process (closed before the test's redis-server stops). */
async function runToEnd(url: string, batch: string): Promise<BatchStatus> {
  const w = await createWorker({ redis: url, device: 'cpu', threads: 1 });
  let last: BatchStatus | undefined;
  try {
    for await (const r of watch({ redis: url, batch, intervalMs: 200 })) if ('status' in r) last = r.status;
  } finally {
    await w.close();
  }
  return last!;
}

test('scale-out --fail-on: a truncated JPEG fails by default; submitted with failOn none it is another job, the worker reads it through, and its output is the local command\'s with --fail-on none', { skip, timeout: 240_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { url } = await startRedis(t, binary);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-scale-failon-'));
  const inDir = join(dir, 'in');
  mkdirSync(inDir);
  copyFileSync(fixture('jpeg-damaged', 'truncated.jpg'), join(inDir, 'truncated.jpg'));
  const out = join(dir, 'out');

  const strict = await submit({ redis: url, inputs: [inDir], out, pipeline: 'gamma --gamma 0.8', format: 'png' });
  const refused = await runToEnd(url, strict.batch);
  assert.deepEqual({ done: refused.images_done, failed: refused.images_failed }, { done: 0, failed: 1 });
  assert.match(refused.failures[0].message, /truncated/);

  const lenient = await submit({ redis: url, inputs: [inDir], out, pipeline: 'gamma --gamma 0.8', format: 'png', failOn: 'none' });
  assert.notEqual(lenient.batch, strict.batch, 'other work: another batch');
  assert.equal(lenient.jobs, 1);
  const read = await runToEnd(url, lenient.batch);
  assert.deepEqual({ done: read.images_done, failed: read.images_failed }, { done: 1, failed: 0 });
  const local = join(dir, 'local.png');
  const r = cli('pipeline', join(inDir, 'truncated.jpg'), local, 'gamma --gamma 0.8', '--device', 'cpu', '--fail-on', 'none');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(readFileSync(join(out, 'truncated.png')).equals(readFileSync(local)), 'the same bytes as the local command');
  assert.deepEqual((await status({ redis: url, batch: lenient.batch })).failures, []);
  await assert.rejects(submit({ redis: url, inputs: [inDir], out, pipeline: 'equalize', failOn: 'some' as never }), /option `failOn` must be one of none\|truncated\|error\|warning/);
});

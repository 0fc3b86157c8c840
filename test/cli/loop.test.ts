import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileAccessError, GpuDeviceLostError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { eachImage, FileImages, type ImageSource, type LoopJob, type Next } from '../../src/engine/batch/loop.js';
import type { CodecPool } from '../../src/node/codec-pool.js';
import { Progress } from '../../src/engine/batch/report.js';

// The loop shared by batch mode and detection (src/engine/batch/loop.ts), driven by a source of n tiny images whose
// steps and keeps log what they do, in the order they do it.

const image = (): Image => ({ data: new Uint8Array(1), shape: [1, 1], dtype: 'uint8', channels: 1 }) as Image;

function source(n: number, unreadable: number[] = []): ImageSource<LoopJob> {
  let i = 0;
  return {
    async next(): Promise<Next<LoopJob> | undefined> {
      if (i >= n) return undefined;
      const job = { input: `f${i}`, bytes: 10 };
      return unreadable.includes(i++) ? { job, error: new FileAccessError(`${job.input} is not a readable image`) } : { job, img: image() };
    },
  };
}

const quiet = () => new Progress(undefined, { quiet: true });

test('pipelined: image k+1 is stepped (submitted) before image k is kept (read back), and k is kept before k+2 is stepped', async () => {
  const log: string[] = [];
  const t = await eachImage(source(4), async (job) => {
    log.push(`step ${job.input}`);
    await new Promise((r) => setTimeout(r, 1));
    return async () => {
      await new Promise((r) => setTimeout(r, 3)); // a slow readback must not let the next step overtake it
      log.push(`keep ${job.input}`);
    };
  }, { depth: 1, window: 1, pipelined: true, progress: quiet(), onFailure: 'stop' });
  assert.deepEqual(log, ['step f0', 'step f1', 'keep f0', 'step f2', 'keep f1', 'step f3', 'keep f2', 'keep f3']);
  assert.equal(t.processed, 4);
  assert.equal(t.bytes, 40);
});

test('failures: an unreadable file and a failing step are counted and the others done; onFailure stop ends the run with the error', async () => {
  const step = async (job: LoopJob) => {
    if (job.input === 'f2') throw new FileAccessError('f2 broke');
    return async () => undefined;
  };
  const t = await eachImage(source(5, [1]), step, { depth: 1, window: 2, progress: quiet(), onFailure: 'count' });
  assert.equal(t.processed, 3);
  assert.deepEqual(t.failed.map((f) => f.file), ['f1', 'f2']);
  assert.match(t.failed[1].message, /f2 broke/);
  const kept: string[] = [];
  await assert.rejects(eachImage(source(5), async (job) => {
    if (job.input === 'f2') throw new FileAccessError('f2 broke');
    return async () => void kept.push(job.input);
  }, { depth: 1, window: 1, pipelined: true, progress: quiet(), onFailure: 'stop' }), /f2 broke/);
  assert.deepEqual(kept, ['f0'], 'f1 waits for a later step that never comes: the run ends with the error');
});

test('fatal errors end the run whatever onFailure says (a queue worker\'s lost GPU device); the others are counted', async () => {
  const kept: string[] = [];
  const step = async (job: LoopJob) => {
    if (job.input === 'f1') throw new FileAccessError('f1 broke');
    if (job.input === 'f3') throw new GpuDeviceLostError('the GPU device was lost');
    return async () => void kept.push(job.input);
  };
  await assert.rejects(eachImage(source(6), step, { depth: 1, window: 1, progress: quiet(), onFailure: 'count', fatal: (e) => e instanceof GpuDeviceLostError }), GpuDeviceLostError);
  assert.deepEqual(kept, ['f0', 'f2'], 'nothing after the lost device is started');
});

test('a deadline stops the loop before the next image (--timeout), and says so', async () => {
  let stepped = 0;
  const t = await eachImage(source(5), async () => {
    stepped++;
    return async () => undefined;
  }, { depth: 1, window: 1, progress: quiet(), onFailure: 'say', deadline: -1 });
  assert.equal(stepped, 0);
  assert.equal(t.stopped, true);
});

test('FileImages.drain waits for the reads still in flight and disposes of their images (a run ended early, before its GPU context is destroyed)', async () => {
  const jobs: LoopJob[] = ['a', 'b', 'c', 'd', 'e'].map((input) => ({ input, bytes: 1 }));
  const finished: string[] = [];
  const reader = async (j: LoopJob) => {
    await new Promise((r) => setTimeout(r, 20));
    finished.push(j.input);
    if (j.input === 'c') throw new FileAccessError('unreadable');
    return j.input;
  };
  const source = new FileImages<LoopJob, string>(undefined as unknown as CodecPool, jobs, {}, 3, reader);
  assert.equal(((await source.next()) as { img: string }).img, 'a');
  const disposed: string[] = [];
  await source.drain((img) => disposed.push(img));
  assert.deepEqual(disposed, ['b', 'd'], 'the reads in flight (window 3 after the first), the failed one left out');
  assert.deepEqual(finished.sort(), ['a', 'b', 'c', 'd'], 'nothing is still running, nothing new was started');
});

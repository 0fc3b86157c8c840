import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { compareImages } from '../../src/core/compare.js';
import { readImage } from '../../src/io/index.js';
import { parseRedisUrl, redisConnection } from '../../src/engine/scale/connection.js';
import type { ScaleJobData, ScaleJobProgress, ScaleJobResult } from '../../src/engine/scale/jobs.js';
import { queueModules } from '../../src/engine/scale/modules.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { freePort } from '../helpers/process.js';
import { redisServerOrSkip, startRedis } from '../helpers/redis.js';

// Scale-out with a real Redis server started by the test (test/helpers/redis.ts).

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const PIPELINE = 'clahe --clip 2 | gamma --gamma 0.8';
const QUEUE = 'imgpu';

/** Worker C's device: the GPU where there is an adapter (required with IMGPU_REQUIRE_GPU=1), else the CPU. */
async function gpuDevice(): Promise<'gpu' | 'cpu'> {
  try {
    (await createNodeGpuContext()).destroy();
    return 'gpu';
  } catch (e) {
    if (process.env.IMGPU_REQUIRE_GPU === '1') throw e;
    return 'cpu';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An `imgpu worker` process; its stderr kept for messages. */
function startWorker(t: TestContext, url: string, args: string[], env: Record<string, string> = {}): { proc: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, 'worker', '--redis', url, '--threads', '1', '--stall-ms', '1500', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, IMGPU_CODEC_THREADS: '1', ...env },
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  t.after(() => proc.kill('SIGKILL'));
  return { proc, stderr: () => err, exit };
}

/** Six real images, four copies each under other names, and a corrupt file. */
function imageFolder(): { dir: string; inDir: string; sources: Map<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-scale-'));
  const inDir = join(dir, 'in');
  mkdirSync(inDir);
  const sources = new Map<string, string>();
  for (let k = 0; k < 4; k++) {
    for (const f of ['camera.png', 'coins.png', 'moon.png', 'page.png', 'chelsea.png', 'camera_301x256.png']) {
      copyFileSync(fileURLToPath(new URL(`../../../test/fixtures/images/${f}`, import.meta.url)), join(inDir, `${k}-${f}`));
      sources.set(`${k}-${f}`, f);
    }
  }
  writeFileSync(join(inDir, 'corrupt.png'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(200, 7)]));
  return { dir, inDir, sources };
}

/** The queue as the test reads it (job states, progress, results). */
async function openQueue(t: TestContext, url: string): Promise<Queue<ScaleJobData, ScaleJobResult>> {
  const connection = redisConnection(await queueModules(), parseRedisUrl(url));
  connection.on('error', () => undefined);
  const q = new Queue<ScaleJobData, ScaleJobResult>(QUEUE, { connection });
  t.after(async () => {
    await q.close();
    // disconnect, not quit: hooks run in the order registered, so the test's redis-server has been stopped already.
    connection.disconnect();
  });
  return q;
}

test('scale-out: 3 workers (one killed with SIGKILL mid-job, one on the GPU), every image once, outputs equal the single-image command, status counts right, a second submit enqueues nothing', async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const device = await gpuDevice();
  const { url } = await startRedis(t, binary);
  const { dir, inDir, sources } = imageFolder();
  const out = join(dir, 'out');
  const submit = cli('submit', inDir, out, PIPELINE, '--redis', url, '--shard', '5', '--json');
  assert.equal(submit.status, 0, submit.stderr);
  const s = JSON.parse(submit.stdout);
  assert.deepEqual({ jobs: s.jobs, images: s.images }, { jobs: 5, images: 25 });
  const q = await openQueue(t, url);

  // Worker A alone, until it holds a job with some of its images written: then SIGKILL. A writes 2 images of its job
  // and then hangs (IMGPU_TEST_HANG_AFTER, test-only): killed at a known point of the job, never after its end.
  const a = startWorker(t, url, ['--device', 'cpu'], { IMGPU_TEST_HANG_AFTER: '2' });
  const victim = await (async () => {
    const end = Date.now() + 120_000;
    while (Date.now() < end) {
      for (const j of await q.getActive()) {
        const p = j.progress as ScaleJobProgress | number;
        if (typeof p === 'object' && p.done.length >= 2 && p.done.length < p.total) return { id: j.id!, done: p.done.length };
      }
      await sleep(10);
    }
    throw new Error(`worker A never held a job half done: ${a.stderr()}`);
  })();
  a.proc.kill('SIGKILL');
  assert.equal(await a.exit, null, 'killed');

  // Workers B (CPU) and C (the GPU: lavapipe in CI; the CPU where there is no adapter) take over; the killed job comes back after the stall interval.
  const b = startWorker(t, url, ['--device', 'cpu']);
  const c = startWorker(t, url, ['--device', device]);
  // A 4th process watches the batch to its end.
  const status = spawnSync(process.execPath, [BIN, 'status', s.batch, '--redis', url, '--watch', '--json', '--interval', '0.5'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(status.status, 9, `some image failed: exit 9\n${status.stderr}\n${b.stderr()}\n${c.stderr()}`);
  const final = JSON.parse(status.stdout.trim().split('\n').pop()!);
  assert.deepEqual(
    { waiting: final.waiting, active: final.active, completed: final.completed, failed: final.failed, images: final.images, images_done: final.images_done, images_failed: final.images_failed },
    { waiting: 0, active: 0, completed: 5, failed: 0, images: 25, images_done: 24, images_failed: 1 },
  );
  assert.equal(final.failures.length, 1);
  assert.equal(basename(final.failures[0].file), 'corrupt.png');
  assert.match(final.failures[0].message, /not a readable image/);
  assert.ok(final.images_per_s > 0);

  // Each image done exactly once, counted from the jobs' results; the killed job's written images not redone.
  const results = (await q.getCompleted()).map((j) => ({ id: j.id, r: j.returnvalue }));
  assert.equal(results.length, 5);
  const seen = results.flatMap(({ r }) => [...r.written, ...r.earlier, ...r.failed.map((f) => f.file)]).map((f) => basename(f)).sort();
  assert.deepEqual(seen, [...sources.keys(), 'corrupt.png'].sort(), 'every input once');
  const redone = results.find((x) => x.id === victim.id)!.r;
  assert.ok(redone.earlier.length >= victim.done, `the killed job's ${victim.done} written images were kept: ${JSON.stringify(redone)}`);
  assert.ok([b.proc.pid, c.proc.pid].map(String).includes(redone.worker.split(':')[1]), `the killed job was finished by B or C: ${redone.worker}`);

  // Every output bit-identical to the single-image command (one per distinct image).
  const single = new Map<string, string>();
  for (const f of new Set(sources.values())) {
    const p = join(dir, `single-${f}`);
    const r = cli('pipeline', join(inDir, `0-${f}`), p, PIPELINE, '--device', 'cpu');
    assert.equal(r.status, 0, r.stderr);
    single.set(f, p);
  }
  for (const [name, f] of sources) assert.ok(compareImages(await readImage(join(out, name)), await readImage(single.get(f)!)).identical, name);
  assert.deepEqual(readdirSync(out).filter((f) => f.startsWith('.')), [], 'no temporary files left');

  // The same batch again: nothing enqueued.
  const again = JSON.parse(cli('submit', inDir, out, PIPELINE, '--redis', url, '--shard', '5', '--json').stdout);
  assert.deepEqual({ batch: again.batch, jobs: again.jobs, images: again.images }, { batch: s.batch, jobs: 0, images: 0 });

  // SIGTERM: the workers drain and exit 0.
  b.proc.kill('SIGTERM');
  c.proc.kill('SIGTERM');
  assert.equal(await b.exit, 0, b.stderr());
  assert.equal(await c.exit, 0, c.stderr());
});

test('scale-out: an output folder that cannot be made fails its job with the reason (the worker goes on), retry re-queues it; after a Redis restart the worker reconnects and works; SIGTERM mid-job finishes the job and exits 0', async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const redis = await startRedis(t, binary);
  const { dir, inDir } = imageFolder();
  rmSync(join(inDir, 'corrupt.png'));
  const out = join(dir, 'out');
  const s = JSON.parse(cli('submit', join(inDir, '0-camera.png'), join(inDir, '0-coins.png'), out, 'equalize', '--redis', redis.url, '--json').stdout);
  assert.equal(s.jobs, 1);
  rmSync(out, { recursive: true });
  writeFileSync(out, 'a file where the output folder was');
  const w = startWorker(t, redis.url, ['--device', 'cpu']);
  const failed = spawnSync(process.execPath, [BIN, 'status', s.batch, '--redis', redis.url, '--watch', '--json', '--interval', '0.3'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(failed.status, 9, failed.stderr);
  const st = JSON.parse(failed.stdout.trim().split('\n').pop()!);
  assert.deepEqual({ completed: st.completed, failed: st.failed, images_failed: st.images_failed }, { completed: 0, failed: 1, images_failed: 2 });
  assert.match(st.failures[0].message, /cannot create the output folder .*out/);
  rmSync(out);
  const retry = cli('retry', s.batch, '--redis', redis.url, '--json');
  assert.equal(retry.status, 0, retry.stderr);
  assert.equal(JSON.parse(retry.stdout).retried, 1);
  const done = spawnSync(process.execPath, [BIN, 'status', s.batch, '--redis', redis.url, '--watch', '--json', '--interval', '0.3'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(done.status, 0, done.stderr);
  assert.equal(JSON.parse(done.stdout.trim().split('\n').pop()!).images_done, 2);

  // Redis restarts (empty: nothing is saved in the test); the worker, still running, reconnects and takes new work.
  redis.proc.kill('SIGKILL');
  await new Promise((r) => redis.proc.once('exit', r));
  await sleep(500);
  const again = await startRedis(t, binary, { port: redis.port });
  const s2 = JSON.parse(cli('submit', join(inDir, '1-moon.png'), out, 'equalize', '--redis', again.url, '--json').stdout);
  const after = spawnSync(process.execPath, [BIN, 'status', s2.batch, '--redis', again.url, '--watch', '--json', '--interval', '0.3'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(after.status, 0, `${after.stderr}\n${w.stderr()}`);
  assert.equal(JSON.parse(after.stdout.trim().split('\n').pop()!).images_done, 1);
  // SIGTERM while the worker holds a job: it finishes that job (all its images, by this worker), then exits 0.
  const s3 = JSON.parse(cli('submit', inDir, join(dir, 'out3'), 'equalize', '--redis', again.url, '--shard', '24', '--json').stdout);
  assert.equal(s3.jobs, 1);
  const q = await openQueue(t, again.url);
  for (const end = Date.now() + 120_000; ; await sleep(10)) {
    if ((await q.getActive()).some((j) => typeof j.progress === 'object' && (j.progress as ScaleJobProgress).done.length >= 1)) break;
    assert.ok(Date.now() < end, `the worker never started the job: ${w.stderr()}`);
  }
  w.proc.kill('SIGTERM');
  assert.equal(await w.exit, 0, w.stderr());
  const [drained] = await q.getCompleted();
  assert.equal(drained?.returnvalue.worker.split(':')[1], String(w.proc.pid), 'completed by the worker told to stop');
  assert.equal(drained.returnvalue.written.length, 24);
  // (Read once it has ended: spawnSync above kept this process from reading the worker's stderr meanwhile.)
  assert.match(w.stderr(), /job \S+ failed: cannot create the output folder/);
  assert.match(w.stderr(), /unreachable.*reconnecting\n.*reconnected to/);
});

test('scale-out: a bad --redis URL or a server that is not there is a one-line error at once (exit 2, 7), not a hang', async () => {
  assertOneLineError(cli('status', 'b1', '--redis', 'not a url'), 2, /--redis must be a URL/);
  assertOneLineError(cli('submit', 'in', 'out', 'equalize', '--redis', 'http://127.0.0.1:1'), 2, /--redis must start with redis:\/\/, rediss:\/\/ \(TLS\) or unix:\/\//);
  const port = await freePort(); // nothing listens there
  assertOneLineError(cli('worker', '--redis', `redis://127.0.0.1:${port}`, '--device', 'cpu'), 7, /cannot reach the Redis server at redis:\/\/127\.0\.0\.1:\d+: connection refused/);
  assertOneLineError(cli('status', 'b1', '--redis', 'unix:///nonexistent/redis.sock'), 7, /no such socket/);
  assertOneLineError(cli('worker', '--redis', 'redis://127.0.0.1:6379', '--concurrency', '0'), 2, /--concurrency must be an integer/);
});

test('scale-out: a password the server refuses is exit 7 with its answer, the password not shown; the right one works', async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { port } = await startRedis(t, binary, { password: 's3cret' });
  assertOneLineError(cli('status', 'b1', '--redis', `redis://:wrong@127.0.0.1:${port}`), 7, /the Redis server at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ refused the connection: WRONGPASS/);
  assertOneLineError(cli('status', 'b1', '--redis', `redis://:s3cret@127.0.0.1:${port}/3`), 2, /no batch b1 on queue imgpu/);
});

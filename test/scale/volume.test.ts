import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { allocPixels, type Image } from '../../src/core/image.js';
import { slabBytes, writeOmeZarr } from '../../src/io/chunked.js';
import { parsePipeline } from '../../src/ops/pipeline.js';
import { ALL_OPERATIONS } from '../../src/ops/registry.js';
import { parseRedisUrl, redisConnection } from '../../src/engine/scale/connection.js';
import { checkJobData, type ScaleJobData, type ScaleJobProgress, type ScaleJobResult } from '../../src/engine/scale/jobs.js';
import { queueModules } from '../../src/engine/scale/modules.js';
import { cli } from '../helpers/cli.js';
import { randomBytes } from '../helpers/fixtures.js';
import { redisServerOrSkip, startRedis } from '../helpers/redis.js';

// An OME-Zarr volume on the queue (issue 38 item 3), with a real redis-server (test/helpers/redis.ts).

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const PIPELINE = 'filter --filter gauss:2';
const SHAPE: [number, number, number] = [24, 24, 28];
const CHUNKS: [number, number, number] = [4, 16, 16];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A uint16 volume: smooth structure plus seeded noise. */
function volume(): Image {
  const [d, h, w] = SHAPE;
  const data = allocPixels('uint16', d * h * w);
  const noise = randomBytes(data.length, 7);
  for (let z = 0, i = 0; z < d; z++) for (let y = 0; y < h; y++) for (let x = 0; x < w; x++, i++) data[i] = 20000 + Math.round(15000 * Math.sin(z / 5) * Math.cos((x + y) / 7)) + noise[i] * 40;
  return { data, shape: SHAPE, channels: 1, dtype: 'uint16', geometry: { spacing: [0.5, 0.5, 1.5], origin: [1, 2, 3], direction: [1, 0, 0, 0, 1, 0, 0, 0, 1] } };
}

/** Every file of an OME-Zarr but the chunked run's manifest, with its bytes' hash (temporary files included). */
function hashes(root: string): Map<string, string> {
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => statSync(join(root, f)).isFile() && f !== '.imgpu-chunked.json');
  return new Map(files.sort().map((f) => [f, createHash('sha256').update(readFileSync(join(root, f))).digest('hex')]));
}

function startWorker(t: TestContext, url: string, args: string[], env: Record<string, string> = {}): { proc: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, 'worker', '--redis', url, '--threads', '1', '--stall-ms', '1500', '--device', 'cpu', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  t.after(() => proc.kill('SIGKILL'));
  return { proc, stderr: () => err, exit };
}

test('scale-out volume: submit in.zarr out.zarr enqueues chunk-row jobs and the pyramid level as a flow; 3 workers, one SIGKILLed mid-job: every chunk file\'s hash equals the single-process run\'s, no temporary file left, only the killed job redone, the coarser level run after the finer; status counts chunks', { timeout: 600_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { url } = await startRedis(t, binary);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-scale-zarr-'));
  const input = join(dir, 'in.zarr'), out = join(dir, 'out.zarr'), single = join(dir, 'single.zarr');
  await writeOmeZarr(input, volume(), { chunks: CHUNKS });
  const ref = cli('filter', input, single, '--filter', 'gauss:2', '--levels', '2', '--device', 'cpu', '--quiet');
  assert.equal(ref.status, 0, ref.stderr);

  const sub = cli('submit', input, out, PIPELINE, '--redis', url, '--shard', '2', '--levels', '2', '--json');
  assert.equal(sub.status, 0, sub.stderr);
  const s = JSON.parse(sub.stdout);
  // Level 0: 6 chunk rows of 2×2 chunks, 2 rows a job; level 1 (12×12×14, chunks 4×12×14): 3 rows, one job.
  assert.deepEqual({ jobs: s.jobs, chunks: s.chunks, total: s.total_chunks, images: s.images }, { jobs: 4, chunks: 27, total: 27, images: 0 });
  const connection = redisConnection(await queueModules(), parseRedisUrl(url));
  connection.on('error', () => undefined);
  const q = new Queue<ScaleJobData, ScaleJobResult>('imgpu', { connection });
  t.after(async () => {
    await q.close();
    connection.disconnect();
  });
  for (const j of await q.getJobs(['waiting', 'waiting-children'])) checkJobData(j.data); // what submit makes passes the worker's schema

  // Worker A: a budget of one chunk row a slab, so that its job (2 rows) is 2 slabs; it writes 1 and hangs (test hook).
  const [step] = parsePipeline(PIPELINE);
  const reach = ALL_OPERATIONS.filter.reach(step.params, { shape: SHAPE, dtype: 'uint16', geometry: volume().geometry })!;
  const rows = (n: number) => slabBytes(SHAPE[1] * SHAPE[2], n * CHUNKS[0], reach, 'uint16', 'uint16', CHUNKS[0]);
  const oneRow = Math.round((rows(1) + rows(2)) / 2);
  const a = startWorker(t, url, ['--memory', String(oneRow)], { IMGPU_TEST_HANG_AFTER: '1' });
  const victim = await (async () => {
    for (const end = Date.now() + 300_000; Date.now() < end; await sleep(20)) {
      if (/ failed: /.test(a.stderr())) break;
      for (const j of await q.getActive()) {
        const p = j.progress as ScaleJobProgress | number;
        if (typeof p === 'object' && p.done.length === 1 && p.total === 2) return { id: j.id!, row: Number(p.done[0]) };
      }
    }
    throw new Error(`worker A never held a job half done: ${a.stderr()}`);
  })();
  a.proc.kill('SIGKILL');
  assert.equal(await a.exit, null, 'killed');

  const b = startWorker(t, url, []);
  const c = startWorker(t, url, []);
  const watched = spawnSync(process.execPath, [BIN, 'status', s.batch, '--redis', url, '--watch', '--json', '--interval', '0.5'], { encoding: 'utf8', timeout: 400_000 });
  assert.equal(watched.status, 0, `${watched.stderr}\n${b.stderr()}\n${c.stderr()}`);
  const final = JSON.parse(watched.stdout.trim().split('\n').pop()!);
  assert.deepEqual(
    { waiting: final.waiting, active: final.active, completed: final.completed, failed: final.failed, chunks: final.chunks, chunks_done: final.chunks_done, chunks_failed: final.chunks_failed },
    { waiting: 0, active: 0, completed: 4, failed: 0, chunks: 27, chunks_done: 27, chunks_failed: 0 },
  );

  // Every chunk file (and the metadata) as the single-process run wrote it; no temporary file.
  const got = hashes(out), want = hashes(single);
  assert.deepEqual([...got.keys()], [...want.keys()], 'the same files');
  for (const [f, h] of want) assert.equal(got.get(f), h, f);

  // Only the killed job ran twice; its row written before the kill was not redone; B or C finished it.
  const done = await q.getCompleted();
  const twice = done.filter((j) => j.attemptsStarted > 1 || j.stalledCounter > 0).map((j) => j.id);
  assert.deepEqual(twice, [victim.id], 'one job redone per kill');
  const redone = done.find((j) => j.id === victim.id)!.returnvalue;
  assert.deepEqual(redone.rows, { earlier: [victim.row], written: [victim.row % 2 === 0 ? victim.row + 1 : victim.row - 1] });
  assert.ok([b.proc.pid, c.proc.pid].map(String).includes(redone.worker.split(':')[1]), redone.worker);
  // The pyramid level after every job of the level it comes from.
  const level = (l: number) => done.filter((j) => j.data.chunks!.level === l);
  assert.equal(level(1).length, 1);
  assert.ok(level(1)[0].processedOn! >= Math.max(...level(0).map((j) => j.finishedOn!)), 'level 1 started after level 0 ended');

  // The same volume again: nothing enqueued, the output kept.
  const again = JSON.parse(cli('submit', input, out, PIPELINE, '--redis', url, '--shard', '2', '--levels', '2', '--json').stdout);
  assert.deepEqual({ batch: again.batch, jobs: again.jobs }, { batch: s.batch, jobs: 0 });
  assert.deepEqual(hashes(out), want);
  b.proc.kill('SIGTERM');
  c.proc.kill('SIGTERM');
  assert.equal(await b.exit, 0, b.stderr());
  assert.equal(await c.exit, 0, c.stderr());
});

test('imgpu/scale from code: submit() with a .zarr input and in-process workers; status counts its chunk files; the output equals the local chunked run; a .zarr input with another output or a chain of steps is refused', { timeout: 300_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { url } = await startRedis(t, binary);
  const { submit, createWorker, watch, status } = await import('../../src/scale.js');
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-scale-zarr-lib-'));
  const input = join(dir, 'in.zarr'), out = join(dir, 'out.zarr'), single = join(dir, 'single.zarr');
  await writeOmeZarr(input, volume(), { chunks: CHUNKS });
  await assert.rejects(submit({ redis: url, inputs: [input], out: join(dir, 'out'), pipeline: 'gamma --gamma 0.8' }), /must end in \.zarr/);
  await assert.rejects(submit({ redis: url, inputs: [input], out, pipeline: 'gamma --gamma 0.8 | gamma --gamma 2' }), /one volume operation, got 2 steps/);
  const s = await submit({ redis: url, inputs: [input], out, pipeline: 'gamma --gamma 0.8', shard: 4 });
  assert.deepEqual({ jobs: s.jobs, chunks: s.chunks, totalChunks: s.totalChunks }, { jobs: 2, chunks: 24, totalChunks: 24 });
  const w = await createWorker({ redis: url, device: 'cpu', threads: 1 });
  try {
    for await (const r of watch({ redis: url, batch: s.batch, intervalMs: 200 })) if ('status' in r && r.status.waiting === 0 && r.status.active === 0) break;
  } finally {
    await w.close();
  }
  const st = await status({ redis: url, batch: s.batch });
  assert.deepEqual({ completed: st.completed, chunks: st.chunks, done: st.chunks_done, failed: st.chunks_failed }, { completed: 2, chunks: 24, done: 24, failed: 0 });
  const ref = cli('gamma', input, single, '--gamma', '0.8', '--device', 'cpu', '--quiet');
  assert.equal(ref.status, 0, ref.stderr);
  assert.deepEqual(hashes(out), hashes(single));
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { outsideRoots, realLocation, realRoots } from '../../src/engine/scale/confine.js';
import { parseRedisUrl, redisConnection } from '../../src/engine/scale/connection.js';
import { checkJobData, type ScaleJobData } from '../../src/engine/scale/jobs.js';
import { queueModules } from '../../src/engine/scale/modules.js';
import { createWorker, status, submit, watch, type BatchStatus } from '../../src/scale.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { redisServerOrSkip, startRedis, testCertificates } from '../helpers/redis.js';

// Scale-out jobs confined (issue 39 item 4): a worker's roots, the job payload's schema, and Redis with a password,
// an ACL user and TLS.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/imgpu.js');
const fixture = (f: string) => join(ROOT, 'test/fixtures/images', f);

const job = (over: Partial<ScaleJobData> = {}): ScaleJobData => ({
  batch: 'b0123456789abcdef', pipeline: 'equalize', write: {}, outDir: '/data/out',
  images: [{ input: '/data/in/a.png', output: '/data/out/a.png', key: 'a.png', bytes: 10, mtimeMs: 1 }], ...over,
});

test('scale jobs: a payload is checked against the schema (types, absolute normalized paths, no unknown field)', () => {
  assert.deepEqual(checkJobData(job()), job());
  assert.deepEqual(checkJobData(job({ failOn: 'none' })), job({ failOn: 'none' }));
  const bad: [unknown, RegExp][] = [
    ['a string', /the job must be an object/],
    [{ ...job(), extra: 1 }, /unknown field 'extra'/],
    [job({ batch: 'x' }), /batch must be a batch id/],
    [job({ pipeline: '' }), /pipeline must be a string/],
    [job({ outDir: 'relative/out' }), /outDir must be an absolute, normalized path/],
    [job({ images: [] }), /images must be a list of 1–/],
    [job({ images: [{ ...job().images[0], input: '/data/in/../../etc/passwd' }] }), /images\[0\]\.input must be an absolute, normalized path/],
    [job({ images: [{ ...job().images[0], bytes: -1 }] }), /images\[0\]\.bytes/],
    [{ ...job(), write: { quality: 'high' } }, /write\.quality must be an integer/],
    [{ ...job(), failOn: 'all' }, /failOn must be one of none\|truncated\|error\|warning/],
  ];
  const chunkJob = job({ outDir: '/data/out.zarr', images: [], chunks: { input: '/data/in.zarr', output: '/data/out.zarr', level: 0, rows: [2, 4], chunks: 8 } });
  assert.deepEqual(checkJobData(chunkJob), chunkJob, 'a volume\'s chunk job');
  bad.push(
    [{ ...chunkJob, images: job().images }, /images must be empty in a chunk job/],
    [{ ...chunkJob, chunks: { ...chunkJob.chunks!, rows: [4, 4] } }, /chunks\.rows must be \[first, end\)/],
    [{ ...chunkJob, chunks: { ...chunkJob.chunks!, output: '/data/out' } }, /chunks\.output must be a \.zarr path/],
    [{ ...chunkJob, chunks: { ...chunkJob.chunks!, input: '/data/../in.zarr' } }, /chunks\.input must be an absolute, normalized path/],
    [{ ...chunkJob, chunks: { ...chunkJob.chunks!, level: 99 } }, /chunks\.level must be an integer/],
    [{ ...chunkJob, chunks: { ...chunkJob.chunks!, extra: 1 } }, /chunks has an unknown field 'extra'/],
  );
  for (const [data, why] of bad) assert.throws(() => checkJobData(data), (e: Error) => /^malformed job: /.test(e.message) && why.test(e.message), JSON.stringify(data));
});

/** roots/in (two images), roots/link → outside, outside/in (an image): the folders of the confinement tests. */
function confinedFolders(): { root: string; outside: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'imgpu-confine-')));
  const root = join(dir, 'root'), outside = join(dir, 'outside');
  for (const d of [join(root, 'in'), join(outside, 'in')]) mkdirSync(d, { recursive: true });
  copyFileSync(fixture('camera.png'), join(root, 'in', 'camera.png'));
  copyFileSync(fixture('coins.png'), join(root, 'in', 'coins.png'));
  copyFileSync(fixture('moon.png'), join(outside, 'in', 'moon.png'));
  symlinkSync(outside, join(root, 'link'));
  return { root, outside };
}

test('scale roots: paths resolved through links and not made yet; every path of a job checked (inputs, outputs, output folder, the pipeline\'s files)', async () => {
  const { root, outside } = confinedFolders();
  const roots = await realRoots([root]);
  assert.equal(await realLocation(join(root, 'link', 'in', 'moon.png')), join(outside, 'in', 'moon.png'));
  assert.equal(await realLocation(join(root, 'link', 'new', 'x.png')), join(outside, 'new', 'x.png'), 'a path not made yet, under a link');
  const inside = job({ outDir: join(root, 'out'), images: [{ input: join(root, 'in', 'camera.png'), output: join(root, 'out', 'camera.png'), key: 'camera.png', bytes: 1, mtimeMs: 1 }] });
  assert.equal(await outsideRoots(inside, roots), undefined);
  assert.deepEqual(await outsideRoots({ ...inside, images: [{ ...inside.images[0], input: join(root, 'link', 'in', 'moon.png') }] }, roots), { path: join(root, 'link', 'in', 'moon.png'), real: join(outside, 'in', 'moon.png') });
  assert.equal((await outsideRoots({ ...inside, outDir: join(outside, 'out') }, roots))?.path, join(outside, 'out'));
  assert.equal((await outsideRoots({ ...inside, pipeline: `morph --op erode --se mask:${join(outside, 'se.npy')}` }, roots))?.path, join(outside, 'se.npy'));
  assert.equal((await outsideRoots({ ...inside, pipeline: `filter --filter kernel:${join(root, 'k.json')}` }, roots)), undefined);
  await assert.rejects(realRoots([join(root, 'missing')]), /option `roots`: no such folder/);
  // A volume's chunk job: its input and output OME-Zarr are checked too (the output through a link, not made yet).
  const volume = job({ outDir: join(root, 'out.zarr'), images: [], chunks: { input: join(root, 'in.zarr'), output: join(root, 'out.zarr'), level: 0, rows: [0, 1], chunks: 1 } });
  assert.equal(await outsideRoots(volume, roots), undefined);
  assert.deepEqual(await outsideRoots({ ...volume, chunks: { ...volume.chunks!, input: join(outside, 'in.zarr') } }, roots), { path: join(outside, 'in.zarr'), real: join(outside, 'in.zarr') });
  assert.deepEqual(await outsideRoots({ ...volume, chunks: { ...volume.chunks!, output: join(root, 'link', 'out.zarr') } }, roots), { path: join(root, 'link', 'out.zarr'), real: join(outside, 'out.zarr') });
});

/** An `imgpu worker` process; its stderr kept for messages. */
function startWorker(t: TestContext, args: string[]): { stderr: () => string } {
  const proc = spawn(process.execPath, [BIN, 'worker', '--threads', '1', '--device', 'cpu', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, IMGPU_CODEC_THREADS: '1' } });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  t.after(() => proc.kill('SIGKILL'));
  return { stderr: () => err };
}

/** A batch watched to its end. */
async function finished(redis: string, batch: string, tls?: { ca: Buffer }): Promise<BatchStatus> {
  let last: BatchStatus | undefined;
  for await (const r of watch({ redis, tls, batch, intervalMs: 200 })) if ('status' in r) last = r.status;
  return last!;
}

test('scale-out: a worker started with --root refuses a job naming a path outside (directly or through a link) with the reason, unrun; a malformed payload fails only its job; the worker goes on', { timeout: 240_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { url } = await startRedis(t, binary);
  const { root, outside } = confinedFolders();
  const w = startWorker(t, ['--redis', url, '--root', root, '--root', join(ROOT, 'test/fixtures')]);

  const direct = await submit({ redis: url, inputs: [join(outside, 'in', 'moon.png')], out: join(root, 'out1'), pipeline: 'equalize' });
  const linked = await submit({ redis: url, inputs: [join(root, 'link', 'in', 'moon.png')], out: join(root, 'out2'), pipeline: 'equalize' });
  const written = await submit({ redis: url, inputs: [join(root, 'in', 'camera.png')], out: join(outside, 'out3'), pipeline: 'equalize' });
  // Anyone who can write to the queue: a payload that is not what submit makes.
  const m = await queueModules();
  const connection = redisConnection(m, parseRedisUrl(url));
  const q = new m.bullmq.Queue('imgpu', { connection });
  t.after(async () => {
    await q.close();
    connection.disconnect();
  });
  const junk = await q.add('pipeline', { batch: 'bnot-a-batch', images: '/etc/passwd' });
  const good = await submit({ redis: url, inputs: [join(root, 'in')], out: join(root, 'out4'), pipeline: 'equalize' });

  for (const [s, path] of [[direct, join(outside, 'in', 'moon.png')], [linked, join(root, 'link', 'in', 'moon.png')], [written, join(outside, 'out3')]] as const) {
    const st = await finished(url, s.batch);
    assert.deepEqual({ failed: st.failed, completed: st.completed }, { failed: 1, completed: 0 }, path);
    assert.ok(st.failures[0].message.startsWith(`refused: ${path}`), st.failures[0].message);
    assert.match(st.failures[0].message, /is outside the worker's roots \(.*\/root, .*\/test\/fixtures\)$/);
  }
  assert.equal(existsSync(join(root, 'out1', 'moon.png')) || existsSync(join(root, 'out2', 'moon.png')) || existsSync(join(outside, 'out3', 'camera.png')), false, 'nothing written for a refused job');
  const st = await finished(url, good.batch);
  assert.deepEqual({ completed: st.completed, images_done: st.images_done }, { completed: 1, images_done: 2 }, 'the worker went on');
  assert.ok(existsSync(join(root, 'out4', 'camera.png')));
  // Taken before the good job (one job at a time, in order), so finished by now.
  const failed = await m.bullmq.Job.fromId(q, junk.id!);
  assert.equal(await failed?.getState(), 'failed');
  assert.equal(failed!.failedReason, "malformed job: batch must be a batch id (b and 16 hex digits)");
  assert.match(w.stderr(), /confined to .*\/root/);
  assert.match(w.stderr(), new RegExp(`job ${junk.id} failed: malformed job`));
});

test('scale-out with Redis secured: an ACL user with a password over TLS (rediss://, a CA of the test\'s own) submits and works a batch; a wrong password, no CA, or plain redis:// to the TLS port are one-line errors (exit 7)', { timeout: 240_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const certs = testCertificates(t);
  const tls = { ca: readFileSync(certs.ca) };
  const { port } = await startRedis(t, binary, {
    tls,
    url: (p) => `rediss://imgpu:s3cret@127.0.0.1:${p}`,
    // The default user off: only the ACL user, on the queue's keys (BullMQ's prefix 'bull').
    args: ['--tls-cert-file', certs.cert, '--tls-key-file', certs.key, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no',
      '--user', 'default', 'off', '--user', 'imgpu', 'on', '>s3cret', '~bull:*', '&*', '+@all'],
  });
  const url = `rediss://imgpu:s3cret@127.0.0.1:${port}`;
  assertOneLineError(cli('status', 'b1', '--redis', url, '--tls-ca', certs.ca), 2, /no batch b1 on queue imgpu at rediss:\/\/imgpu:\*\*\*@127\.0\.0\.1/);
  assertOneLineError(cli('status', 'b1', '--redis', `rediss://imgpu:wrong@127.0.0.1:${port}`, '--tls-ca', certs.ca), 7, /refused the connection: WRONGPASS/);
  assertOneLineError(cli('status', 'b1', '--redis', url), 7, /cannot reach the Redis server at rediss:.*: self[- ]signed certificate/);
  assertOneLineError(cli('status', 'b1', '--redis', `redis://imgpu:s3cret@127.0.0.1:${port}`), 7, /cannot reach the Redis server/);
  assertOneLineError(cli('status', 'b1', '--redis', `redis://127.0.0.1:${port}`, '--tls-ca', certs.ca), 2, /--tls-ca, --tls-cert and --tls-key are for a rediss:\/\/ server, got --redis redis:\/\/127\.0\.0\.1:\d+$/);

  const dir = mkdtempSync(join(tmpdir(), 'imgpu-tls-batch-'));
  const s = await submit({ redis: url, tls, inputs: [fixture('camera.png'), fixture('coins.png')], out: join(dir, 'out'), pipeline: 'equalize' });
  const worker = await createWorker({ redis: url, tls, device: 'cpu', threads: 1 });
  let st: BatchStatus;
  try {
    st = await finished(url, s.batch, tls);
  } finally {
    await worker.close(); // here, not in t.after: the after hooks stop the redis-server first
  }
  assert.deepEqual({ completed: st.completed, images_done: st.images_done }, { completed: 1, images_done: 2 });
  assert.deepEqual(await status({ redis: url, tls, batch: s.batch }), st);
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createWorker, status, submit, watch, type BatchStatus, type WorkerEvent } from '../../src/scale.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { redisServerOrSkip, startRedis } from '../helpers/redis.js';

// imgpu/scale from code (the package's entry, src/scale.ts): a batch submitted and worked by workers created
// in-process, and what importing the package loads.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/imgpu.js');
const PIPELINE = 'clahe --clip 2 | gamma --gamma 0.8';

/** Runs an ES module script in a child process from the package's folder ('imgpu' resolves to the package itself). */
function nodeScript(script: string, args: string[] = []) {
  return spawnSync(process.execPath, [...args, '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
}

/** A module hook that records every module resolved (import and require), in globalThis.__resolved. */
const RECORD_RESOLVED = `
import { registerHooks } from 'node:module';
globalThis.__resolved = [];
registerHooks({ resolve(s, c, next) { const r = next(s, c); globalThis.__resolved.push(r.url); return r; } });
const queue = () => globalThis.__resolved.filter((u) => /\\/node_modules\\/(bullmq|ioredis)\\//.test(u)).length;
`;

test('import "imgpu" and "imgpu/scale" load no module of bullmq or ioredis; the first scale-out call does', { timeout: 120_000 }, () => {
  const r = nodeScript(`${RECORD_RESOLVED}
    await import('imgpu');
    const root = queue();
    const scale = await import('imgpu/scale');
    const entry = queue();
    await scale.status({ redis: 'redis://127.0.0.1:1', batch: 'b0' }).catch(() => undefined);
    console.log(JSON.stringify({ root, entry, called: queue() }));`);
  assert.equal(r.status, 0, r.stderr);
  const n = JSON.parse(r.stdout);
  assert.equal(n.root, 0, 'import "imgpu" loaded bullmq or ioredis');
  assert.equal(n.entry, 0, 'import "imgpu/scale" loaded bullmq or ioredis');
  assert.ok(n.called > 0, 'the hook sees them once a call loads them (the check above can fail)');
});

/** A hook file that makes bullmq and ioredis not found, as in an install without the optional peers. */
function withoutQueuePackages(): string {
  const hook = join(mkdtempSync(join(tmpdir(), 'imgpu-nopeers-')), 'hook.mjs');
  writeFileSync(hook, `import { registerHooks } from 'node:module';
registerHooks({ resolve(s, c, next) {
  if (s === 'bullmq' || s === 'ioredis') throw Object.assign(new Error("Cannot find package '" + s + "'"), { code: 'ERR_MODULE_NOT_FOUND' });
  return next(s, c);
} });`);
  return hook;
}

test('without bullmq and ioredis: imgpu/scale\'s calls and imgpu submit|worker|status|retry fail with one line naming what to install (exit 6)', { timeout: 240_000 }, () => {
  const hook = withoutQueuePackages();
  const lib = nodeScript(`const scale = await import('imgpu/scale');
    const e = await scale.createWorker({ redis: 'redis://127.0.0.1:1' }).then(() => undefined, (e) => e);
    console.log(JSON.stringify({ name: e?.name, code: e?.code, missing: e instanceof scale.MissingDependencyError, message: e?.message }));`, ['--import', hook]);
  assert.equal(lib.status, 0, lib.stderr);
  const e = JSON.parse(lib.stdout);
  assert.deepEqual({ code: e.code, missing: e.missing }, { code: 'MISSING_DEPENDENCY', missing: true });
  assert.match(e.message, /needs the optional packages bullmq and ioredis.*npm install bullmq@\^6\.7\.0 ioredis@\^6\.0\.0$/);
  const say = /^imgpu: error: scale-out .* needs the optional packages bullmq and ioredis, and bullmq is not installed: npm install bullmq@\^6\.7\.0 ioredis@\^6\.0\.0$/;
  for (const args of [['worker'], ['status', 'b1'], ['retry', 'b1'], ['submit', 'in', 'out', 'equalize']]) {
    const r = spawnSync(process.execPath, ['--import', hook, BIN, ...args, '--redis', 'redis://127.0.0.1:1'], { encoding: 'utf8', timeout: 60_000 });
    assertOneLineError(r, 6, say);
  }
  // The image commands do not need them.
  const png = join(mkdtempSync(join(tmpdir(), 'imgpu-nopeers-')), 'o.png');
  const r = spawnSync(process.execPath, ['--import', hook, BIN, 'equalize', join(ROOT, 'test/fixtures/images/camera.png'), png, '--device', 'cpu'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
});

test('imgpu/scale from code: a batch submitted to a real redis-server, two workers created in-process finish it (outputs byte-identical to local batch mode), status counts it, close() ends them; the library prints nothing and installs no signal handler', { timeout: 240_000 }, async (t) => {
  const binary = redisServerOrSkip(t);
  if (!binary) return;
  const { url } = await startRedis(t, binary);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-scale-lib-'));
  const inDir = join(dir, 'in');
  mkdirSync(inDir);
  for (const f of ['camera.png', 'coins.png', 'moon.png', 'page.png', 'chelsea.png']) copyFileSync(join(ROOT, 'test/fixtures/images', f), join(inDir, f));
  writeFileSync(join(inDir, 'corrupt.png'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(200, 7)]));
  const out = join(dir, 'out');

  const s = await submit({ redis: url, inputs: [inDir], out, pipeline: PIPELINE, shard: 2 });
  assert.deepEqual({ jobs: s.jobs, images: s.images, totalJobs: s.totalJobs }, { jobs: 3, images: 6, totalJobs: 3 });

  const printed = [t.mock.method(console, 'log'), t.mock.method(console, 'error'), t.mock.method(console, 'warn')];
  const signals = process.listenerCount('SIGTERM') + process.listenerCount('SIGINT');
  const events: WorkerEvent[][] = [[], []];
  const workers = await Promise.all(events.map((ev) => createWorker({ redis: url, device: 'cpu', threads: 1, onEvent: (e) => ev.push(e) })));
  // Closed here, not in t.after: the after hooks stop the test's redis-server first, and close() needs it.
  let last: BatchStatus | undefined;
  try {
    assert.equal(process.listenerCount('SIGTERM') + process.listenerCount('SIGINT'), signals, 'no signal handler installed');
    for await (const r of watch({ redis: url, batch: s.batch, intervalMs: 200 })) if ('status' in r) last = r.status;
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
  await Promise.all(workers.map((w) => w.done));
  assert.deepEqual(printed.map((m) => m.mock.callCount()), [0, 0, 0], 'nothing printed');
  for (const m of printed) m.mock.restore();

  assert.deepEqual({ completed: last?.completed, images_done: last?.images_done, images_failed: last?.images_failed }, { completed: 3, images_done: 5, images_failed: 1 });
  assert.deepEqual(await status({ redis: url, batch: s.batch }), last, 'status() once: the last report of watch()');
  assert.deepEqual(events.map((ev) => ev[0].type), ['ready', 'ready']);
  const done = events.flat().filter((e) => e.type === 'job');
  assert.equal(done.length, 3, 'each job once, by one of the two workers');
  assert.deepEqual(done.flatMap((e) => e.result.failed.map((f) => f.file)), [join(inDir, 'corrupt.png')]);

  const local = join(dir, 'local');
  const r = cli('pipeline', inDir, local, PIPELINE, '--device', 'cpu');
  assert.equal(r.status, 9, r.stderr); // the corrupt file
  const names = readdirSync(local).filter((f) => !f.startsWith('.')).sort();
  assert.deepEqual(readdirSync(out).filter((f) => !f.startsWith('.')).sort(), names);
  for (const f of names) assert.ok(readFileSync(join(out, f)).equals(readFileSync(join(local, f))), `${f}: the same bytes as local batch mode`);
});

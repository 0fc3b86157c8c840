/**
 * Scale-out throughput: `node dist/bench/scale.js [--redis-server PATH] [--images DIR | --count 96 --max-mp 8]
 * [--workers 1,2,4] [--devices gpu,cpu] [--pipeline "equalize"] [--shard 32] [--out scale]`.
 * On one machine, in one run over the same images: local batch mode (`imgpu pipeline <dir> <out> "<pipeline>"`, one
 * process) on the GPU and on the CPU, then `imgpu worker` processes — 1, 2, 4 sharing the GPU, and as many CPU-only
 * ones — working a batch of `imgpu submit` on a redis-server of the bench's own (loopback, nothing saved).
 * images/s: local batch mode's wall clock (process start to exit) and its own reported rate (after start-up); the
 * queue's from submit to the last job done, the workers started and ready beforehand (a fleet waiting for work),
 * and the rate `imgpu status` reports (first job started to last finished). Without --images, a folder of `count`
 * photos, 1 to `max-mp` megapixels (bench/common.ts makePhotoFolder), is made in /tmp/imgpu-scale.
 * Writes bench/results/<out>.json.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { makePhotoFolder } from './common.js';
import { freePort } from '../test/helpers/process.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const redisBinary = arg('redis-server', ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(existsSync) ?? 'redis-server');
const workerCounts = arg('workers', '1,2,4').split(',').map(Number);
const devices = arg('devices', 'gpu,cpu').split(',');
const pipeline = arg('pipeline', 'equalize');
const shard = arg('shard', '32');
const outName = arg('out', 'scale');
const work = '/tmp/imgpu-scale';
const cores = availableParallelism();

function imgpuSync(args: string[]): { wall: number; json: Record<string, unknown> } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['bin/imgpu.js', ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const wall = (performance.now() - t0) / 1000;
  try {
    return { wall, json: JSON.parse(r.stdout.trim().split('\n').pop()!) };
  } catch {
    throw new Error(`imgpu ${args.join(' ')}: exit ${r.status}: ${r.stderr.slice(-800)}`);
  }
}

async function startRedis(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(redisBinary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  proc.on('error', (e) => {
    console.error(`cannot start ${redisBinary}: ${e.message} (give --redis-server PATH)`);
    process.exit(1);
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (spawnSync(process.execPath, ['bin/imgpu.js', 'status', 'none', '--redis', url], { encoding: 'utf8' }).status === 2) return { url, proc }; // it answers: 'no batch'
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${redisBinary} did not start on port ${port}`);
}

/** `n` workers on `device`, the cores divided between them (as `--jobs` does); resolves once all are ready. */
async function startWorkers(url: string, queue: string, n: number, device: string): Promise<ChildProcess[]> {
  const threads = Math.max(1, Math.floor(Math.min(16, cores) / n));
  const codecs = Math.max(1, Math.floor((cores - n) / n));
  return Promise.all(Array.from({ length: n }, () => new Promise<ChildProcess>((resolve, reject) => {
    const p = spawn(process.execPath, ['bin/imgpu.js', 'worker', '--redis', url, '--queue', queue, '--device', device, '--threads', String(threads)], {
      stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, IMGPU_CODEC_THREADS: String(codecs) },
    });
    let err = '';
    p.stderr!.on('data', (d) => {
      err += d;
      if (/ on queue /.test(err)) resolve(p);
    });
    p.on('exit', (code) => reject(new Error(`worker exited ${code}: ${err}`)));
  })));
}

async function queueRun(url: string, src: string, n: number, device: string): Promise<Record<string, unknown>> {
  const queue = `bench-${device}-${n}`;
  const out = join(work, `out-${queue}`);
  rmSync(out, { recursive: true, force: true });
  const workers = await startWorkers(url, queue, n, device);
  const t0 = performance.now();
  const submitted = imgpuSync(['submit', src, out, pipeline, '--redis', url, '--queue', queue, '--shard', shard, '--json']).json;
  const status = imgpuSync(['status', String(submitted.batch), '--redis', url, '--queue', queue, '--watch', '--json', '--interval', '0.1']).json;
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(workers.map((w) => new Promise((r) => {
    w.removeAllListeners('exit');
    w.on('exit', r);
    w.kill('SIGTERM');
  })));
  const images = Number(status.images_done);
  const row = { mode: 'queue', device, workers: n, images, failed: status.images_failed, seconds, images_per_s: images / seconds, status_images_per_s: status.images_per_s };
  console.log(JSON.stringify(row));
  return row;
}

function localRun(src: string, device: string): Record<string, unknown> {
  const out = join(work, `out-local-${device}`);
  rmSync(out, { recursive: true, force: true });
  const { wall, json } = imgpuSync(['pipeline', src, out, pipeline, '--device', device, '--json', '--quiet', '--overwrite']);
  const images = Number(json.processed);
  const row = { mode: 'local-batch', device, images, failed: (json.failed as unknown[]).length, seconds: wall, images_per_s: images / wall, reported_images_per_s: json.images_per_s };
  console.log(JSON.stringify(row));
  return row;
}

async function main(): Promise<void> {
  mkdirSync(work, { recursive: true });
  const src = process.argv.includes('--images') ? arg('images', '') : await makePhotoFolder(join(work, 'photos'), Number(arg('count', '96')), { mp: [1, Number(arg('max-mp', '8'))] });
  const images = readdirSync(src).length;
  const adapter = spawnSync(process.execPath, ['bin/imgpu.js', 'info'], { encoding: 'utf8' }).stdout.split('\n')[0];
  console.log(`${images} images in ${src}, pipeline "${pipeline}", shard ${shard}, ${cores} cores, ${adapter}`);
  const redis = await startRedis();
  const rows: Record<string, unknown>[] = [];
  try {
    for (const device of devices) {
      rows.push(localRun(src, device));
      for (const n of workerCounts) rows.push(await queueRun(redis.url, src, n, device));
    }
  } finally {
    redis.proc.kill();
  }
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/${outName}.json`;
  writeFileSync(file, JSON.stringify({ images, folder: src, pipeline, shard: Number(shard), cores, adapter, date: new Date().toISOString(), rows }, null, 1));
  console.log(`wrote ${file}`);
}

await main();

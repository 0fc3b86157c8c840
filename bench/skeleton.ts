/**
 * `node dist/bench/skeleton.js --dist <build's dist/src> --label NAME [--size 4k] [--reps 15]`
 * Times every image operation of a build's registry through that build's own code — CPU (worker pool),
 * GPU kernels (resident input, per-pass timestamps), GPU resident wall clock and GPU host → host with a reused
 * output — so that two builds (before and after a refactoring, issue 19) are measured by one script in one run.
 * Prints one JSON line per operation and metric: { label, op, metric, min, median }.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { photoAt, repeat, stat } from './common.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

const SIZES: Record<string, [number, number]> = { '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320] };

/** Operations and parameters measured (those of the build's registry; parameters every build accepts). */
const ONLY = process.argv.includes('--only') ? arg('only', '').split(',') : undefined;
const CASES: [string, string, Record<string, unknown>][] = [
  ['equalize', 'equalize', {}],
  ['gamma', 'gamma', { gamma: 0.5 }],
  ['threshold.otsu', 'threshold', { method: 'otsu' }],
  ['threshold.isodata', 'threshold', { method: 'isodata' }],
  ['threshold.mean', 'threshold', { method: 'mean', window: 11 }],
  ['clahe', 'clahe', {}],
  ['morph.erode.51', 'morph', { op: 'erode', se: 'rect:51x51' }],
  ['filter.sobel', 'filter', { filter: 'sobel' }],
  ['filter.gauss3', 'filter', { filter: 'gauss:3' }],
];

interface Timed { output: { release?: () => void; toHost?: unknown }; timings: { kernels: { ms: number }[]; total: number; host: number; upload: number; download: number } }
type Run = (src: unknown, params: Record<string, unknown>, on: Record<string, unknown>) => Promise<Timed>;

async function main(): Promise<void> {
  const dist = resolve(arg('dist', 'dist/src'));
  const label = arg('label', dist);
  const reps = Number(arg('reps', '15'));
  const [w, h] = SIZES[arg('size', '4k')];
  const load = (m: string) => import(pathToFileURL(`${dist}/${m}`).href);
  const { OPERATIONS } = await load('ops/registry.js');
  const { createNodeGpuContext } = await load('node/gpu.js');
  const { NodeWorkerPool } = await load('node/worker-pool.js');
  const { GpuImage } = await load('core/gpu/gpu-image.js');
  const gpu = await createNodeGpuContext();
  const pool = new NodeWorkerPool(Math.min(16, availableParallelism()));
  const img = await photoAt(w, h);
  const out = { ...img, data: img.data.slice() };
  const emit = (op: string, metric: string, s: { min: number; median: number }) =>
    console.log(JSON.stringify({ label, op, metric, size: `${w}x${h}`, min: +s.min.toFixed(4), median: +s.median.toFixed(4) }));
  // Clocks up before anything is measured (the first operation of a run otherwise pays for the ramp).
  const warm = await GpuImage.upload(gpu, img);
  for (const t0 = performance.now(); performance.now() - t0 < 1000;) (await (OPERATIONS.equalize as { run: Run }).run(warm, {}, { profile: false })).output.release?.();
  warm.release();
  for (const [id, name, params] of CASES) {
    const op = OPERATIONS[name] as { run: Run } | undefined;
    if (!op || (ONLY && !ONLY.includes(id))) continue; // an operation this build does not have, or not asked for
    const floatOut = name === 'filter';
    emit(id, 'cpu', await repeat(Math.min(reps, 5), async () => (await op.run(img, params, { pool })).timings.total));
    const dev = await GpuImage.upload(gpu, img);
    emit(id, 'gpu.kernels', await repeat(reps, async () => {
      const r = await op.run(dev, params, { pool, profile: true });
      r.output.release?.();
      return r.timings.kernels.reduce((a, k) => a + k.ms, 0);
    }));
    emit(id, 'gpu.resident', await repeat(reps, async () => {
      const t0 = performance.now();
      const r = await op.run(dev, params, { pool, profile: false });
      await gpu.finish();
      r.output.release?.();
      return performance.now() - t0;
    }));
    dev.release();
    const phases: Record<string, number[]> = { host: [], upload: [], kernels: [], download: [] };
    emit(id, 'gpu.host', await repeat(reps, async () => {
      const t = (await op.run(img, params, { gpu, pool, profile: false, ...(floatOut ? {} : { out }) })).timings;
      phases.host.push(t.host); phases.upload.push(t.upload); phases.download.push(t.download);
      phases.kernels.push(t.kernels.reduce((a, k) => a + k.ms, 0));
      return t.total;
    }));
    // Where the host → host time goes (the Timings split of the same calls; the warm-up call included).
    for (const [phase, xs] of Object.entries(phases)) emit(id, `gpu.host.${phase}`, stat(xs));
  }
  await pool.close();
  gpu.destroy();
}

await main();
process.exit(0);

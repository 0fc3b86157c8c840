/**
 * CLAHE kernels back to back and the column scheme's schedule search: `node dist/bench/clahe-kernels.js [--batch 20]
 * [--variants all|NAME,…] [--hold-clocks]`. --variants times the named tiled kernel variants (gpu.ts
 * CLAHE_TILED_VARIANTS) at every size and nothing else; without it the default variant and the sliding window run.
 * Each variant is recorded `batch` times in one submission (bench/batched.ts), so the number is the steady-state
 * time per call without idle gaps; the isolated (one call, GPU idle before) times come from bench/run.ts.
 * Inputs: the bundled photograph resized to each size. Prints one JSON line per variant.
 */
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { columnsWorkgroupBytes } from '../src/ops/clahe/clahe.wgsl.js';
import { CLAHE_TILED_DEFAULT, CLAHE_TILED_VARIANTS, ClaheTiledGpuPlan, ClaheWindowGpuPlan, claheTiledVariant, columnsSchedule } from '../src/ops/clahe/gpu.js';
import { tiledGeometry, windowGeometry } from '../src/ops/clahe/plan.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { timeBatched } from './batched.js';
import { holdClocks, photoAt } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const batch = Number(arg('batch', '20'));
const variantsArg = arg('variants', '');
const variants = variantsArg === 'all' ? Object.keys(CLAHE_TILED_VARIANTS) : variantsArg ? variantsArg.split(',') : [process.env.IMGPU_CLAHE_TILED ?? CLAHE_TILED_DEFAULT];
const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
const ctx = await createNodeGpuContext();

/** Each kernel's own time per call (median of 7 submissions of `batch` calls, every dispatch its own timed pass). */
async function perKernel(record: (rec: Recording) => Promise<unknown>): Promise<Record<string, number>> {
  const runs: Record<string, number[]> = {};
  for (let r = 0; r < 7; r++) {
    const timer = new KernelTimer(ctx, true);
    const rec = new Recording(ctx, timer, 'batch');
    for (let i = 0; i < batch; i++) await record(rec);
    rec.submit();
    await ctx.finish();
    const sums: Record<string, number> = {};
    for (const k of await timer.read()) sums[k.name] = (sums[k.name] ?? 0) + k.ms / batch;
    for (const [name, ms] of Object.entries(sums)) (runs[name] ??= []).push(ms);
    timer.destroy();
  }
  return Object.fromEntries(Object.entries(runs).map(([name, xs]) => [name, Number(xs.sort((a, b) => a - b)[xs.length >> 1].toFixed(4))]));
}

const photo = async (w: number, h: number): Promise<GpuImage> => GpuImage.upload(ctx, await photoAt(w, h));
const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

// Tiled: the kernels before interpolate alone, and with interpolate, at every size, per variant.
const sizes = [['1080p', 1920, 1080], ['4k', 3840, 2160], ['8k', 7680, 4320]] as const;
// With --variants, 8K first: the size that decides, measured even if a time limit cuts the run short.
for (const [name, w, h] of variantsArg ? [...sizes].reverse() : sizes) {
  const img = await photo(w, h);
  for (const variant of variants) {
    const plan = await ClaheTiledGpuPlan.prepare(ctx, 'uint8', claheTiledVariant(variant));
    for (const grid of [8, 16]) {
      const g = tiledGeometry(h, w, grid, grid, 2, 'uint8');
      const luts = await timeBatched(ctx, batch, (rec) => plan.encodeLuts(rec, img, g));
      const both = await timeBatched(ctx, batch, async (rec) => (await plan.encode(rec, img, g)).release());
      const kernels = name === '8k' ? await perKernel(async (rec) => (await plan.encode(rec, img, g)).release()) : undefined;
      out({ kernel: 'clahe.tiled', variant, size: name, grid, histAndLutMs: luts, interpolateMs: both - luts, allMs: both, kernels, heldClocks: hold?.held ?? false });
    }
  }
  img.release();
}
if (variantsArg) {
  hold?.release();
  ctx.destroy();
  process.exit(0);
}

// Sliding window at 1080p: the column scheme over tile shapes (the default first), and the naive form.
const img = await photo(1920, 1080);
const budget = ctx.limits.maxComputeWorkgroupStorageSize;
for (const r of [5, 10, 20, 50]) {
  const g = windowGeometry(r, 4);
  const def = columnsSchedule(ctx, r);
  const tiles = [def, ...[32, 64, 96, 128].flatMap((tileW) => [16, 32, 64].map((tileH) => ({ tileW, tileH })))]
    .filter((t) => t && columnsWorkgroupBytes(r, t.tileW, ctx.features.has('subgroups')) <= budget);
  for (const tile of tiles) {
    const plan = await ClaheWindowGpuPlan.prepare(ctx, g, 'reflect101', 'columns', tile);
    const ms = await timeBatched(ctx, batch, (rec) => plan.encode(rec, img).release());
    out({ kernel: 'clahe.window.columns', size: '1080p', r, tile, default: tile === def, ms });
  }
  const naive = await ClaheWindowGpuPlan.prepare(ctx, g, 'reflect101', 'naive');
  out({ kernel: 'clahe.window.naive', size: '1080p', r, ms: await timeBatched(ctx, Math.max(1, Math.round(batch / 10)), (rec) => naive.encode(rec, img).release()) });
}
img.release();
hold?.release();
ctx.destroy();

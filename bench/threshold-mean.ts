/**
 * The mean adaptive threshold's GPU variants (issue 22): `node dist/bench/threshold-mean.js [--size 7680x4320]
 * [--windows 3,11,31,63] [--variants all|staged|default] [--batch 20] [--hold-clocks] [--out NAME]`.
 * For each window, the separable passes and the fused kernel's tiles (ops/threshold/gpu.ts MeanSchedule) on the
 * bundled photograph at that size, offset 2: back to back (`batch` calls in one compute pass, bench/batched.ts)
 * and isolated (one call per submission), kernel time from timestamps; each variant's output is compared with the
 * CPU path's (`identical`). One JSON line per (window, variant); with --out, bench/results/NAME.jsonl.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { compareImages } from '../src/core/compare.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { Recording } from '../src/core/gpu/recording.js';
import type { GpuContext } from '../src/core/gpu/context.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import type { BoxTile } from '../src/ops/threshold/box-fused.wgsl.js';
import { DEFAULT_MEAN_SCHEDULE, fusedTile, localThresholdGpu, type MeanSchedule } from '../src/ops/threshold/gpu.js';
import { threshold } from '../src/ops/threshold/index.js';
import { timeBatched } from './batched.js';
import { holdClocks, photoAt, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : d; };
const [W, H] = arg('size', '7680x4320').split('x').map(Number);
const windows = arg('windows', '3,11,31,63').split(',').map(Number);
const batch = Number(arg('batch', '20'));
const OFFSET = 2;

/** The separable passes, the default, and tiles around it. */
function variants(which: string): [string, MeanSchedule][] {
  const sep: [string, MeanSchedule] = ['separable', { ...DEFAULT_MEAN_SCHEDULE, fusedMaxWindow: 0 }];
  const fused = (t: BoxTile): [string, MeanSchedule] => [`fused ${t.words * 4}x${t.rows} seg${t.segRows} run${t.run}${t.stage ? ' staged' : ''}`, { fusedMaxWindow: 63, tile: t }];
  if (which === 'default') return [sep, ['default', DEFAULT_MEAN_SCHEDULE]];
  const tiles: BoxTile[] = [];
  if (which === 'all') {
    for (const words of [32, 64, 128]) for (const rows of [16, 32, 64]) for (const run of [1, 2, 4]) tiles.push({ words, rows, segRows: rows, run, stage: false });
    for (const segRows of [4, 8, 16]) tiles.push({ words: 64, rows: 32, segRows, run: 2, stage: false });
  }
  // The staged tiles (the input in workgroup memory first): the first search (h100-threshold-mean-variants.jsonl)
  // found the direct column pass bound by its serial loads, fastest with short segments and 16-row tiles.
  for (const words of [32, 64, 128]) {
    for (const rows of [8, 16, 32]) for (const segRows of new Set([4, 8, rows])) tiles.push({ words, rows, segRows, run: 2, stage: true });
  }
  for (const run of [1, 4]) tiles.push({ words: 64, rows: 16, segRows: 8, run, stage: true });
  tiles.push({ words: 64, rows: 16, segRows: 4, run: 2, stage: false }, { words: 64, rows: 16, segRows: 8, run: 2, stage: false });
  return [sep, ...tiles.map(fused)];
}

/** Kernel time of one threshold on the resident image: `n` calls in one compute pass, per call. */
function timed(gpu: GpuContext, dev: GpuImage, window: number, s: MeanSchedule, n: number): Promise<number> {
  return timeBatched(gpu, n, async (rec) => (await localThresholdGpu(dev, rec, [H, W], 'mean', window, OFFSET, s)).release());
}

async function output(gpu: GpuContext, dev: GpuImage, window: number, s: MeanSchedule) {
  const timer = new KernelTimer(gpu, false);
  const rec = new Recording(gpu, timer, 'threshold mean');
  const out = await localThresholdGpu(dev, rec, [H, W], 'mean', window, OFFSET, s);
  rec.submit();
  const host = await out.toHost();
  out.release();
  timer.destroy();
  return host;
}

const gpu = await createNodeGpuContext();
const pool = new NodeWorkerPool();
const img = await photoAt(W, H);
const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
await warmUp(gpu, img);
const dev = await GpuImage.upload(gpu, img);
const lines: string[] = [];
for (const window of windows) {
  const cpu = (await threshold(img, { method: 'mean', window, offset: OFFSET, pool })).output;
  const seen = new Set<string>();
  for (const [variant, s] of variants(arg('variants', 'all'))) {
    // Tiles too large for the workgroup memory are cut down (fusedTile): each tile that runs, once.
    const tile = fusedTile(gpu, window, s);
    const key = JSON.stringify(tile ?? null);
    if ((s.fusedMaxWindow > 0 && !tile) || seen.has(key)) continue;
    seen.add(key);
    const identical = compareImages(await output(gpu, dev, window, s), cpu).identical;
    const line = JSON.stringify({ size: `${W}x${H}`, window, variant, tile: tile ?? null, identical, backToBackMs: await timed(gpu, dev, window, s, batch), isolatedMs: await timed(gpu, dev, window, s, 1) });
    console.log(line);
    lines.push(line);
  }
}
const name = arg('out', '');
if (name) {
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${name}.jsonl`, lines.join('\n') + '\n');
}
dev.release();
hold?.release();
await pool.close();
gpu.destroy();
process.exit(0);

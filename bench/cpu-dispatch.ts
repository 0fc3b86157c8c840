/**
 * Where a CPU point operation's time goes on the worker pool: `node dist/bench/cpu-dispatch.js [--sizes 4k,8k] [--reps 30]`.
 * Per size: the pool's round trip with empty tasks (dispatch alone), the histogram and the LUT pass on the pool,
 * one chunk's share of each (n / threads pixels) run on the calling thread (the compute a perfectly parallel pool
 * would take), and equalize end to end. Medians, ms; one JSON line per size.
 */
import { cpuTuning, forChunks } from '../src/core/cpu/pool.js';
import { createImage } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { equalize } from '../src/ops/equalize/index.js';
import { histogramCpu } from '../src/ops/histogram/cpu.js';
import { histogramRange } from '../src/ops/histogram/cpu-kernels.js';
import { applyLutCpu } from '../src/ops/lut/cpu.js';
import { applyLutRange } from '../src/ops/lut/cpu-kernels.js';
import { photoAt } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const reps = Number(arg('reps', '30'));
const SIZES: Record<string, [number, number]> = { '4k': [3840, 2160], '8k': [7680, 4320] };
const pool = new NodeWorkerPool();
const median = async (f: () => unknown): Promise<number> => {
  const ts: number[] = [];
  for (let i = 0; i < reps + 3; i++) {
    const t0 = now();
    await f();
    if (i >= 3) ts.push(now() - t0);
  }
  return ts.sort((a, b) => a - b)[Math.floor(ts.length / 2)];
};
for (const s of arg('sizes', '4k,8k').split(',')) {
  const img = await photoAt(...SIZES[s]);
  const data = img.data as Uint8Array;
  const out = createImage(img.shape, 'uint8');
  const n = data.length;
  const share = Math.ceil(n / pool.size);
  const lut = new Uint32Array(256).map((_, i) => 255 - i);
  const table = Uint8Array.from(lut);
  const row = {
    size: s, threads: pool.size, chunk: cpuTuning.pixelChunk,
    dispatchEmpty: await median(() => forChunks(pool, pool.size * cpuTuning.pixelChunk, cpuTuning.pixelChunk, 'histogram', () => [data, 0, 0, 256, 8, undefined])),
    histogramPool: await median(() => histogramCpu(img, pool)),
    histogramOneShareLocal: await median(() => histogramRange(data, 0, share, 256, 8)),
    lutPool: await median(() => applyLutCpu(img, lut, pool, out)),
    lutOneShareLocal: await median(() => applyLutRange(data, out.data as Uint8Array, table, 0, share)),
    equalizePool: await median(() => equalize(img, { pool, out })),
  };
  console.log(JSON.stringify(row));
}
await pool.close();

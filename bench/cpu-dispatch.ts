/**
 * Where a CPU point operation's time goes on the worker pool: `node dist/bench/cpu-dispatch.js [--sizes 4k,8k] [--reps 30]`.
 * Per size, with the native point passes on native threads (native/point.c, the default where built) and with the
 * JavaScript loops on the worker pool's dynamic blocks (IMGPU_NO_NATIVE_KERNELS=1): the histogram and LUT passes
 * and equalize end to end. For the JavaScript loops also sweeps of the block size and one thread's share of each
 * pass (n / threads pixels, on the calling thread: what a perfectly parallel pool would take). Also the pool's round trip with empty tasks and, for 16 equal static
 * chunks of the histogram, when the first, median and last came back (stragglers). Medians, ms; a JSON line per size.
 */
import { cpuTuning, forBlocks } from '../src/core/cpu/pool.js';
import { createImage } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { equalize } from '../src/ops/equalize/index.js';
import { histogramCpu } from '../src/ops/histogram/cpu.js';
import { histogramRange, histogramTask } from '../src/ops/histogram/cpu-kernels.js';
import { applyLutCpu } from '../src/ops/lut/cpu.js';
import { applyLutRange, applyLutTask } from '../src/ops/lut/cpu-kernels.js';
import { photoAt } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const reps = Number(arg('reps', '30'));
const SIZES: Record<string, [number, number]> = { '4k': [3840, 2160], '8k': [7680, 4320] };
const pool = new NodeWorkerPool();
// The native passes run from this thread; without them (set to undefined below) the JavaScript loops run on the workers.
const nativePoint = pool.native;

const median = async (f: () => unknown): Promise<number> => {
  const ts: number[] = [];
  for (let i = 0; i < reps + 5; i++) {
    const t0 = now();
    await f();
    if (i >= 5) ts.push(now() - t0);
  }
  return ts.sort((a, b) => a - b)[Math.floor(ts.length / 2)];
};

async function chunkSpread(pool: NodeWorkerPool, data: Uint8Array): Promise<{ first: number; median: number; last: number }> {
  const per = Math.ceil(data.length / pool.size);
  const spreads: number[][] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = now();
    const done: number[] = [];
    await Promise.all(Array.from({ length: pool.size }, (_, k) => pool.run(histogramTask, { data, start: k * per, end: Math.min(data.length, (k + 1) * per), bins: 256, bits: 8 }).then(() => done.push(now() - t0))));
    spreads.push(done.sort((a, b) => a - b));
  }
  const at = (i: number) => spreads.map((d) => d[i]).sort((a, b) => a - b)[Math.floor(reps / 2)];
  return { first: at(0), median: at(Math.floor(pool.size / 2)), last: at(pool.size - 1) };
}

for (const s of arg('sizes', '4k,8k').split(',')) {
  const img = await photoAt(...SIZES[s]);
  const data = img.data as Uint8Array;
  const out = createImage(img.shape, 'uint8');
  const n = data.length;
  const share = Math.ceil(n / pool.size);
  const lut = new Uint32Array(256).map((_, i) => 255 - i);
  const table = Uint8Array.from(lut);
  const row: Record<string, unknown> = { size: s, threads: pool.size, block: cpuTuning.pixelBlock, native: !!nativePoint };
  row.dispatchEmpty = await median(() => Promise.all(Array.from({ length: pool.size }, () => pool.run(histogramTask, { data, start: 0, end: 0, bins: 256, bits: 8 }))));
  row.staticChunksDone = await chunkSpread(pool, data);
  // The worker pool's dynamic blocks at several block sizes, and one thread's share (JavaScript loops).
  const blocks: Record<string, unknown> = {};
  for (const block of [1 << 16, 1 << 17, 1 << 18]) {
    blocks[block] = {
      histogram: await median(() => forBlocks(pool, n, block, histogramTask, { data, bins: 256, bits: 8 }, true)),
      lut: await median(() => forBlocks(pool, n, block, applyLutTask, { src: data, dst: out.data as Uint8Array, lut: table })),
    };
  }
  row.blocks = blocks;
  row.histogramOneShare = await median(() => histogramRange({ data, start: 0, end: share, bins: 256, bits: 8 }));
  row.lutOneShare = await median(() => applyLutRange({ src: data, dst: out.data as Uint8Array, lut: table, start: 0, end: share }));
  // native: whole passes on native threads; js: the worker pool's dynamic blocks with the JavaScript loops.
  for (const name of ['native', 'js'] as const) {
    if (name === 'native' && !nativePoint) continue;
    pool.native = name === 'native' ? nativePoint : undefined;
    row[name] = {
      histogram: await median(() => histogramCpu(img, pool)),
      lut: await median(() => applyLutCpu(img, lut, pool, out)),
      equalize: await median(() => equalize(img, { pool, out })),
    };
  }
  pool.native = nativePoint;
  console.log(JSON.stringify(row));
}
await pool.close();

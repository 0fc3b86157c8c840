/**
 * Where the CPU path's time goes: `node --cpu-prof --cpu-prof-dir=DIR dist/bench/cpu-profile.js [--size 8k] [--reps 50] [--block PIXELS]`
 * runs equalize and Otsu on the CPU pool `reps` times (reused output) and prints the medians; the profiles of the
 * main thread and of each worker show the split (dispatch, first touch, the loops themselves).
 */
import { cpuTuning } from '../src/core/cpu/pool.js';
import { createImage } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { equalize } from '../src/ops/equalize/index.js';
import { histogram } from '../src/ops/histogram/index.js';
import { threshold } from '../src/ops/threshold/index.js';
import { photoAt } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const reps = Number(arg('reps', '50'));
cpuTuning.pixelBlock = Number(arg('block', String(cpuTuning.pixelBlock)));
const [w, h] = arg('size', '8k') === '8k' ? [7680, 4320] : [3840, 2160];
const img = await photoAt(w, h);
const out = createImage(img.shape, 'uint8');
const pool = new NodeWorkerPool();
const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, f] of [
  ['histogram', () => histogram(img, { pool })],
  ['equalize', () => equalize(img, { pool, out })],
  ['otsu', () => threshold(img, { pool, method: 'otsu', out })],
] as const) {
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = now();
    await f();
    ts.push(now() - t0);
  }
  console.log(JSON.stringify({ op: name, size: `${w}x${h}`, threads: pool.size, block: cpuTuning.pixelBlock, medianMs: med(ts), firstMs: ts[0] }));
}
await pool.close();

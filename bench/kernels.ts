/**
 * Schedule search for the histogram and LUT kernels: `node dist/bench/kernels.js [--size 8k] [--batch 20]`.
 * Each variant is dispatched `batch` times inside one compute pass with one timestamp pair, so the number is
 * the steady-state kernel time without per-pass overhead. Runs on a real photograph and on uniform noise
 * (the two extremes of atomic contention). Prints one JSON line per variant.
 */
import { timeBatched } from './batched.js';
import { acquireStorage, upload } from '../src/core/gpu/transfer.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { HistogramGpuPlan } from '../src/ops/histogram/gpu.js';
import { ApplyLutGpuPlan } from '../src/ops/lut/gpu.js';
import sharp from 'sharp';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const [w, h] = arg('size', '8k') === '8k' ? [7680, 4320] : [1920, 1080];
const batch = Number(arg('batch', '20'));

const ctx = await createNodeGpuContext();
const photo = (await sharp('samples/camera.png').resize(w, h, { fit: 'fill' }).toColourspace('b-w').raw().toBuffer()).subarray(0, w * h);
const noise = new Uint8Array(w * h);
for (let i = 0, s = 1; i < noise.length; i++) { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; noise[i] = s & 255; }
for (const [name, data] of [['photo', new Uint8Array(photo)], ['noise', noise]] as const) {
  const src = await upload(ctx, data);
  const hist = acquireStorage(ctx, 1024, 'hist');
  const out = acquireStorage(ctx, data.length, 'out');
  for (const copies of [1, 4, 8, 16]) {
    for (const vecsPerInvocation of [1, 4, 8, 32]) {
      const plan = await HistogramGpuPlan.prepare(ctx, { dtype: 'uint8', bins: 256, masked: false, method: 'atomic' }, { wg: 256, vecsPerInvocation, copies });
      const ms = await timeBatched(ctx, batch, (rec) => plan.encode(rec, src, data.length, hist, undefined, false));
      console.log(JSON.stringify({ kernel: 'histogram', data: name, copies, vecsPerInvocation, ms }));
    }
  }
  for (const vecsPerInvocation of [4, 16, 64]) {
    const plan = await HistogramGpuPlan.prepare(ctx, { dtype: 'uint8', bins: 256, masked: false, method: 'subhist' }, { wg: 64, vecsPerInvocation, copies: 1 });
    const ms = await timeBatched(ctx, batch, (rec) => plan.encode(rec, src, data.length, hist));
    console.log(JSON.stringify({ kernel: 'histogram.subhist', data: name, vecsPerInvocation, ms }));
  }
  for (const vecsPerInvocation of [1, 2, 4, 8, 16]) {
    const plan = await ApplyLutGpuPlan.prepare(ctx, 'uint8', { wg: 256, vecsPerInvocation });
    const ms = await timeBatched(ctx, batch, (rec) => plan.encode(rec, src, out, hist, data.length));
    console.log(JSON.stringify({ kernel: 'applyLut', data: name, vecsPerInvocation, ms }));
  }
}
ctx.destroy();

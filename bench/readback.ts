/**
 * Copying out of mapped readback memory: `node dist/bench/readback.js [--mb 12.5] [--reps 20]`. A device buffer is
 * downloaded as a view (GpuImage.toHostView) and copied into a host array in several ways — into shared or plain
 * memory, once or twice per mapping (the second copy shows whether the first paid for page faults), element sizes
 * 1 and 8 — to find why a GPU batch's copy of 12.5 MB took ~6 ms on the H100 machine's main thread.
 */
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { createNodeGpuContext } from '../src/node/gpu.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const bytes = Math.round(Number(arg('mb', '12.5')) * 1e6 / 16) * 16;
const reps = Number(arg('reps', '20'));
const gpu = await createNodeGpuContext();
const src = new Uint8Array(bytes).map((_, i) => i * 7);
const dev = await GpuImage.upload(gpu, { data: src, shape: [1, bytes], channels: 1, dtype: 'uint8' });
const sab = new Uint8Array(new SharedArrayBuffer(bytes)), ab = new Uint8Array(bytes);
const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
const out: Record<string, number> = {};
for (const [name, copy] of [
  ['u8 into shared', (v: ArrayBuffer) => sab.set(new Uint8Array(v, 0, bytes))],
  ['u8 into plain', (v: ArrayBuffer) => ab.set(new Uint8Array(v, 0, bytes))],
  ['f64 into shared', (v: ArrayBuffer) => new Float64Array(sab.buffer).set(new Float64Array(v, 0, bytes / 8))],
  ['f64 into plain', (v: ArrayBuffer) => new Float64Array(ab.buffer).set(new Float64Array(v, 0, bytes / 8))],
  ['Buffer.copy into shared', (v: ArrayBuffer) => Buffer.from(v, 0, bytes).copy(Buffer.from(sab.buffer))],
] as const) {
  const first: number[] = [], second: number[] = [], wait: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const view = await dev.toHostView();
    const t1 = performance.now();
    copy(view.image.data.buffer as ArrayBuffer);
    const t2 = performance.now();
    copy(view.image.data.buffer as ArrayBuffer);
    const t3 = performance.now();
    view.release();
    wait.push(t1 - t0); first.push(t2 - t1); second.push(t3 - t2);
  }
  out[`${name}: first copy`] = med(first);
  out[`${name}: second copy`] = med(second);
  out[`${name}: download wait`] = med(wait);
}
const t = performance.now();
for (let r = 0; r < reps; r++) ab.set(src);
out['plain → plain (reference)'] = (performance.now() - t) / reps;
console.log(JSON.stringify({ mb: bytes / 1e6, ms: out }, null, 1));
dev.release();
gpu.destroy();

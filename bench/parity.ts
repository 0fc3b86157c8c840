/**
 * Kernel times of the operations whose numerics issue 24 (items 13–17) changed, on a resident 4K image:
 * `node dist/bench/parity.js [--size WxH] [--reps 15]` — Otsu (software doubles), the Gaussian adaptive threshold
 * (software fused multiply-adds; windows 11 and 31) and float32 filters (sobel-x, sobel, box:5: the non-finite
 * scan and early-returning patch kernels; gauss:2 has none). One JSON line per operation: medians of the GPU
 * timestamps per kernel and of the resident wall clock.
 */
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import type { Image } from '../src/core/image.js';
import type { OpResult } from '../src/core/timings.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { filter } from '../src/ops/convolve/index.js';
import { threshold } from '../src/ops/threshold/index.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const [w, h] = arg('size', '3840x2160').split('x').map(Number);
const reps = Number(arg('reps', '15'));
const gpu = await createNodeGpuContext();
let seed = 1;
const u8 = new Uint8Array(w * h).map(() => 40 + Math.floor(160 * ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)));
const img8: Image = { data: u8, shape: [h, w], channels: 1, dtype: 'uint8' };
const imgf: Image = { data: Float32Array.from(u8, (v) => v + 0.25), shape: [h, w], channels: 1, dtype: 'float32' };
const med = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];

async function time(what: string, img: Image, run: (d: GpuImage) => Promise<OpResult<GpuImage>>): Promise<void> {
  const dev = await GpuImage.upload(gpu, img);
  const per: Record<string, number[]> = {};
  const wall: number[] = [];
  for (let i = 0; i < reps + 2; i++) {
    const t0 = performance.now();
    const r = await run(dev);
    await gpu.finish();
    if (i >= 2) {
      wall.push(performance.now() - t0);
      for (const k of r.timings.kernels) (per[k.name] ??= []).push(k.ms);
    }
    r.output.release();
  }
  dev.release();
  const kernels = Object.fromEntries(Object.entries(per).map(([k, v]) => [k, +med(v).toFixed(4)]));
  const sum = Object.values(kernels).reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({ what, size: `${w}x${h}`, kernelsMs: +sum.toFixed(4), residentWallMs: +med(wall).toFixed(3), kernels }));
}

await time('threshold otsu u8', img8, (d) => threshold(d, { method: 'otsu' }));
for (const k of [11, 31]) await time(`threshold gaussian window ${k}`, img8, (d) => threshold(d, { method: 'gaussian', window: k }));
for (const spec of ['sobel-x', 'sobel', 'box:5', 'gauss:2']) await time(`filter ${spec} f32`, imgf, (d) => filter(d, spec));
gpu.destroy();

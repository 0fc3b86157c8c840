/** What the benchmarks share: statistics, repeated timing, inputs from the bundled photograph, GPU warm-up. */
import sharp from 'sharp';
import type { GpuContext } from '../src/core/gpu/context.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { allocPixels, imageFrom, type Image } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { equalize } from '../src/ops/equalize/index.js';

export interface Stat { min: number; median: number }

export function stat(xs: number[]): Stat {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)] };
}

/** Times `fn` (which returns its own duration in ms) `reps` times after one warm-up call. */
export async function repeat(reps: number, fn: () => Promise<number>): Promise<Stat> {
  await fn(); // warm-up: shader compilation, pool start, first-touch allocations
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) xs.push(await fn());
  return stat(xs);
}

/** The bundled photograph resized (Lanczos) to each size: real image statistics at every size. */
export async function photoAt(w: number, h: number): Promise<Image> {
  const { data } = await sharp('samples/camera.png').resize(w, h, { fit: 'fill' }).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
  // In shared memory, as readImage() returns it, so the CPU pool's workers share it without a copy.
  const pixels = allocPixels('uint8', w * h);
  pixels.set(data.subarray(0, w * h));
  return imageFrom(pixels, [h, w]);
}

/**
 * Keeps the GPU busy for about a second before anything is measured: the first operation of a run otherwise
 * pays for clocks ramping up (seen on the H100: 4.8 ms for a kernel that takes 1.2 ms once warm).
 */
export async function warmUp(gpu: GpuContext, img: Image): Promise<void> {
  const dev = await GpuImage.upload(gpu, img);
  const t0 = now();
  while (now() - t0 < 1000) (await equalize(dev, { profile: false })).output.release();
  dev.release();
}

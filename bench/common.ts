/** What the benchmarks share: statistics, repeated timing, inputs from the bundled photograph, GPU warm-up. */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * Holds the GPU clock up while a benchmark runs, where python3 has CuPy: a CUDA context kept open in a side
 * process. On the H100 the driver otherwise sets the SM clock from the recent load (345–1980 MHz), so the same
 * kernel took 0.50 to 2.06 ms by what ran before it (bench/variance.ts); with a CUDA context open it stays at
 * 1980 MHz and isolated calls equal back-to-back ones. Resolves once the context exists (held) or could not be
 * made (not held: no CuPy; a note on stderr), with the function that ends it.
 */
export async function holdClocks(): Promise<{ held: boolean; release: () => void }> {
  const { spawn } = await import('node:child_process');
  const py = spawn('python3', ['-c', 'import cupy, sys, time; cupy.zeros(1); cupy.cuda.Device().synchronize(); print("ready", flush=True); time.sleep(86400)'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const ready = await new Promise<boolean>((done) => {
    py.stdout.on('data', (d: Buffer) => { if (d.toString().includes('ready')) done(true); });
    py.on('exit', () => done(false));
    py.on('error', () => done(false));
  });
  if (!ready) console.error('holdClocks: python3 with CuPy did not start; clocks are not held');
  return { held: ready, release: () => py.kill() };
}

const PHOTO_SOURCES = ['camera.png', 'chelsea.png', 'coins.png', 'moon.png', 'page.png', 'camera_301x256.png', 'chelsea16.png'];

/** How a photo folder's pictures reach their size: resized (Lanczos: smooth, cheap to entropy-code) or mirror-tiled at their own resolution (camera-like detail, ~5× the bytes per pixel). */
export type PhotoFill = 'resize' | 'mirror';

/** One photo: test/fixtures/images/`file` brought to about `mp` megapixels by `fill`, written as a 4:2:0 JPEG of quality 90 to `to`. */
async function makePhoto(file: string, mp: number, fill: PhotoFill, to: string): Promise<unknown> {
  const path = join('test/fixtures/images', file);
  const meta = await sharp(path).metadata();
  const sw = meta.width ?? 1, sh = meta.height ?? 1;
  let h = Math.round(Math.sqrt((mp * 1e6) / (sw / sh))), w = Math.round(h * (sw / sh));
  const img = sharp(path);
  if (fill === 'mirror') {
    w = Math.max(w, sw);
    h = Math.max(h, sh);
    img.extend({ right: w - sw, bottom: h - sh, extendWith: 'mirror' });
  } else {
    img.resize(w, h, { fit: 'fill' });
  }
  return img.toColourspace('srgb').jpeg({ quality: 90, chromaSubsampling: '4:2:0' }).toFile(to);
}

/**
 * A folder of `count` photos: the photographs of test/fixtures/images brought (`fill`) to sizes spread evenly
 * between `mp[0]` and `mp[1]` megapixels, JPEG quality 90 — a photo batch. Kept when it is already there.
 */
export async function makePhotoFolder(src: string, count: number, { mp = [1, 24], fill = 'resize' }: { mp?: readonly [number, number]; fill?: PhotoFill } = {}): Promise<string> {
  if (existsSync(src) && readdirSync(src).length === count) return src;
  rmSync(src, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const size = mp[0] + ((mp[1] - mp[0]) * i) / Math.max(1, count - 1);
    jobs.push(makePhoto(PHOTO_SOURCES[i % PHOTO_SOURCES.length], size, fill, join(src, `img${String(i).padStart(4, '0')}.jpg`)));
    if (jobs.length >= 16) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
  return src;
}

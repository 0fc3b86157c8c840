import { createImage, type Channels, type Dtype, type Image, type Shape } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import type { Rng } from '../helpers/parity.js';

/**
 * Inputs of the differential test: real photographs (cropped and mirror-tiled to any size) and synthetic images
 * (noise, low contrast, ties, constants, extremes, NaN/Inf), every size from 1×1 up, odd widths favoured.
 */

export interface Sources {
  gray: Record<'camera' | 'coins' | 'moon' | 'page' | 'astronaut' | 'lfw', Image>;
  rgb: Image;
  rgb16: Image;
  moon16: Image;
  f32: Image;
}

export async function loadSources(): Promise<Sources> {
  const img = (...p: string[]) => readImage(fixture(...p));
  return {
    gray: {
      camera: await img('images', 'camera.png'), coins: await img('images', 'coins.png'), moon: await img('images', 'moon.png'),
      page: await img('images', 'page.png'), astronaut: await img('detect', 'astronaut.png'), lfw: await img('detect', 'lfw_mosaic.png'),
    },
    rgb: await img('images', 'chelsea.png'),
    rgb16: await img('images', 'chelsea16.png'),
    moon16: await img('images', 'moon16.npy'),
    f32: await img('images', 'camera_f32.npy'),
  };
}

export interface Made {
  img: Image;
  how: string;
}

export const MAX: Record<Dtype, number> = { uint8: 255, uint16: 65535, float32: 1 };

/** A new image filled by f(element index). */
export function fill(shape: Shape, dtype: Dtype, channels: Channels, f: (i: number) => number): Image {
  const img = createImage(shape, dtype, channels);
  for (let i = 0; i < img.data.length; i++) img.data[i] = f(i);
  return img;
}

/** Uniform noise in [lo, hi] (integers for 8/16-bit). */
export function noise(rng: Rng, shape: Shape, dtype: Dtype, channels: Channels = 1, lo = 0, hi = MAX[dtype]): Made {
  const img = fill(shape, dtype, channels, () => (dtype === 'float32' ? rng.float(lo, hi) : rng.int(lo, hi)));
  return { img, how: `noise ${lo}..${hi}` };
}

/** Mirror index into [0, n) for any p (the photograph tiled with reflections). */
function mirrorIndex(p: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * n;
  const q = ((p % period) + period) % period;
  return q < n ? q : period - 1 - q;
}

/** A crop of a photograph at a random place, mirror-tiled past its edges, optionally converted in dtype. */
export function crop(rng: Rng, name: string, src: Image, shape: Shape, dtype: Dtype = src.dtype): Made {
  const [sh, sw] = src.shape as [number, number];
  const [d, h, w] = shape.length === 3 ? shape : [1, ...shape];
  const y0 = rng.int(0, sh - 1), x0 = rng.int(0, sw - 1);
  const c = src.channels;
  const scale = dtype === src.dtype ? 1 : dtype === 'float32' ? 1 / MAX[src.dtype] : src.dtype === 'uint8' && dtype === 'uint16' ? 257 : 1;
  const img = createImage(shape, dtype, c);
  let i = 0;
  for (let z = 0; z < d; z++) {
    for (let y = 0; y < h; y++) {
      const sy = mirrorIndex(y0 + y + 7 * z, sh);
      for (let x = 0; x < w; x++) {
        const sx = mirrorIndex(x0 + x + 5 * z, sw);
        for (let k = 0; k < c; k++) img.data[i++] = src.data[(sy * sw + sx) * c + k] * scale;
      }
    }
  }
  return { img, how: `${name} at (${x0}, ${y0})${dtype !== src.dtype ? ` as ${dtype}` : ''}` };
}

/** [h, w]: tiny, one row/column, small or medium, odd widths in most draws; at most maxPx pixels. */
export function size2d(rng: Rng, maxPx = 320 * 240): [number, number] {
  const r = rng.next();
  let h: number, w: number;
  if (r < 0.12) [h, w] = [rng.int(1, 4), rng.int(1, 4)];
  else if (r < 0.22) [h, w] = rng.chance(0.5) ? [1, rng.int(2, 300)] : [rng.int(2, 300), 1];
  else if (r < 0.65) [h, w] = [rng.int(5, 64), rng.int(5, 64)];
  else [h, w] = [rng.int(65, 400), rng.int(65, 400)];
  if (w > 1 && w % 2 === 0 && rng.chance(0.6)) w -= 1;
  while (h * w > maxPx) {
    if (h > w) h = Math.ceil(h / 2);
    else w = Math.ceil(w / 2);
  }
  return [h, w];
}

/** An 8/16-bit gray or colour input of the given shape from one of the usual sources. */
export function anyInput(rng: Rng, S: Sources, shape: Shape, dtype: 'uint8' | 'uint16', channels: Channels = 1): Made {
  const r = rng.next();
  const max = MAX[dtype];
  if (channels > 1) {
    if (r < 0.5) {
      const m = crop(rng, dtype === 'uint8' ? 'chelsea' : 'chelsea16', dtype === 'uint8' ? S.rgb : S.rgb16, shape, dtype);
      return channels === 4 ? withAlpha(rng, m) : m;
    }
    return noise(rng, shape, dtype, channels);
  }
  if (r < 0.4) {
    if (dtype === 'uint16' && rng.chance(0.5)) return crop(rng, 'moon16', S.moon16, shape);
    const name = rng.pick(['camera', 'coins', 'moon', 'page'] as const);
    return crop(rng, name, S.gray[name], shape, dtype);
  }
  if (r < 0.65) return noise(rng, shape, dtype);
  if (r < 0.75) {
    const lo = rng.int(0, max - 4);
    return noise(rng, shape, dtype, 1, lo, lo + rng.int(1, 4)); // low contrast: a few adjacent values
  }
  if (r < 0.82) return extremes(rng, shape, dtype);
  if (r < 0.88) {
    const v = rng.pick([0, max, rng.int(0, max)]);
    return { img: fill(shape, dtype, 1, () => v), how: `constant ${v}` };
  }
  if (r < 0.94) {
    const a = rng.int(0, max), b = rng.int(0, max);
    return { img: fill(shape, dtype, 1, () => (rng.chance(0.5) ? a : b)), how: `two values ${a}, ${b}` };
  }
  const step = rng.int(1, dtype === 'uint8' ? 9 : 999);
  return { img: fill(shape, dtype, 1, (i) => (i * step) % (max + 1)), how: `ramp step ${step}` };
}

/**
 * 0 and the maximum with a few values next to them: saturation and overflow at both ends. Float: ±FLT_MAX, or
 * ±1e18 where sums of squares must stay finite (filters: scipy sums in float64).
 */
export function extremes(rng: Rng, shape: Shape, dtype: Dtype, big = 3.4028234663852886e38): Made {
  const max = MAX[dtype];
  const vals = dtype === 'float32' ? [0, 1, -1, big, -big] : [0, 1, max - 1, max];
  return { img: fill(shape, dtype, 1, () => rng.pick(vals)), how: `extremes ${vals.join('/')}` };
}

/** A float32 input: a normalized photograph, wide-range noise, or either with NaN/±Inf sprinkled in. */
export function floatInput(rng: Rng, S: Sources, shape: Shape, special = 0, big?: number): Made {
  const r = rng.next();
  const base = r < 0.4 ? crop(rng, 'camera_f32', S.f32, shape) : r < 0.75 ? noise(rng, shape, 'float32', 1, -1000, 1000) : r < 0.9 ? crop(rng, 'camera', S.gray.camera, shape, 'float32') : extremes(rng, shape, 'float32', big);
  if (!special) return base;
  const d = base.img.data;
  const n = Math.max(1, Math.round(d.length * special));
  for (let k = 0; k < n; k++) d[rng.int(0, d.length - 1)] = rng.pick([NaN, Infinity, -Infinity]);
  return { img: base.img, how: `${base.how}, ${n} NaN/±Inf` };
}

function withAlpha(rng: Rng, m: Made): Made {
  const [h, w] = m.img.shape as [number, number];
  const out = createImage([h, w], m.img.dtype, 4);
  for (let i = 0; i < h * w; i++) {
    for (let k = 0; k < 3; k++) out.data[i * 4 + k] = m.img.data[i * 3 + k];
    out.data[i * 4 + 3] = rng.int(0, MAX[m.img.dtype]);
  }
  return { img: out, how: `${m.how} + random alpha` };
}

/**
 * CLAHE on the CPU: pure functions over (shared) typed arrays, run by the worker pool (ops/tasks.ts).
 * Float arithmetic is float32 step by step (Math.fround after every operation, no fused multiply-add), as
 * OpenCV's scalar code computes it; rounding is cvRound's half-to-even.
 */
import { roundHalfEven } from '../../core/rounding.js';
import { reflect101Index } from '../../core/border.js';
import { defineTask, type Range } from '../../core/cpu/pool.js';
import { mirror, type ClaheBorder } from './plan.js';

type Pixels = Uint8Array | Uint16Array;
const f32 = Math.fround;

/**
 * OpenCV's tile rule, in place on `hist` (bins counts of `area` pixels): clip at `clipLimit` (0: none),
 * spread the excess evenly, then the residual one count at bins 0, step, 2·step, …; write the LUT
 * saturate(cumsum · lutScale) into lut[offset …].
 */
export function tileLut(hist: Uint32Array, clipLimit: number, lutScale: number, lut: Pixels, offset: number): void {
  const bins = hist.length, max = bins - 1;
  if (clipLimit > 0) {
    let clipped = 0;
    for (let i = 0; i < bins; i++) {
      if (hist[i] > clipLimit) {
        clipped += hist[i] - clipLimit;
        hist[i] = clipLimit;
      }
    }
    const batch = Math.floor(clipped / bins);
    let residual = clipped - batch * bins;
    for (let i = 0; i < bins; i++) hist[i] += batch;
    if (residual !== 0) {
      const step = Math.max(Math.floor(bins / residual), 1);
      for (let i = 0; i < bins && residual > 0; i += step, residual--) hist[i]++;
    }
  }
  let sum = 0;
  for (let i = 0; i < bins; i++) {
    sum += hist[i];
    const v = roundHalfEven(f32(f32(sum) * lutScale));
    lut[offset + i] = v > max ? max : v;
  }
}

/**
 * Per-tile LUTs for tiles [t0, t1) (row-major over the grid): each tile's histogram is taken over the image
 * padded bottom/right with REFLECT_101 (OpenCV's padding), then `tileLut`. lut holds tilesX·tilesY·bins entries.
 */
export interface TileLutsArgs extends Range {
  src: Pixels;
  width: number;
  height: number;
  tilesX: number;
  tileW: number;
  tileH: number;
  bins: number;
  clipLimit: number;
  scale: number;
  lut: Pixels;
}

export function claheTileLuts({ src, width, height, tilesX, tileW, tileH, bins, clipLimit, scale, lut, start: t0, end: t1 }: TileLutsArgs): void {
  const hist = new Uint32Array(bins);
  const cols = new Int32Array(tileW);
  for (let t = t0; t < t1; t++) {
    const ty = Math.floor(t / tilesX), tx = t - ty * tilesX;
    const x0 = tx * tileW, y0 = ty * tileH;
    hist.fill(0);
    for (let i = 0; i < tileW; i++) cols[i] = reflect101Index(x0 + i, width);
    const inside = x0 + tileW <= width;
    for (let y = y0; y < y0 + tileH; y++) {
      const row = reflect101Index(y, height) * width;
      if (inside) {
        for (let x = row + x0, e = row + x0 + tileW; x < e; x++) hist[src[x]]++;
      } else {
        for (let i = 0; i < tileW; i++) hist[src[row + cols[i]]]++;
      }
    }
    tileLut(hist, clipLimit, scale, lut, t * bins);
  }
}

/**
 * Bilinear interpolation between the four nearest tiles' LUTs for rows [y0, y1), OpenCV's expression and
 * order: res = (L11·xa1 + L12·xa)·ya1 + (L21·xa1 + L22·xa)·ya, then saturate_cast (half to even).
 * xw/xt, yw/yt: the axis tables of plan.ts ([a, 1 − a] weights, [t1, t2] tile indices).
 */
export interface InterpolateArgs extends Range {
  src: Pixels;
  dst: Pixels;
  width: number;
  tilesX: number;
  bins: number;
  lut: Pixels;
  xw: Float32Array;
  xt: Uint32Array;
  yw: Float32Array;
  yt: Uint32Array;
}

export function claheInterpolateRows({ src, dst, width, tilesX, bins, lut, xw, xt, yw, yt, start: y0, end: y1 }: InterpolateArgs): void {
  const max = bins - 1;
  for (let y = y0; y < y1; y++) {
    const ya = yw[2 * y], ya1 = yw[2 * y + 1];
    const p1 = yt[2 * y] * tilesX * bins, p2 = yt[2 * y + 1] * tilesX * bins;
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const v = src[row + x];
      const i1 = xt[2 * x] * bins + v, i2 = xt[2 * x + 1] * bins + v;
      const xa = xw[2 * x], xa1 = xw[2 * x + 1];
      const top = f32(f32(lut[p1 + i1] * xa1) + f32(lut[p1 + i2] * xa));
      const bottom = f32(f32(lut[p2 + i1] * xa1) + f32(lut[p2 + i2] * xa));
      const res = roundHalfEven(f32(f32(top * ya1) + f32(bottom * ya)));
      dst[row + x] = res < 0 ? 0 : res > max ? max : res;
    }
  }
}

/**
 * The LUT value at `v` of OpenCV's tile rule applied to a window histogram, from two sums instead of the
 * whole clipped histogram: P = Σ_{b ≤ v} min(h_b, L) and S = Σ_b min(h_b, L). The excess area − S is spread
 * as batch = ⌊E/256⌋ per bin plus one count at bins 0, step, 2·step, … (residual of them), so
 * cumsum(v) = P + batch·(v + 1) + min(residual, ⌊v/step⌋ + 1). Equal to `tileLut` (tested on random windows).
 */
export function windowLutValue(p: number, s: number, v: number, area: number, scale: number): number {
  const excess = area - s;
  const batch = Math.floor(excess / 256);
  const residual = excess - batch * 256;
  let cum = p + batch * (v + 1);
  if (residual > 0) cum += Math.min(residual, Math.floor(v / Math.max(Math.floor(256 / residual), 1)) + 1);
  const out = roundHalfEven(f32(f32(cum) * scale));
  return out > 255 ? 255 : out;
}

/**
 * Sliding-window CLAHE (8-bit) for output rows [y0, y1): Huang's moving histogram along each row (one
 * column of the window out, one in: O(r) per pixel), with the clipped sums kept incrementally — S and
 * 16 coarse block sums C_j = Σ_{b in block j} min(h_b, L) change by one when a count crosses L — so the
 * per-pixel query reads at most 16 coarse + 16 fine values instead of 256 bins.
 */
export interface WindowRowsArgs extends Range {
  src: Uint8Array;
  dst: Uint8Array;
  width: number;
  height: number;
  radius: number;
  border: ClaheBorder;
  clipLimit: number;
  area: number;
  scale: number;
}

export function claheWindowRows({ src, dst, width, height, radius, border, clipLimit, area, scale, start: y0, end: y1 }: WindowRowsArgs): void {
  const r = radius, L = clipLimit;
  const h = new Int32Array(256), coarse = new Int32Array(16);
  const cols = new Int32Array(width + 2 * r + 1);
  for (let i = 0; i < cols.length; i++) cols[i] = mirror(i - r, width, border);
  const rows = new Int32Array(2 * r + 1);
  let s = 0;
  const add = (b: number): void => {
    if (++h[b] <= L) { s++; coarse[b >> 4]++; }
  };
  const remove = (b: number): void => {
    if (h[b]-- <= L) { s--; coarse[b >> 4]--; }
  };
  for (let y = y0; y < y1; y++) {
    h.fill(0); coarse.fill(0); s = 0;
    for (let k = 0; k <= 2 * r; k++) rows[k] = mirror(y - r + k, height, border) * width;
    for (let c = 0; c <= 2 * r; c++) for (let k = 0; k <= 2 * r; k++) add(src[rows[k] + cols[c]]);
    const out = y * width;
    for (let x = 0; x < width; x++) {
      if (x > 0) {
        const cOut = cols[x - 1], cIn = cols[x + 2 * r];
        for (let k = 0; k <= 2 * r; k++) { remove(src[rows[k] + cOut]); add(src[rows[k] + cIn]); }
      }
      const v = src[out + x];
      let p = 0;
      const blk = v >> 4;
      for (let j = 0; j < blk; j++) p += coarse[j];
      for (let b = blk << 4; b <= v; b++) p += h[b] < L ? h[b] : L;
      dst[out + x] = windowLutValue(p, s, v, area, scale);
    }
  }
}

export const tileLutsTask = defineTask('clahe.tileLuts', claheTileLuts);
export const interpolateTask = defineTask('clahe.interpolateRows', claheInterpolateRows);
export const windowRowsTask = defineTask('clahe.windowRows', claheWindowRows);

/** The CLAHE family's CPU tasks (ops/tasks.ts). */
export const claheTasks = [tileLutsTask, interpolateTask, windowRowsTask];

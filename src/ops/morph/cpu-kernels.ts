/**
 * Morphology on the CPU: pure functions over (shared) typed arrays, run by the worker pool (ops/tasks.ts).
 * Data is seen as [outer][n][inner] with the window along n; `isMin` selects erosion (min) or dilation (max).
 * Borders: 0 = constant `fill` (OpenCV's neutral value), 1 = reflect (scipy's 'reflect', any distance).
 */
import { reflectIndex } from '../../core/border.js';
import { defineTask, type Range } from '../../core/cpu/pool.js';
import { identity } from './plan.js';

type Pixels = Uint8Array | Uint16Array | Float32Array;

function sameType(like: Pixels, n: number): Pixels {
  return new (like.constructor as new (n: number) => Pixels)(n);
}

/**
 * van Herk/Gil-Werman along n for outer lines [o0, o1) and inner positions [i0, i1): output i takes the min
 * (max) of input positions [i − a, i − a + k − 1]. In padded coordinates (j = position + a) the window of
 * output i is [i, i + k − 1]; cut the padded line into blocks of k; h = suffix min within a block, g = prefix
 * min within a block; then out[i] = h[i] when i starts a block, else min(h[i], g[i + k − 1]) — at most three
 * comparisons per element, whatever k. With inner > 1 each step handles a whole contiguous run of inner
 * positions (rows of an image for the vertical pass, planes for the depth pass), so memory is read in order.
 */
function vhgwLines(
  src: Pixels, dst: Pixels, n: number, inner: number, k: number, a: number, isMin: boolean, border: number, fill: number,
  o0: number, o1: number, i0: number, i1: number,
): void {
  if (inner === 1) {
    vhgwRows(src, dst, n, k, a, isMin, border, fill, o0, o1);
    return;
  }
  const w = i1 - i0;
  const fillRow = sameType(src, w).fill(fill);
  const hb = sameType(src, k * w);
  const g = sameType(src, w);
  const L = n + k - 1;
  for (let o = o0; o < o1; o++) {
    const base = o * n * inner + i0;
    // The padded row j as (array, offset).
    const rowOf = (j: number): [Pixels, number] => {
      const p = j - a;
      if (p >= 0 && p < n) return [src, base + p * inner];
      if (border === 0) return [fillRow, 0];
      return [src, base + reflectIndex(p, n) * inner];
    };
    for (let bk = 0; bk < n; bk += k) {
      // Suffix of block [bk, bk + k) (clipped to the padded line).
      const last = Math.min(bk + k, L) - 1;
      let [r, off] = rowOf(last);
      const hLast = (last - bk) * w;
      for (let x = 0; x < w; x++) hb[hLast + x] = r[off + x];
      for (let j = last - 1; j >= bk; j--) {
        [r, off] = rowOf(j);
        const hj = (j - bk) * w, hn = hj + w;
        for (let x = 0; x < w; x++) {
          const v = r[off + x], u = hb[hn + x];
          hb[hj + x] = isMin ? (v < u ? v : u) : (v > u ? v : u);
        }
      }
      // Output bk takes the whole block; outputs bk + r also take the prefix of the next block up to bk + k + r − 1.
      const out0 = base + bk * inner;
      for (let x = 0; x < w; x++) dst[out0 + x] = hb[x];
      const end = Math.min(bk + k, n);
      for (let i = bk + 1; i < end; i++) {
        [r, off] = rowOf(i + k - 1);
        const hi = (i - bk) * w, oi = base + i * inner;
        if (i === bk + 1) {
          for (let x = 0; x < w; x++) g[x] = r[off + x];
        } else {
          for (let x = 0; x < w; x++) {
            const v = r[off + x], u = g[x];
            g[x] = isMin ? (v < u ? v : u) : (v > u ? v : u);
          }
        }
        for (let x = 0; x < w; x++) {
          const v = hb[hi + x], u = g[x];
          dst[oi + x] = isMin ? (v < u ? v : u) : (v > u ? v : u);
        }
      }
    }
  }
}

export interface VhgwArgs extends Range {
  src: Pixels;
  dst: Pixels;
  /** Window length and offset (output i takes input positions [i − a, i − a + k − 1]). */
  k: number;
  a: number;
  isMin: boolean;
  /** 0: constant `fill`, 1: reflect. */
  border: number;
  fill: number;
  /** The data seen as [outer][n][inner]. */
  outer: number;
  n: number;
  inner: number;
  /** Which index [start, end) ranges over: outer lines (all inner positions), or inner positions (all lines). */
  split: 'outer' | 'inner';
}

/** vhgwLines over a range of outer lines or of inner positions (the task the pool splits). */
function vhgwRange({ src, dst, k, a, isMin, border, fill, outer, n, inner, split, start, end }: VhgwArgs): void {
  if (split === 'outer') vhgwLines(src, dst, n, inner, k, a, isMin, border, fill, start, end, 0, inner);
  else vhgwLines(src, dst, n, inner, k, a, isMin, border, fill, 0, outer, start, end);
}

/** The same along contiguous lines (the horizontal pass): one padded line buffer, g and h arrays. */
function vhgwRows(src: Pixels, dst: Pixels, n: number, k: number, a: number, isMin: boolean, border: number, fill: number, o0: number, o1: number): void {
  const L = n + k - 1;
  const buf = sameType(src, L), g = sameType(src, L), h = sameType(src, L);
  for (let o = o0; o < o1; o++) {
    const base = o * n;
    for (let j = 0; j < L; j++) {
      const p = j - a;
      buf[j] = p >= 0 && p < n ? src[base + p] : border === 0 ? fill : src[base + reflectIndex(p, n)];
    }
    for (let bk = 0; bk < L; bk += k) {
      const end = Math.min(bk + k, L);
      g[bk] = buf[bk];
      for (let j = bk + 1; j < end; j++) { const v = buf[j], u = g[j - 1]; g[j] = isMin ? (v < u ? v : u) : (v > u ? v : u); }
      h[end - 1] = buf[end - 1];
      for (let j = end - 2; j >= bk; j--) { const v = buf[j], u = h[j + 1]; h[j] = isMin ? (v < u ? v : u) : (v > u ? v : u); }
    }
    for (let i = 0; i < n; i++) {
      if (i % k === 0) { dst[base + i] = h[i]; continue; }
      const v = h[i], u = g[i + k - 1];
      dst[base + i] = isMin ? (v < u ? v : u) : (v > u ? v : u);
    }
  }
}

/**
 * Direct morphology with an arbitrary element for output rows [r0, r1) of a [d, h, w] volume (row r = z·h + y):
 * min (max) over `offsets` (dz, dy, dx triples) of the input, from the identity (±inf for float32); outside the
 * volume, constant borders read `fill` (plan.ts neutral) and reflect borders mirror.
 */
export interface DirectMorphArgs extends Range {
  src: Pixels;
  dst: Pixels;
  d: number;
  h: number;
  w: number;
  /** (dz, dy, dx) triples of the element. */
  offsets: Int32Array;
  isMin: boolean;
  border: number;
  fill: number;
}

export function directMorph({ src, dst, d, h, w, offsets, isMin, border, fill, start: r0, end: r1 }: DirectMorphArgs): void {
  const m = offsets.length / 3;
  const start = identity(isMin ? 'erode' : 'dilate', src instanceof Float32Array ? 'float32' : src instanceof Uint16Array ? 'uint16' : 'uint8');
  for (let r = r0; r < r1; r++) {
    const z = Math.floor(r / h), y = r - z * h;
    for (let x = 0; x < w; x++) {
      let acc = start;
      for (let e = 0; e < m; e++) {
        let zz = z + offsets[3 * e], yy = y + offsets[3 * e + 1], xx = x + offsets[3 * e + 2];
        if (zz < 0 || zz >= d || yy < 0 || yy >= h || xx < 0 || xx >= w) {
          if (border === 0) {
            acc = isMin ? (fill < acc ? fill : acc) : (fill > acc ? fill : acc);
            continue;
          }
          zz = reflectIndex(zz, d); yy = reflectIndex(yy, h); xx = reflectIndex(xx, w);
        }
        const v = src[(zz * h + yy) * w + xx];
        acc = isMin ? (v < acc ? v : acc) : (v > acc ? v : acc);
      }
      dst[r * w + x] = acc;
    }
  }
}

/** dst = a − b (saturating at 0 for integers): gradient, top-hat and black-hat. */
export function subtractRange({ a, b, dst, start, end }: { a: Pixels; b: Pixels; dst: Pixels } & Range): void {
  const float = dst instanceof Float32Array;
  for (let i = start; i < end; i++) {
    const v = a[i] - b[i];
    dst[i] = float || v > 0 ? v : 0;
  }
}

export const vhgwLinesTask = defineTask('morph.vhgwLines', vhgwRange);
export const directMorphTask = defineTask('morph.direct', directMorph);
export const subtractTask = defineTask('morph.subtract', subtractRange);

/** The morphology family's CPU tasks (ops/tasks.ts). */
export const morphTasks = [vhgwLinesTask, directMorphTask, subtractTask];

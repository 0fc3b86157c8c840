/**
 * Adaptive isodata segmentation on the CPU: for every pixel, the isodata rule on the histogram of the W×W
 * window around it (clipped at the image border), kept up to date by sliding (Huang's moving histogram:
 * one column out, one column in per step, O(W) per pixel instead of O(W²)).
 *
 * The rule, in exact integer arithmetic (GPU and CPU agree bit for bit): the lowest t in [lo, hi) with
 * 0 ≤ (μ_low(t) + μ_high(t))/2 − t < 1, μ_low over values ≤ t — scikit-image's tie rule. Fallback: a window
 * whose value range hi − lo is below `contrast` (too uniform to split: a flat background, or the inside of
 * an object), or where no t qualifies, uses the global isodata threshold of the whole image, so flat areas
 * are classified as the whole image would classify them instead of being split by noise.
 */
import { defineTask, type Range } from '../../core/cpu/pool.js';
export function isodataOfWindow(h: Uint32Array, contrast: number, fallback: number): number {
  let lo = 0;
  while (h[lo] === 0) lo++;
  let hi = 255;
  while (h[hi] === 0) hi--;
  if (hi - lo < contrast) return fallback;
  let n = 0, s = 0;
  for (let v = lo; v <= hi; v++) {
    n += h[v];
    s += v * h[v];
  }
  let n1 = 0, s1 = 0;
  for (let t = lo; t < hi; t++) {
    n1 += h[t];
    s1 += t * h[t];
    const n2 = n - n1, s2 = s - s1;
    const nn = n1 * n2; // ≤ 2^30 for windows up to 255×255: every product below stays under 2^53
    const mid = s1 * n2 + s2 * n1;
    if (2 * t * nn <= mid && mid < (2 * t + 2) * nn) return t;
  }
  return fallback;
}

/** Thresholds t(p) for rows [y0, y1) with a sliding window histogram. */
export interface IsodataRowsArgs extends Range {
  src: Uint8Array;
  w: number;
  h: number;
  /** Window radius. */
  r: number;
  contrast: number;
  fallback: number;
  out: Uint8Array;
}

export function adaptiveIsodataRows({ src, w, h, r, contrast, fallback, out, start: y0, end: y1 }: IsodataRowsArgs): void {
  const hist = new Uint32Array(256);
  for (let y = y0; y < y1; y++) {
    const ya = Math.max(0, y - r), yb = Math.min(h - 1, y + r);
    hist.fill(0);
    for (let yy = ya; yy <= yb; yy++) for (let x = 0; x <= Math.min(w - 1, r); x++) hist[src[yy * w + x]]++;
    for (let x = 0; x < w; x++) {
      if (x > 0) {
        const out_ = x - r - 1, in_ = x + r;
        if (out_ >= 0) for (let yy = ya; yy <= yb; yy++) hist[src[yy * w + out_]]--;
        if (in_ < w) for (let yy = ya; yy <= yb; yy++) hist[src[yy * w + in_]]++;
      }
      const t = isodataOfWindow(hist, contrast, fallback);
      out[y * w + x] = src[y * w + x] > t ? 255 : 0;
    }
  }
}

export const isodataRowsTask = defineTask('threshold.isodataRows', adaptiveIsodataRows);

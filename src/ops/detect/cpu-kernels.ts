import { defineTask, type Range } from '../../core/cpu/pool.js';
import { resizeLinearExact } from './pyramid.js';
/**
 * CPU detection kernels (pure functions over typed arrays, run by the worker pool): the integral image, the
 * MB-LBP code, and the scan of window rows with OpenCV's rule.
 */

/** The (h+1)×(w+1) integral image of 8-bit pixels (first row and column zero), as cv::integral with CV_32S. */
export function integralImage(src: Uint8Array, w: number, h: number, out: Int32Array, outOffset = 0): void {
  const s = w + 1;
  out.fill(0, outOffset, outOffset + s);
  for (let y = 0; y < h; y++) {
    const r = outOffset + (y + 1) * s;
    out[r] = 0;
    let run = 0;
    for (let x = 0; x < w; x++) {
      run += src[y * w + x];
      out[r + x + 1] = (out[r - s + x + 1] + run) | 0;
    }
  }
}

/** The MB-LBP code of a feature (x, y, cell w×h) at integral offset `base` (row stride s). */
export function lbpCode(ii: Int32Array, base: number, s: number, fx: number, fy: number, fw: number, fh: number): number {
  const o = base + fy * s + fx;
  const r1 = o + fh * s, r2 = r1 + fh * s, r3 = r2 + fh * s;
  const c1 = fw, c2 = 2 * fw, c3 = 3 * fw;
  const p00 = ii[o], p01 = ii[o + c1], p02 = ii[o + c2], p03 = ii[o + c3];
  const p10 = ii[r1], p11 = ii[r1 + c1], p12 = ii[r1 + c2], p13 = ii[r1 + c3];
  const p20 = ii[r2], p21 = ii[r2 + c1], p22 = ii[r2 + c2], p23 = ii[r2 + c3];
  const p30 = ii[r3], p31 = ii[r3 + c1], p32 = ii[r3 + c2], p33 = ii[r3 + c3];
  return lbpOfCorners(p00, p01, p02, p03, p10, p11, p12, p13, p20, p21, p22, p23, p30, p31, p32, p33);
}

/** The MB-LBP code from the 16 integral-image corners of the 3×3 cells (p<row><column>); training uses it too. */
export function lbpOfCorners(
  p00: number, p01: number, p02: number, p03: number, p10: number, p11: number, p12: number, p13: number,
  p20: number, p21: number, p22: number, p23: number, p30: number, p31: number, p32: number, p33: number,
): number {
  const c = (p11 - p12 - p21 + p22) | 0;
  return ((((p00 - p01 - p10 + p11) | 0) >= c ? 128 : 0)
    | (((p01 - p02 - p11 + p12) | 0) >= c ? 64 : 0)
    | (((p02 - p03 - p12 + p13) | 0) >= c ? 32 : 0)
    | (((p12 - p13 - p22 + p23) | 0) >= c ? 16 : 0)
    | (((p22 - p23 - p32 + p33) | 0) >= c ? 8 : 0)
    | (((p21 - p22 - p31 + p32) | 0) >= c ? 4 : 0)
    | (((p20 - p21 - p30 + p31) | 0) >= c ? 2 : 0)
    | (((p10 - p11 - p20 + p21) | 0) >= c ? 1 : 0));
}

/**
 * Evaluates one window: returns −1 if accepted (its final sum in `score[0]`), else the index of the weak
 * classifier that rejected it.
 */
export function evaluateWindow(
  ii: Int32Array, base: number, s: number, features: Int32Array, tables: Float64Array,
  reject: Float64Array, accept: Float64Array, reset: Uint8Array, count: number, score: Float64Array,
): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const f = 4 * i;
    sum += tables[256 * i + lbpCode(ii, base, s, features[f], features[f + 1], features[f + 2], features[f + 3])];
    if (sum < reject[i]) return i;
    if (sum >= accept[i]) break;
    if (reset[i] && i < count - 1) sum = 0;
  }
  score[0] = sum;
  return -1;
}

/**
 * Scans window rows of pyramid levels: `rows` lists (level, y) pairs, [r0, r1) the share of this task; `levels`
 * holds per level (integral offset, integral stride, cols, step). Returns the hits as (level, x, y, score)
 * quadruples and, per weak classifier, how many windows it rejected (the last entry: windows accepted).
 */
export interface DetectRowsArgs extends Range {
  ii: Int32Array;
  levels: Int32Array;
  rows: Int32Array;
  /** The compiled classifier's tables (compiled.ts). */
  features: Int32Array;
  tables: Float64Array;
  reject: Float64Array;
  accept: Float64Array;
  reset: Uint8Array;
  count: number;
  staged: boolean;
  firstStage: number;
}

export function detectRows({
  ii, levels, rows, start: r0, end: r1, features, tables, reject, accept, reset, count, staged, firstStage,
}: DetectRowsArgs): { hits: Float64Array; rejected: Uint32Array } {
  const hits: number[] = [];
  const rejected = new Uint32Array(count + 1);
  const score = new Float64Array(1);
  for (let r = r0; r < r1; r++) {
    const lv = rows[2 * r], y = rows[2 * r + 1];
    const off = levels[4 * lv], s = levels[4 * lv + 1], cols = levels[4 * lv + 2], step = levels[4 * lv + 3];
    for (let x = 0; x < cols; x += step) {
      const k = evaluateWindow(ii, off + y * s + x, s, features, tables, reject, accept, reset, count, score);
      if (k < 0) {
        hits.push(lv, x, y, score[0]);
        rejected[count]++;
      } else {
        rejected[k]++;
        // OpenCV (CascadeClassifierInvoker): a window rejected by the first stage skips the next position.
        if (staged && k < firstStage) x += step;
      }
    }
  }
  return { hits: Float64Array.from(hits), rejected };
}

/**
 * Builds levels l0, l0 + stride, … below l1 of the integral pyramid: each level resized from the 8-bit input (bit-exact
 * bilinear) and integrated at its offset in `ii`. `levels` holds per level (offset, stride, width, height).
 */
export interface PyramidArgs {
  src: Uint8Array;
  W: number;
  H: number;
  ii: Int32Array;
  levels: Int32Array;
  /** Levels l0, l0 + stride, … below l1. */
  l0: number;
  l1: number;
  stride: number;
}

export function pyramidLevelsCpu({ src, W, H, ii, levels, l0, l1, stride }: PyramidArgs): void {
  for (let l = l0; l < l1; l += stride) {
    const off = levels[4 * l], w = levels[4 * l + 2], h = levels[4 * l + 3];
    let px = src;
    if (w !== W || h !== H) {
      px = new Uint8Array(w * h);
      resizeLinearExact(src, W, H, w, h, px);
    }
    integralImage(px, w, h, ii, off);
  }
}

export const pyramidTask = defineTask('detect.pyramid', pyramidLevelsCpu);
export const detectRowsTask = defineTask('detect.rows', detectRows);

/** The detection family's CPU tasks (ops/tasks.ts). */
export const detectTasks = [pyramidTask, detectRowsTask];

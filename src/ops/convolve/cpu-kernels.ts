import { defineTask, type Range } from '../../core/cpu/pool.js';
import { roundBoxSum, type BoxRounding } from './box.js';

/**
 * Convolution on the CPU: pure functions over (shared) typed arrays, run by the worker pool (ops/tasks.ts).
 * Sums are accumulated in float64 and stored as float32, as scipy.ndimage does; zero weights are skipped (as
 * scipy's correlate does; where its filters spread NaN and ±inf otherwise, nonfinite.ts patches the result).
 * Index tables (plan.ts tapIndex) carry the border.
 */
type Pixels = Uint8Array | Uint16Array | Float32Array;

/**
 * One 1-D pass along an axis of a volume seen as [outer][nIn][inner] → [outer][nOut][inner], for output lines
 * t ∈ [t0, t1) (t = outer·nOut + o). `idx[o·k + j]` is the input position of tap j (−1: cval); `w` all k taps.
 */
export interface ConvLinesArgs extends Range {
  src: Pixels;
  dst: Float32Array;
  nIn: number;
  inner: number;
  nOut: number;
  w: Float32Array;
  idx: Int32Array;
  cval: number;
}

export function convLines({ src, dst, nIn, inner, nOut, w, idx, cval, start: t0, end: t1 }: ConvLinesArgs): void {
  const k = w.length;
  const taps: number[] = [];
  for (let j = 0; j < k; j++) if (w[j] !== 0) taps.push(j);
  const acc = inner > 1 ? new Float64Array(inner) : undefined;
  for (let t = t0; t < t1; t++) {
    const outer = Math.floor(t / nOut), o = t - outer * nOut;
    const sb = outer * nIn * inner, db = t * inner;
    if (!acc) {
      let s = 0;
      for (const j of taps) {
        const p = idx[o * k + j];
        s += w[j] * (p < 0 ? cval : src[sb + p]);
      }
      dst[db] = s;
      continue;
    }
    acc.fill(0);
    for (const j of taps) {
      const p = idx[o * k + j], wj = w[j];
      if (p < 0) {
        for (let i = 0; i < inner; i++) acc[i] += wj * cval;
      } else {
        const b = sb + p * inner;
        for (let i = 0; i < inner; i++) acc[i] += wj * src[b + i];
      }
    }
    for (let i = 0; i < inner; i++) dst[db + i] = acc[i];
  }
}

/**
 * A dense kernel [kz, ky, kx] for output rows r ∈ [r0, r1) (r = z·hOut + y). Taps in z, y, x order; `iz`, `iy`,
 * `ix` are the per-axis index tables of plan.ts tapIndex.
 */
export interface ConvDenseArgs extends Range {
  src: Pixels;
  dst: Float32Array;
  hIn: number;
  wIn: number;
  hOut: number;
  wOut: number;
  kz: number;
  ky: number;
  kx: number;
  w: Float32Array;
  iz: Int32Array;
  iy: Int32Array;
  ix: Int32Array;
  cval: number;
}

export function convDense({ src, dst, hIn, wIn, hOut, wOut, kz, ky, kx, w, iz, iy, ix, cval, start: r0, end: r1 }: ConvDenseArgs): void {
  const acc = new Float64Array(wOut);
  for (let r = r0; r < r1; r++) {
    const z = Math.floor(r / hOut), y = r - z * hOut;
    acc.fill(0);
    for (let tz = 0; tz < kz; tz++) {
      const pz = iz[z * kz + tz];
      for (let ty = 0; ty < ky; ty++) {
        const py = iy[y * ky + ty];
        const rowBase = (pz * hIn + py) * wIn;
        const outside = pz < 0 || py < 0;
        for (let tx = 0; tx < kx; tx++) {
          const wt = w[(tz * ky + ty) * kx + tx];
          if (wt === 0) continue;
          for (let x = 0; x < wOut; x++) {
            const px = ix[x * kx + tx];
            acc[x] += wt * (outside || px < 0 ? cval : src[rowBase + px]);
          }
        }
      }
    }
    const db = r * wOut;
    for (let x = 0; x < wOut; x++) dst[db + x] = acc[x];
  }
}

/**
 * √(Σ cᵢ²) element-wise, the sum in float64 and the root rounded once to float32: no overflow where the float32
 * squares would pass 3.4e38 (np.hypot's result, which scipy users take for the magnitude; the float32 steps of
 * np.sqrt(a**2 + b**2) gave +inf for gradients above ~1.8e19).
 */
export function magnitudeRange({ parts, out, start: s, end: e }: { parts: Float32Array[]; out: Float32Array } & Range): void {
  for (let i = s; i < e; i++) {
    let acc = 0;
    for (let c = 0; c < parts.length; c++) acc += parts[c][i] * parts[c][i];
    out[i] = Math.sqrt(acc);
  }
}

/**
 * Round half to even and saturate into u8/u16 (OpenCV's saturate_cast of a float, cvRound) — or, with `box`,
 * round exact 16-bit box window sums as cv2.blur does (box.ts).
 */
export interface CastArgs extends Range {
  src: Float32Array;
  dst: Uint8Array | Uint16Array;
  max: number;
  box?: BoxRounding;
}

export function castSaturateRange({ src, dst, max, start: s, end: e, box }: CastArgs): void {
  if (box) {
    for (let i = s; i < e; i++) dst[i] = roundBoxSum(src[i], i % box.width, box);
    return;
  }
  for (let i = s; i < e; i++) {
    const v = src[i];
    if (!(v > 0)) { dst[i] = 0; continue; } // also NaN → 0, as cvRound of NaN saturates to 0 in practice
    if (v >= max) { dst[i] = max; continue; }
    let r = Math.round(v);
    if (r - v === 0.5 && r % 2 !== 0) r -= 1;
    dst[i] = r;
  }
}

export const convLinesTask = defineTask('convolve.lines', convLines);
export const convDenseTask = defineTask('convolve.dense', convDense);
export const magnitudeTask = defineTask('convolve.magnitude', magnitudeRange);
export const castSaturateTask = defineTask('convolve.castSaturate', castSaturateRange);

/** The convolution family's CPU tasks (ops/tasks.ts). */
export const convolveTasks = [convLinesTask, convDenseTask, magnitudeTask, castSaturateTask];

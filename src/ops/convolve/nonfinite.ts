import { borderIndex, type BorderMode } from '../../core/border.js';
import type { ConvKernel } from './kernel.js';
import type { AxisGeo, Geo3 } from './plan.js';

/**
 * How NaN and ±inf in a float32 input spread through a filter, as scipy.ndimage computes it — which the fast
 * paths (CPU and GPU, whatever their pass order, skipping zero taps) do not all reproduce. The fast result is
 * right wherever scipy's is finite; where scipy's is NaN or ±inf, that value is patched in. Rules:
 * - 'taps' (sobel, prewitt: scipy's correlate1d passes, which multiply every weight): an output is NaN if its
 *   separable window holds a NaN, or an inf under a zero weight (0·inf), or infinities whose products with their
 *   weights have both signs; else ±inf if it holds an inf; else finite. The order of the 1-D passes does not
 *   change this (a NaN made in one pass reaches every later output of the window: no weight skips it).
 * - 'running' (box: scipy's uniform_filter1d, one pass per axis of size > 1, z then y then x): a running sum
 *   along each line, tmp += (entering − leaving) / k. A non-finite value that enters never leaves the sum: for
 *   output o, whose window is [o, o + k − 1] of the border-extended line, the prefix [0, o + k − 1] decides —
 *   no non-finite element: finite; a NaN, infinities of both signs, or a non-finite element that already left
 *   the window (index < o: inf − inf or NaN in the sum): NaN; else the infinity. Each pass reads the previous
 *   pass's classes.
 * Other filters (gaussian: no zero weights; correlate/convolve, laplace, roberts: scipy's correlate skips
 * weights |w| ≤ DBL_EPSILON, as the fast paths skip zero taps — kernel.ts flushes smaller weights to 0) need no
 * patch: the fast arithmetic already spreads NaN and ±inf as scipy does.
 */
export type NonFiniteRule = 'taps' | 'running';

/** Whether a float32 array holds a NaN or an infinity (x − x is NaN exactly for those). */
export function hasNonFinite(a: Float32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] - a[i] !== 0) return true;
  return false;
}

const CLASS_NAN = NaN;

/** The non-finite class of a value: 0 for finite (and for a border value, which is finite). */
const classOf = (v: number): number => (v - v === 0 ? 0 : v);

/** Input index of position p of an axis (−1: the constant border value). */
function mapped(p: number, g: AxisGeo, mode: BorderMode): number {
  if (mode === 'constant' && (p < g.lo || p >= g.hi)) return -1;
  return borderIndex(p, g.nIn, mode);
}

/** scipy's class of every output of one kernel over `src` ([d, h, w]): 0 where finite, else NaN or ±inf. */
export function nonFiniteClasses(src: Float32Array, shape: [number, number, number], k: ConvKernel, geo: Geo3, mode: BorderMode, rule: NonFiniteRule): Float32Array {
  return rule === 'taps' ? tapClasses(src, shape, k, geo, mode) : runningClasses(src, shape, k, geo, mode);
}

function tapClasses(src: Float32Array, shape: [number, number, number], k: ConvKernel, geo: Geo3, mode: BorderMode): Float32Array {
  const [, h, w] = shape;
  const [gz, gy, gx] = geo;
  const [kz, ky, kx] = k.size;
  const out = new Float32Array(gz.nOut * gy.nOut * gx.nOut);
  for (let oz = 0, i = 0; oz < gz.nOut; oz++) {
    for (let oy = 0; oy < gy.nOut; oy++) {
      for (let ox = 0; ox < gx.nOut; ox++, i++) {
        let nan = false, pos = false, neg = false;
        for (let tz = 0; tz < kz && !nan; tz++) {
          const pz = mapped(oz + gz.off + tz, gz, mode);
          for (let ty = 0; ty < ky && !nan; ty++) {
            const py = mapped(oy + gy.off + ty, gy, mode);
            for (let tx = 0; tx < kx; tx++) {
              const px = mapped(ox + gx.off + tx, gx, mode);
              if (pz < 0 || py < 0 || px < 0) continue;
              const v = src[(pz * h + py) * w + px];
              if (v - v === 0) continue;
              const wt = k.weights[(tz * ky + ty) * kx + tx];
              if (Number.isNaN(v) || wt === 0) { nan = true; break; }
              if ((wt > 0) === (v > 0)) pos = true;
              else neg = true;
            }
          }
        }
        out[i] = nan || (pos && neg) ? CLASS_NAN : pos ? Infinity : neg ? -Infinity : 0;
      }
    }
  }
  return out;
}

function runningClasses(src: Float32Array, shape: [number, number, number], k: ConvKernel, geo: Geo3, mode: BorderMode): Float32Array {
  let cur = Float32Array.from(src, classOf);
  const dims = [...shape] as [number, number, number];
  for (const axis of [0, 1, 2]) {
    const kk = k.size[axis];
    if (kk === 1) continue;
    const g = geo[axis];
    const inner = axis === 2 ? 1 : axis === 1 ? dims[2] : dims[1] * dims[2];
    const outer = axis === 0 ? 1 : axis === 1 ? dims[0] : dims[0] * dims[1];
    const next = new Float32Array(outer * g.nOut * inner);
    for (let ou = 0; ou < outer; ou++) {
      for (let in_ = 0; in_ < inner; in_++) {
        runningLine(cur, next, ou * g.nIn * inner + in_, ou * g.nOut * inner + in_, inner, kk, g, mode);
      }
    }
    dims[axis] = g.nOut;
    cur = next;
  }
  return cur;
}

/** One line of a running-sum pass: classes of the line starting at `sb` (stride `step`) into `db` (see 'running'). */
function runningLine(src: Float32Array, dst: Float32Array, sb: number, db: number, step: number, k: number, g: AxisGeo, mode: BorderMode): void {
  let firstNan = Infinity, firstPos = Infinity, firstNeg = Infinity;
  const enter = (e: number) => {
    const p = mapped(e + g.off, g, mode);
    const v = p < 0 ? 0 : src[sb + p * step];
    if (v === 0) return;
    if (Number.isNaN(v)) firstNan = Math.min(firstNan, e);
    else if (v > 0) firstPos = Math.min(firstPos, e);
    else firstNeg = Math.min(firstNeg, e);
  };
  for (let e = 0; e < k - 1; e++) enter(e);
  for (let o = 0; o < g.nOut; o++) {
    const end = o + k - 1;
    enter(end);
    const first = Math.min(firstNan, firstPos, firstNeg);
    let c = 0;
    if (first <= end) c = firstNan <= end || (firstPos <= end && firstNeg <= end) || first < o ? CLASS_NAN : firstPos <= end ? Infinity : -Infinity;
    dst[db + o * step] = c;
  }
}

/** Writes the non-finite classes into `out` (finite classes leave the fast result). */
export function patchNonFinite(out: Float32Array, classes: Float32Array): void {
  for (let i = 0; i < out.length; i++) if (classes[i] !== 0) out[i] = classes[i];
}

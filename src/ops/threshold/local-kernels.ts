/**
 * CPU kernels of the local (adaptive) thresholds, cv2.adaptiveThreshold semantics: the local mean over a
 * k×k window with replicated borders (BORDER_REPLICATE | BORDER_ISOLATED), rounded to 8 bits, and
 * out = src − mean > −ceil(C) ? maxValue : 0. Each works on a band of rows [y0, y1) so the pool can split.
 */
import { gaussianKernelBitExact } from '../../core/gaussian.js';
import { roundHalfEven } from '../../core/rounding.js';
import { defineTask, type Range } from '../../core/cpu/pool.js';
import { isodataRowsTask } from './adaptive-kernels.js';

/**
 * Per-thread scratch reused across calls (each worker has its own module instance): the row ring of a band is a
 * few MB, and fresh memory would be touched page by page on every call.
 */
const scratch = new Map<string, Uint8Array | Int32Array | Float32Array>();
function reuse<A extends Uint8Array | Int32Array | Float32Array>(key: string, Ctor: new (n: number) => A, n: number): A {
  let a = scratch.get(key) as A | undefined;
  if (!a || a.length < n) scratch.set(key, (a = new Ctor(n)));
  return a;
}

/** Row y of `src` with r replicated pixels on each side (cv2's BORDER_REPLICATE), so the loops need no clamps. */
function paddedRow(src: Uint8Array, w: number, y: number, r: number, pad: Uint8Array): Uint8Array {
  const row = y * w;
  pad.set(src.subarray(row, row + w), r);
  pad.fill(src[row], 0, r);
  pad.fill(src[row + w - 1], r + w, r + w + r);
  return pad;
}

/** The ring slot of window row position p (which may lie outside the image: its row is clamped). */
const slotOf = (p: number, k: number) => ((p % k) + k) % k;

/** Horizontal k-wide window sums of row clamp(y) into out[o, o + w): a running sum, O(1) per pixel. */
function boxRow(src: Uint8Array, w: number, h: number, y: number, r: number, pad: Uint8Array, out: Int32Array, o: number): void {
  const p = paddedRow(src, w, Math.min(h - 1, Math.max(0, y)), r, pad);
  const k = 2 * r + 1;
  let s = 0;
  for (let i = 0; i < k; i++) s += p[i];
  out[o] = s;
  for (let x = 1; x < w; x++) {
    s += p[x + k - 1] - p[x - 1];
    out[o + x] = s;
  }
}

/**
 * cv2.adaptiveThreshold(…, ADAPTIVE_THRESH_MEAN_C, THRESH_BINARY, k, C) for rows [y0, y1), in one pass: a ring
 * of the k row sums of the window, running column sums, and an integer comparison instead of the rounded mean
 * (mean = ⌊(2·sum + k²)/(2k²)⌋ exactly — k² is odd — and src − mean > −ceil(C) ⇔ 2·sum + k² < 2k²·(src + ceil(C))).
 * One pass with a ring kept in cache replaced two passes through a full-image Uint32 buffer (fresh memory each call).
 */
export interface BoxThresholdArgs extends Range {
  src: Uint8Array;
  w: number;
  h: number;
  /** Window radius. */
  r: number;
  idelta: number;
  maxv: number;
  dst: Uint8Array;
}

export function boxThresholdRows({ src, w, h, r, idelta, maxv, dst, start: y0, end: y1 }: BoxThresholdArgs): void {
  const k = 2 * r + 1, k2 = k * k;
  const ring = reuse('boxRing', Int32Array, k * w);
  const col = reuse('boxCol', Int32Array, w);
  const pad = reuse('pad', Uint8Array, w + 2 * r);
  col.fill(0, 0, w);
  for (let p = y0 - r; p <= y0 + r; p++) {
    const o = slotOf(p, k) * w;
    boxRow(src, w, h, p, r, pad, ring, o);
    for (let x = 0; x < w; x++) col[x] += ring[o + x];
  }
  for (let y = y0; y < y1; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) dst[row + x] = 2 * col[x] + k2 < 2 * k2 * (src[row + x] + idelta) ? maxv : 0;
    if (y + 1 < y1) {
      // Row y − r leaves the window and row y + r + 1 enters it, in the same ring slot.
      const o = slotOf(y - r, k) * w;
      for (let x = 0; x < w; x++) col[x] -= ring[o + x];
      boxRow(src, w, h, y + r + 1, r, pad, ring, o);
      for (let x = 0; x < w; x++) col[x] += ring[o + x];
    }
  }
}

/**
 * Horizontal Gaussian pass of row clamp(y) into out[o, o + w), in float32, OpenCV's RowFilter order per pixel:
 * s = k0·x0, then s = fma(k_i, x_i, s) — taps outer, pixels inner, each partial sum rounded to float32 by the
 * Float32Array store exactly as Math.fround would.
 */
function gaussRow(src: Uint8Array, w: number, h: number, y: number, kernel: Float32Array, pad: Uint8Array, out: Float32Array, o: number): void {
  const r = (kernel.length - 1) >> 1;
  const p = paddedRow(src, w, Math.min(h - 1, Math.max(0, y)), r, pad);
  const k0 = kernel[0];
  for (let x = 0; x < w; x++) out[o + x] = k0 * p[x];
  for (let i = 1; i < kernel.length; i++) {
    const ki = kernel[i];
    for (let x = 0; x < w; x++) out[o + x] = ki * p[x + i] + out[o + x];
  }
}

/**
 * cv2.adaptiveThreshold(…, ADAPTIVE_THRESH_GAUSSIAN_C, THRESH_BINARY, k, C) for rows [y0, y1) in one pass: the
 * horizontally filtered rows of the window in a ring, then OpenCV's SymmColumnFilter order per pixel (centre tap,
 * then symmetric pairs), rounded half to even to 8 bits as convertTo does, then binarized. Bit-exact with the
 * float32 arithmetic of cv2 (a·b of two float32 is exact in double, so a·b + c stored to float32 is fma32).
 */
export interface GaussThresholdArgs extends Range {
  src: Uint8Array;
  w: number;
  h: number;
  kernel: Float32Array;
  idelta: number;
  maxv: number;
  dst: Uint8Array;
  /** Use the generated passes where possible (false: the generic loops, as under a CSP that forbids eval). */
  generate?: boolean;
}

export function gaussThresholdRows({ src, w, h, kernel, idelta, maxv, dst, start: y0, end: y1, generate = true }: GaussThresholdArgs): void {
  const k = kernel.length, r = (k - 1) >> 1;
  const ring = reuse('gaussRing', Float32Array, k * w);
  const acc = reuse('gaussAcc', Float32Array, w);
  const pad = reuse('pad', Uint8Array, w + 2 * r);
  const fast = generate ? generatedGauss(kernel) : null;
  if (fast) {
    const offs = new Int32Array(k);
    for (let p = y0 - r; p < y0 + r; p++) fast.row(paddedRow(src, w, Math.min(h - 1, Math.max(0, p)), r, pad), ring, slotOf(p, k) * w, w);
    for (let y = y0; y < y1; y++) {
      fast.row(paddedRow(src, w, Math.min(h - 1, y + r), r, pad), ring, slotOf(y + r, k) * w, w);
      for (let j = 0; j < k; j++) offs[j] = slotOf(y - r + j, k) * w;
      fast.col(ring, offs, src, y * w, w, idelta, maxv, dst);
    }
    return;
  }
  for (let p = y0 - r; p < y0 + r; p++) gaussRow(src, w, h, p, kernel, pad, ring, slotOf(p, k) * w);
  for (let y = y0; y < y1; y++) {
    // Row y + r enters the window (the slot of row y − r − 1, which left it).
    gaussRow(src, w, h, y + r, kernel, pad, ring, slotOf(y + r, k) * w);
    const c = slotOf(y, k) * w;
    const kc = kernel[r];
    for (let x = 0; x < w; x++) acc[x] = kc * ring[c + x];
    for (let i = 1; i <= r; i++) {
      const up = slotOf(y - i, k) * w, down = slotOf(y + i, k) * w, ki = kernel[r + i];
      for (let x = 0; x < w; x++) acc[x] = ki * Math.fround(ring[down + x] + ring[up + x]) + acc[x];
    }
    const row = y * w;
    for (let x = 0; x < w; x++) {
      const mean = Math.min(255, Math.max(0, roundHalfEven(acc[x])));
      dst[row + x] = src[row + x] - mean > -idelta ? maxv : 0;
    }
  }
}

type GaussRowFn = (p: Uint8Array, out: Float32Array, o: number, w: number) => void;
type GaussColFn = (ring: Float32Array, offs: Int32Array, src: Uint8Array, row: number, w: number, idelta: number, maxv: number, dst: Uint8Array) => void;
const gaussCode = new Map<string, { row: GaussRowFn; col: GaussColFn } | null>();

/**
 * The Gaussian passes generated for one kernel, its weights as literals and its taps unrolled — as the GPU kernels
 * are generated per variant — so that V8 keeps each pixel's sum in a register instead of making a pass over the row
 * per tap (the whole Gaussian threshold of a 4K image on one thread: 300 → 213 ms). Same operations in the same order as gaussRow and the generic
 * column loop, each partial sum rounded to float32, so bit-exact with them and with cv2. The binarization compares
 * instead of rounding: clamp(roundHalfEven(s)) < t ⇔ t > 255, or t > 0 and (s < t − ½, or s = t − ½ with t − 1 even).
 * Null where code generation is not allowed (a page's Content-Security-Policy): the generic loops run then.
 */
function generatedGauss(kernel: Float32Array): { row: GaussRowFn; col: GaussColFn } | null {
  const key = Array.from(kernel).join(',');
  if (gaussCode.has(key)) return gaussCode.get(key)!;
  const k = kernel.length, r = (k - 1) >> 1;
  const lit = (v: number) => `(${String(v)})`;
  const rowTaps = [`let s = Math.fround(${lit(kernel[0])} * p[x]);`];
  for (let i = 1; i < k; i++) rowTaps.push(`s = Math.fround(${lit(kernel[i])} * p[x + ${i}] + s);`);
  const colTaps = [`let s = Math.fround(${lit(kernel[r])} * ring[o${r} + x]);`];
  for (let i = 1; i <= r; i++) colTaps.push(`s = Math.fround(${lit(kernel[r + i])} * Math.fround(ring[o${r + i} + x] + ring[o${r - i} + x]) + s);`);
  let fns: { row: GaussRowFn; col: GaussColFn } | null = null;
  try {
    // Generated code (the taps unrolled as literals); where eval is refused (a CSP), the loop below is used.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const row = new Function('p', 'out', 'o', 'w', `for (let x = 0; x < w; x++) {\n${rowTaps.join('\n')}\nout[o + x] = s;\n}`) as GaussRowFn;
    const offs = Array.from({ length: k }, (_, j) => `const o${j} = offs[${j}];`).join('\n');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const col = new Function('ring', 'offs', 'src', 'row', 'w', 'idelta', 'maxv', 'dst', `${offs}
for (let x = 0; x < w; x++) {
${colTaps.join('\n')}
const t = src[row + x] + idelta;
dst[row + x] = t > 255 || (t > 0 && (s < t - 0.5 || (s === t - 0.5 && ((t - 1) & 1) === 0))) ? maxv : 0;
}`) as GaussColFn;
    fns = { row, col };
  } catch {
    fns = null;
  }
  gaussCode.set(key, fns);
  return fns;
}

/**
 * OpenCV's getGaussianKernel(k, 0, CV_32F) (imgproc/src/smooth.dispatch.cpp, getGaussianKernelBitExact): the
 * fixed tables for k ≤ 9 (read off cv2.getGaussianKernel); else σ = 0.15·k + 0.35, weights exp(x²·(−0.125/σ²)) at doubled coordinates
 * x = 2i − (k − 1), normalized by the double sum (centre weight 1), then rounded to float32.
 */
export function gaussianKernel(k: number): Float32Array {
  const SMALL: Record<number, number[]> = {
    1: [1], 3: [0.25, 0.5, 0.25], 5: [0.0625, 0.25, 0.375, 0.25, 0.0625],
    7: [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125],
    9: [0.015625, 0.05078125, 0.1171875, 0.19921875, 0.234375, 0.19921875, 0.1171875, 0.05078125, 0.015625],
  };
  if (SMALL[k]) return Float32Array.from(SMALL[k]);
  return Float32Array.from(gaussianKernelBitExact(k, k * 0.15 + 0.35));
}

export const boxThresholdTask = defineTask('threshold.boxRows', boxThresholdRows);
export const gaussThresholdTask = defineTask('threshold.gaussRows', gaussThresholdRows);

/** The threshold family's CPU tasks (ops/tasks.ts). */
export const thresholdTasks = [boxThresholdTask, gaussThresholdTask, isodataRowsTask];

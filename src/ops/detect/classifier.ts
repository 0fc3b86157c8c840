import { InvalidArgumentError } from '../../core/errors.js';

/**
 * A multi-block LBP feature (Zhang et al. 2007; OpenCV's `LBPEvaluator`): a 3×3 grid of w×h cells whose
 * top-left corner is (x, y) inside the detection window. Its code compares the 8 outer cell sums with the
 * centre one, bits from 128 down to 1 for cells (0,0) (0,1) (0,2) (1,2) (2,2) (2,1) (2,0) (1,0) — OpenCV's
 * order, which the WaldBoost files imgpu reads and writes use as well.
 */
export interface LbpFeature {
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * One weak classifier: a feature and a 256-entry response table indexed by its LBP code. After its response
 * is added to the running sum, the window is rejected if sum < `reject`, accepted at once if sum ≥ `accept`
 * (WaldBoost's early decisions; ±Infinity when absent), and the sum restarts from 0 if `reset` (the end of
 * an OpenCV stage, whose sums do not carry over).
 */
export interface WeakClassifier {
  feature: LbpFeature;
  table: Float32Array;
  reject: number;
  accept: number;
  reset: boolean;
}

/**
 * The one internal form of every classifier imgpu loads (OpenCV LBP cascades and WaldBoost files): a window
 * size and a sequence of weak classifiers evaluated in order with one running sum.
 */
export interface Classifier {
  name: string;
  window: { width: number; height: number };
  weak: WeakClassifier[];
  /**
   * A staged cascade (sums restart after each stage): detection scans windows as OpenCV does, where a window
   * rejected by the first stage makes the scan skip the next x position. Plain WaldBoost scans every position.
   */
  staged: boolean;
}

/** The index range [start, end) of the weak classifiers of the first stage (up to and with the first reset). */
export function firstStage(c: Classifier): number {
  const i = c.weak.findIndex((w) => w.reset);
  return i < 0 ? 1 : i + 1;
}

/** Checks a classifier's invariants: features inside the window, 256-entry tables, thresholds not NaN. */
export function validateClassifier(c: Classifier): void {
  const { width: W, height: H } = c.window;
  const where = c.name;
  if (!Number.isInteger(W) || !Number.isInteger(H) || W < 3 || H < 3 || W > 1024 || H > 1024) {
    throw new InvalidArgumentError(`${where}: window size ${W}×${H} is not a valid detection window`);
  }
  if (!c.weak.length) throw new InvalidArgumentError(`${where}: the classifier has no weak classifiers`);
  c.weak.forEach((wk, i) => {
    const f = wk.feature;
    if (![f.x, f.y, f.w, f.h].every(Number.isInteger) || f.x < 0 || f.y < 0 || f.w < 1 || f.h < 1 || f.x + 3 * f.w > W || f.y + 3 * f.h > H) {
      throw new InvalidArgumentError(`${where}: weak classifier ${i}: LBP feature at (${f.x}, ${f.y}) with ${f.w}×${f.h} cells does not fit the ${W}×${H} window`);
    }
    if (wk.table.length !== 256 || wk.table.some((v) => !Number.isFinite(v))) {
      throw new InvalidArgumentError(`${where}: weak classifier ${i}: the response table needs 256 finite values`);
    }
    if (Number.isNaN(wk.reject) || Number.isNaN(wk.accept)) throw new InvalidArgumentError(`${where}: weak classifier ${i}: a threshold is not a number`);
  });
}

/**
 * The fixed-point form of a classifier's sums for the GPU, which has no double: every response and threshold
 * is an integer multiple of 2^-shift, and every partial sum fits in 2^53 (so the CPU's doubles are exact as
 * well, and equal OpenCV's double sums of its float leaves). `exact` is false only when the values span more
 * than 53 bits; they are then rounded to the grid, on both paths alike.
 */
export interface FixedPoint {
  shift: number;
  exact: boolean;
}

/** The smallest k ≥ 0 with v·2^k an integer (floats have one: their last mantissa bit). */
function fractionBits(v: number): number {
  let k = 0;
  while (!Number.isInteger(v * 2 ** k) && k < 1100) k++;
  return k;
}

/** Chooses the fixed-point shift of a classifier's sums (see FixedPoint). */
export function fixedPointOf(c: Classifier): FixedPoint {
  let bits = 0;
  let bound = 0, segment = 0;
  for (const w of c.weak) {
    let m = 0;
    for (const v of w.table) {
      m = Math.max(m, Math.abs(v));
      bits = Math.max(bits, fractionBits(v));
    }
    for (const t of [w.reject, w.accept]) if (Number.isFinite(t)) { bits = Math.max(bits, fractionBits(t)); bound = Math.max(bound, Math.abs(t)); }
    segment += m;
    bound = Math.max(bound, segment);
    if (w.reset) segment = 0;
  }
  const room = 52 - Math.ceil(Math.log2(Math.max(bound, 1) + 1));
  return bits <= room ? { shift: bits, exact: true } : { shift: room, exact: false };
}

/** `v` on the fixed-point grid, as a (possibly huge) integer in a double. */
export function toFixed(v: number, fp: FixedPoint): number {
  if (v === Infinity) return 2 ** 62;
  if (v === -Infinity) return -(2 ** 62);
  return Math.round(v * 2 ** fp.shift);
}

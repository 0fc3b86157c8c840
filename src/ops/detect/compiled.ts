import { fixedPointOf, firstStage, toFixed, type Classifier, type FixedPoint } from './classifier.js';

/**
 * A classifier flattened into typed arrays, the form both detectors evaluate (and the CPU workers receive):
 * responses and thresholds on the fixed-point grid of `fixed` — as doubles for the CPU, as two's-complement
 * 64-bit words (lo, hi) for the GPU.
 */
export interface CompiledClassifier {
  count: number;
  window: { width: number; height: number };
  /** x, y, w, h per weak classifier. */
  features: Int32Array;
  /** 256 responses per weak classifier (values on the fixed-point grid). */
  tables: Float64Array;
  reject: Float64Array;
  accept: Float64Array;
  /** 1 where the sum restarts after the weak classifier. */
  reset: Uint8Array;
  /** OpenCV's scanning rule applies; windows rejected before `firstStage` skip the next x. */
  staged: boolean;
  firstStage: number;
  fixed: FixedPoint;
}

export function compileClassifier(c: Classifier): CompiledClassifier {
  const n = c.weak.length;
  const fixed = fixedPointOf(c);
  const unit = 2 ** -fixed.shift;
  const features = new Int32Array(4 * n), tables = new Float64Array(256 * n);
  const reject = new Float64Array(n), accept = new Float64Array(n), reset = new Uint8Array(n);
  c.weak.forEach((w, i) => {
    features.set([w.feature.x, w.feature.y, w.feature.w, w.feature.h], 4 * i);
    for (let k = 0; k < 256; k++) tables[256 * i + k] = toFixed(w.table[k], fixed) * unit;
    reject[i] = Number.isFinite(w.reject) ? toFixed(w.reject, fixed) * unit : w.reject;
    accept[i] = Number.isFinite(w.accept) ? toFixed(w.accept, fixed) * unit : w.accept;
    reset[i] = w.reset ? 1 : 0;
  });
  return { count: n, window: { ...c.window }, features, tables, reject, accept, reset, staged: c.staged, firstStage: firstStage(c), fixed };
}

/**
 * A compiled response or threshold (a value on the grid, or ±Infinity) as the GPU's two's-complement 64-bit
 * fixed point: 32-bit words [lo, hi].
 */
export function fixedWords(v: number, fp: FixedPoint): [number, number] {
  const big = BigInt.asUintN(64, BigInt(toFixed(v, fp)));
  return [Number(big & 0xffffffffn), Number(big >> 32n)];
}

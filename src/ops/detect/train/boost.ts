/**
 * Gentle AdaBoost with categorical stumps over the 256 MB-LBP codes (traincascade's CvCascadeBoost with maxDepth 1,
 * its regression trees' categorical split: ml's CvDTree::find_split_cat_reg). Numerics are chosen so that the CPU and
 * the GPU histograms give the same classifier bit for bit: sample weights are doubles on the host, quantised to
 * integers (WEIGHT_UNITS in all) before each weak learner; a histogram bin is a sum of integers, exact in any order;
 * the split search, leaves, thresholds and weight updates run on the host in doubles, the same code for both paths.
 */

/** The integer total of the quantised weights of one round: bins (sums of them) fit u32 with room. */
export const WEIGHT_UNITS = 2 ** 30;

/** One weak classifier: a feature of the pool, the codes that go left (a 256-bit mask, OpenCV's 8 subset words) and the two leaves. */
export interface Stump {
  /** Index into the feature pool (mbLbpFeatures order). */
  feature: number;
  /** Bit c of word c >> 5 set: code c takes leaf 0 (`left`). As OpenCV writes them, signed 32-bit. */
  subset: Int32Array;
  /** float32 values, as detection reads them. */
  left: number;
  right: number;
}

/** A stage: stumps and the threshold its sum must reach (a float32 value, as stageThreshold). */
export interface TrainedStage {
  weak: Stump[];
  threshold: number;
}

/** The response of a stump to a code. */
export function stumpValue(s: Stump, code: number): number {
  return (s.subset[code >> 5] & (1 << (code & 31))) !== 0 ? s.left : s.right;
}

/** OpenCV's rule in detection (cascadedetect.cpp): a stage rejects when sum < (float)threshold − 1e-5f, in float. */
export function effectiveThreshold(t: number): number {
  return Math.fround(Math.fround(t) - Math.fround(1e-5));
}

/**
 * Weight trimming (CvBoost::trim_weights): the lightest samples whose weights add up to at most (1 − rate) of the
 * total sit out this weak learner (weight 0). Ties at the cut stay in, so the result depends on values only.
 */
export function trimWeights(w: Float64Array, rate: number): Float64Array {
  if (rate >= 1) return w;
  const sorted = Float64Array.from(w).sort();
  let total = 0;
  for (const v of w) total += v;
  let dropped = 0, cut = 0;
  for (const v of sorted) {
    if (dropped + v > (1 - rate) * total) { cut = v; break; }
    dropped += v;
  }
  return w.map((v) => (v < cut ? 0 : v));
}

/** Weights as integers summing to about WEIGHT_UNITS (floor of each share): what both histograms add. */
export function quantiseWeights(w: Float64Array): Uint32Array {
  let total = 0;
  for (const v of w) total += v;
  const q = new Uint32Array(w.length);
  if (total > 0) for (let i = 0; i < w.length; i++) q[i] = Math.floor((w[i] / total) * WEIGHT_UNITS);
  return q;
}

/**
 * The CPU histograms of features [f0, f1): per feature, the quantised weights of the positives per code (bins 0–255)
 * and of the negatives (bins 256–511), into `out` (512 words per feature). The reference of the GPU histogram kernel.
 */
export function histogramsRange(codes: Uint8Array, n: number, positive: Uint8Array, q: Uint32Array, f0: number, f1: number, out: Uint32Array): void {
  out.fill(0, f0 * 512, f1 * 512);
  for (let f = f0; f < f1; f++) {
    const row = f * n, h = f * 512;
    for (let i = 0; i < n; i++) {
      const wq = q[i];
      if (wq) out[h + codes[row + i] + (positive[i] ? 0 : 256)] += wq;
    }
  }
}

/** histogramsRange over all F features. */
export function histogramsCpu(codes: Uint8Array, n: number, positive: Uint8Array, q: Uint32Array, F: number, out: Uint32Array): void {
  histogramsRange(codes, n, positive, q, 0, F, out);
}

/** The best categorical split of one feature's histogram: its score (Σ²/weight of both sides) and the codes of the left side. */
export interface Split {
  score: number;
  feature: number;
  /** The codes on the left, in ascending order of mean response. */
  left: number[];
  leftSum: number;
  leftWeight: number;
  rightSum: number;
  rightWeight: number;
}

/**
 * find_split_cat_reg on one histogram: the codes that occur, sorted by mean response (ties by code), and the prefix
 * that maximises L²/Lw + R²/Rw (the first maximum). Codes that no weighted sample has go right. Undefined when fewer
 * than two codes occur (no split).
 */
export function bestSplitOf(hist: Uint32Array, offset: number, feature: number): Split | undefined {
  const codes: number[] = [];
  const mean = new Float64Array(256);
  let S = 0, Wt = 0;
  for (let c = 0; c < 256; c++) {
    const p = hist[offset + c], m = hist[offset + 256 + c];
    if (p + m === 0) continue;
    codes.push(c);
    mean[c] = (p - m) / (p + m);
    S += p - m;
    Wt += p + m;
  }
  if (codes.length < 2) return undefined;
  codes.sort((a, b) => mean[a] - mean[b] || a - b);
  let L = 0, LW = 0, best = -Infinity, at = -1, bestL = 0, bestLW = 0;
  for (let k = 0; k < codes.length - 1; k++) {
    const c = codes[k], p = hist[offset + c], m = hist[offset + 256 + c];
    L += p - m;
    LW += p + m;
    const R = S - L, RW = Wt - LW;
    const score = (L * L) / LW + (R * R) / RW;
    if (score > best) { best = score; at = k; bestL = L; bestLW = LW; }
  }
  return { score: best, feature, left: codes.slice(0, at + 1), leftSum: bestL, leftWeight: bestLW, rightSum: S - bestL, rightWeight: Wt - bestLW };
}

/** The best split of features [f0, f1) (the first of equal scores: the lowest feature index). */
export function bestSplitRange(hist: Uint32Array, f0: number, f1: number): Split | undefined {
  let best: Split | undefined;
  for (let f = f0; f < f1; f++) {
    const s = bestSplitOf(hist, f * 512, f);
    if (s && (!best || s.score > best.score)) best = s;
  }
  return best;
}

/** The best of the chunks' best splits, taken in feature order (so equal to one pass over all features). */
export function bestOfSplits(splits: (Split | undefined)[]): Split | undefined {
  let best: Split | undefined;
  for (const s of splits) if (s && (!best || s.score > best.score)) best = s;
  return best;
}

/** A split as a stump: the 256-bit mask of its left codes and its leaves, the weighted mean response of each side in float. */
export function stumpOf(s: Split): Stump {
  const subset = new Int32Array(8);
  for (const c of s.left) subset[c >> 5] |= 1 << (c & 31);
  return { feature: s.feature, subset, left: Math.fround(s.leftSum / s.leftWeight), right: Math.fround(s.rightSum / s.rightWeight) };
}

/**
 * The stage threshold for a hit rate (CvCascadeBoost::isErrDesired): positives' sums as float, sorted; the one at
 * index ⌊(1 − minHitRate)·n⌋ (in float, as OpenCV) is the threshold.
 */
export function stageThreshold(posSums: Float64Array, minHitRate: number): number {
  const s = Float32Array.from(posSums).sort();
  const idx = Math.floor(Math.fround(Math.fround(1 - Math.fround(minHitRate)) * s.length));
  return s[Math.min(idx, s.length - 1)];
}

import { effectiveThreshold, quantiseWeights, stageThreshold, stumpOf, stumpValue, trimWeights, type Split, type TrainedStage } from './boost.js';

/**
 * One stage of boosting (CvCascadeBoost::train): weak learners added until the stage meets its false-alarm rate at
 * the threshold that keeps its hit rate, or until maxWeakCount. The histograms come from a backend (CPU or GPU);
 * everything else is host code shared by both, so both give the same stage.
 */

/** Per-feature weighted code histograms of the current samples (F·512 words: positives' bins, then negatives'). */
export interface HistogramBackend {
  histograms(q: Uint32Array): Promise<Uint32Array>;
}

/** The samples of a stage: their codes (a feature's, on demand), labels, and the sums they carry in. */
export interface StageSamples {
  /** The codes of feature f on every sample. */
  codesOf(f: number): Uint8Array;
  n: number;
  /** 1 for a positive. */
  positive: Uint8Array;
  /** Feature count of the pool. */
  F: number;
  /** The best split of the histograms (over the CPU pool's threads: the same split whatever their number). */
  bestSplit(hist: Uint32Array): Promise<Split | undefined>;
  /** The running sum each sample starts the stage with: 0 for a cascade; the sum so far for WaldBoost (one sum). */
  offset: Float64Array;
}

export interface StageOptions {
  minHitRate: number;
  maxFalseAlarm: number;
  maxWeakCount: number;
  weightTrimming: number;
}

export interface StageResult {
  stage: TrainedStage;
  hitRate: number;
  falseAlarm: number;
  /** The samples' running sums after the stage (offset + the stage's responses). */
  sums: Float64Array;
}

/** Starting weights: exp(−y·offset), normalised (uniform for a cascade stage; boosting continued on one sum for WaldBoost). */
function initialWeights(d: StageSamples): Float64Array {
  const w = new Float64Array(d.n);
  let total = 0;
  for (let i = 0; i < d.n; i++) total += w[i] = Math.exp(-(d.positive[i] ? 1 : -1) * d.offset[i]);
  for (let i = 0; i < d.n; i++) w[i] /= total;
  return w;
}

/** Hit and false-alarm rates of the sums at a threshold, as detection decides (sum < threshold − 1e-5 in float rejects). */
function rates(d: StageSamples, sums: Float64Array, threshold: number): { hitRate: number; falseAlarm: number } {
  const t = effectiveThreshold(threshold);
  let pos = 0, hits = 0, neg = 0, fa = 0;
  for (let i = 0; i < d.n; i++) {
    if (d.positive[i]) { pos++; if (sums[i] >= t) hits++; } else { neg++; if (sums[i] >= t) fa++; }
  }
  return { hitRate: hits / Math.max(pos, 1), falseAlarm: fa / Math.max(neg, 1) };
}

export async function trainStage(d: StageSamples, o: StageOptions, backend: HistogramBackend, onWeak?: (k: number, falseAlarm: number) => void): Promise<StageResult> {
  const w = initialWeights(d);
  const sums = Float64Array.from(d.offset);
  const posSums = new Float64Array(d.positive.reduce((a, p) => a + p, 0));
  const stage: TrainedStage = { weak: [], threshold: 0 };
  let r = { hitRate: 1, falseAlarm: 1 };
  while (stage.weak.length < o.maxWeakCount) {
    const hist = await backend.histograms(quantiseWeights(trimWeights(w, o.weightTrimming)));
    const split = await d.bestSplit(hist);
    if (!split) break; // every weighted sample has the same code on every feature: nothing left to split
    const stump = stumpOf(split);
    stage.weak.push(stump);
    updateSamples(d, stump, sums, w);
    for (let i = 0, k = 0; i < d.n; i++) if (d.positive[i]) posSums[k++] = sums[i];
    stage.threshold = stageThreshold(posSums, o.minHitRate);
    r = rates(d, sums, stage.threshold);
    onWeak?.(stage.weak.length, r.falseAlarm);
    if (r.falseAlarm <= o.maxFalseAlarm) break;
  }
  return { stage, ...r, sums };
}

/** Adds a stump's responses to the sums and updates the weights (Gentle AdaBoost: w ← w·exp(−y·h(x)), normalised). */
function updateSamples(d: StageSamples, stump: TrainedStage['weak'][number], sums: Float64Array, w: Float64Array): void {
  const codes = d.codesOf(stump.feature);
  let total = 0;
  for (let i = 0; i < d.n; i++) {
    const v = stumpValue(stump, codes[i]);
    sums[i] += v;
    total += w[i] *= Math.exp(-(d.positive[i] ? 1 : -1) * v);
  }
  for (let i = 0; i < d.n; i++) w[i] /= total;
}

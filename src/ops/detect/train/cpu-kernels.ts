import { defineTask, type Range } from '../../../core/cpu/pool.js';
import { bestSplitRange, histogramsRange, type Split } from './boost.js';
import { featureCodes } from './features.js';

/**
 * Training's CPU tasks, each over a range of features (the worker pool splits the feature pool): the codes of the
 * samples, the weighted histograms and the best split. Every feature's work is the same function on either side, and
 * the chunks' best splits are reduced in feature order, so the result does not depend on the number of threads.
 */

export interface CodesArgs extends Range {
  integrals: Int32Array;
  n: number;
  W: number;
  H: number;
  features: Int32Array;
  /** Out: codes[f·n + i]. */
  codes: Uint8Array;
}

function codesRange({ integrals, n, W, H, features, codes, start, end }: CodesArgs): void {
  for (let f = start; f < end; f++) featureCodes(integrals, n, W, H, features, f, codes.subarray(f * n, (f + 1) * n));
}

export interface HistogramsArgs extends Range {
  codes: Uint8Array;
  n: number;
  positive: Uint8Array;
  q: Uint32Array;
  /** Out: 512 bins per feature. */
  out: Uint32Array;
}

export interface SplitArgs extends Range {
  hist: Uint32Array;
}

export const trainCodesTask = defineTask('train.codes', codesRange);
export const trainHistogramsTask = defineTask('train.histograms', (a: HistogramsArgs) => histogramsRange(a.codes, a.n, a.positive, a.q, a.start, a.end, a.out));
export const trainSplitTask = defineTask('train.split', (a: SplitArgs): Split | undefined => bestSplitRange(a.hist, a.start, a.end));

/** The training family's CPU tasks (ops/tasks.ts). */
export const trainTasks = [trainCodesTask, trainHistogramsTask, trainSplitTask];

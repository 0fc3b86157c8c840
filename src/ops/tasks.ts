import type { TaskTable } from '../core/cpu/pool.js';
import { InlinePool, runBlocks } from '../core/cpu/pool.js';
import { castSaturateRange, convDense, convLines, magnitudeRange } from './convolve/cpu-kernels.js';
import { detectRows, pyramidLevelsCpu } from './detect/cpu-kernels.js';
import { histogramRange } from './histogram/cpu-kernels.js';
import { applyLutRange } from './lut/cpu-kernels.js';
import { claheInterpolateRows, claheTileLuts, claheWindowRows } from './clahe/cpu-kernels.js';
import { directMorph, subtractRange, vhgwLines } from './morph/cpu-kernels.js';
import { adaptiveIsodataRows } from './threshold/adaptive-kernels.js';
import { boxThresholdRows, gaussThresholdRows } from './threshold/local-kernels.js';

/** Every CPU task a worker can run: pure functions over (shared) typed arrays. */
export const TASKS: TaskTable = {
  histogram: histogramRange,
  applyLut: applyLutRange,
  boxThresholdRows,
  gaussThresholdRows,
  adaptiveIsodataRows,
  claheTileLuts,
  claheInterpolateRows,
  claheWindowRows,
  vhgwLines,
  directMorph,
  subtract: subtractRange,
  convLines,
  convDense,
  magnitude: magnitudeRange,
  castSaturate: castSaturateRange,
  detectPyramid: pyramidLevelsCpu,
  detectRows,
  // Dynamic scheduling of any task above over blocks (forBlocks).
  blocks: (task: string, counter: Int32Array, n: number, block: number, args: unknown[], sum: boolean) => runBlocks(TASKS, task, counter, n, block, args, sum),
};

/** The single-threaded pool used when the caller passes none (and in browsers). */
export const inlinePool = new InlinePool(TASKS);

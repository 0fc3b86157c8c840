import { colourTasks } from '../core/colour.js';
import { taskTable } from '../core/cpu/pool.js';
import { claheTasks } from './clahe/cpu-kernels.js';
import { convolveTasks } from './convolve/cpu-kernels.js';
import { detectTasks } from './detect/cpu-kernels.js';
import { trainTasks } from './detect/train/cpu-kernels.js';
import { histogramTasks } from './histogram/cpu-kernels.js';
import { lutTasks } from './lut/cpu-kernels.js';
import { morphTasks } from './morph/cpu-kernels.js';
import { thresholdTasks } from './threshold/local-kernels.js';

/**
 * Every CPU task a worker thread can run (what src/node's worker pool loads; the inline pool needs no table), by the name its handle carries over the wire: the families' handle
 * lists (each family's cpu-kernels.ts) and the worker side of forBlocks.
 */
export const TASKS = taskTable([...colourTasks, ...histogramTasks, ...lutTasks, ...thresholdTasks, ...claheTasks, ...morphTasks, ...convolveTasks, ...detectTasks, ...trainTasks]);

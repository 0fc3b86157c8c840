import { InvalidArgumentError } from '../core/errors.js';
import type { Dtype, Image } from '../core/image.js';
import type { Operation, Reach } from '../core/op.js';
import type { SlabRun } from '../io/index.js';
import type { OmeZarr } from '../io/zarr.js';
import { runGpuOrCpu, type Execution } from './context.js';

// A volume operation run chunk range by chunk range (io/chunked.ts): what a slab needs of it, shared by
// `imgpu <op> in.zarr out.zarr` and the queue's chunk jobs (scale/volume-jobs.ts), so that both compute alike.

/** The operation's reach along z and its output type on this OME-Zarr; a typed error for an operation that takes no volume. */
export function volumePlan(op: Operation, params: Record<string, unknown>, src: OmeZarr): { reach: Reach | undefined; outDtype: Dtype } {
  if (!op.input.volumes || !op.writes) throw new InvalidArgumentError(`${op.name} does not take volumes: a .zarr input is for filter, gamma and the other volume operations`);
  const header: Image = { data: new Uint8Array(0), shape: src.levels[0].shape, channels: 1, dtype: src.dtype, geometry: src.geometry };
  return { reach: op.reach(params, header), outDtype: op.outputOf(params, header).dtype as Dtype };
}

/** The operation on one slab, on the execution's GPU (its CPU where the GPU's limits refuse the slab, as --device auto does) or its CPU. */
export function slabRunner(op: Operation, params: Record<string, unknown>, exec: Execution): SlabRun {
  const on = { gpu: exec.gpu, pool: exec.pool };
  return async (slab) => (exec.gpu
    ? (await runGpuOrCpu(exec, () => op.run(slab, params, on), () => op.run(slab, params, { pool: exec.pool }))).result
    : await op.run(slab, params, { pool: exec.pool })).output as Image;
}

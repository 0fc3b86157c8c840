// Browser entry: the same operations, with the device from navigator.gpu and the single-threaded CPU pool.
export * from './index.js';
import { GpuContext, type GpuContextOptions } from './core/gpu/context.js';

/** A GPU context from `navigator.gpu` (throws NoGpuAdapterError where WebGPU is missing). */
export function createBrowserGpuContext(opts: GpuContextOptions = {}): Promise<GpuContext> {
  return GpuContext.create((globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu, opts);
}

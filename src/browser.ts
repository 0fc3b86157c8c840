// Browser entry: the same operations, with the device from navigator.gpu and the single-threaded CPU pool.
export * from './index.js';
import { GpuContext, type GpuContextOptions } from './core/gpu/context.js';

/** A GPU context from `navigator.gpu` (throws NoGpuAdapterError where WebGPU is missing). */
export function createBrowserGpuContext(opts: GpuContextOptions = {}): Promise<GpuContext> {
  return GpuContext.create((globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu, opts);
}

// What a page built on imgpu needs beyond the platform-neutral API (the playground imports nothing else; a
// dependency-cruiser rule keeps it so): the operation registry its forms are made from, parameter parsing, checksums
// and comparison words, DICOM series from dropped files, the browser's own decoder for formats imgpu does not
// register, GPU storage for frames copied in from a canvas or video.
export { OPERATIONS } from './ops/registry.js';
export { parseParamValue } from './core/params.js';
export { describeComparison, pixelChecksum } from './core/compare.js';
export { dicomSeries, type NamedBytes } from './io/dicom.js';
export { decodeWithBrowser } from './io/formats/jpeg.js';
export { extensionsOf, formatOfFile } from './io/formats/index.js';
export { acquireStorage } from './core/gpu/transfer.js';

import { CPU_PATH, GpuLimitError } from '../errors.js';
import { fmtBytes, type GpuContext } from './context.js';
import { deviceBytes } from './transfer.js';

/**
 * The device's size limits, and how work larger than one storage binding is split. A buffer may be as large as
 * maxBufferSize (4 GiB on lavapipe), but a shader sees at most maxStorageBufferBindingSize of it at once (128 MiB
 * on lavapipe, the least WebGPU guarantees): a 12000×12000 8-bit image (144 MB) fits a buffer but no binding. So
 * - point passes (histograms, LUTs) bind the image in ranges (`bindingRanges`) and dispatch once per range;
 * - neighbourhood operations run on row slabs with halos (`planRowSlabs`, core/gpu/slabs.ts);
 * - what cannot be split is refused before any work with a GpuLimitError naming the sizes.
 */

/** The most bytes one storage binding may cover on this device. */
export function maxBinding(ctx: GpuContext): number {
  return Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
}

/** Elements [first, first + count) of arrays bound in pieces. */
export interface ElementRange {
  first: number;
  count: number;
}

/**
 * Splits `n` elements into ranges that arrays of up to `bytesPerElement` bytes per element can bind: each range's
 * bytes within the binding limit, each range starting at a multiple of minStorageBufferOffsetAlignment elements
 * (so its byte offset is aligned for arrays of any element size, and for the 16-byte vectors kernels read).
 * One range when everything fits — the common case, bound whole as before.
 */
export function bindingRanges(ctx: GpuContext, n: number, bytesPerElement: number): ElementRange[] {
  const limit = maxBinding(ctx);
  if (deviceBytes(n * bytesPerElement) <= limit) return [{ first: 0, count: n }];
  const align = Math.max(ctx.limits.minStorageBufferOffsetAlignment, 16);
  const per = Math.floor(limit / bytesPerElement / align) * align;
  const ranges: ElementRange[] = [];
  for (let first = 0; first < n; first += per) ranges.push({ first, count: Math.min(per, n - first) });
  return ranges;
}

/**
 * The binding of `range` of a buffer holding `bytesPerElement`-byte elements: the whole buffer when the range
 * is everything, else the range's bytes (padded to 16, which buffers of deviceBytes() always hold).
 */
export function rangeBinding(buffer: GPUBuffer, range: ElementRange, bytesPerElement: number, whole: boolean): GPUBuffer | GPUBufferBinding {
  if (whole) return buffer;
  return { buffer, offset: range.first * bytesPerElement, size: deviceBytes(range.count * bytesPerElement) };
}

/** Throws a GpuLimitError when `bytes` exceed what one binding holds. */
export function checkBinding(ctx: GpuContext, bytes: number, what: string, advice = `use ${CPU_PATH}`): void {
  const limit = maxBinding(ctx);
  if (bytes > limit) throw new GpuLimitError(`${what} needs ${fmtBytes(bytes)} in one binding, more than this adapter binds (${fmtBytes(limit)}); ${advice}`);
}

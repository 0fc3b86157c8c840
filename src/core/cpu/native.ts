/**
 * Native CPU kernels, when the platform provides them (Node with dist/native/imgpu-point.node, installed by
 * src/node/native-kernels.ts in the main thread and in every pool worker); the JavaScript loops are used otherwise
 * (browsers, no C compiler at install, IMGPU_NO_NATIVE_KERNELS=1). Both give identical results (integer kernels).
 */
export interface PointKernels {
  /** Adds the counts of data[start, end) to out (256 bins). */
  histogram8(data: Uint8Array, start: number, end: number, out: Uint32Array): void;
  /** dst[i] = lut[src[i]] for i in [start, end). */
  applyLut8(src: Uint8Array, dst: Uint8Array, lut: Uint8Array, start: number, end: number): void;
}

export const nativeKernels: { point?: PointKernels } = {};

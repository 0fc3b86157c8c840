/**
 * Native CPU kernels, a capability of a CpuPool (`pool.native`) where the platform provides them: the Node pool
 * (src/node/worker-pool.ts) has them when dist/native/imgpu-native.node loads (src/node/native-kernels.ts). The 8-bit histogram and LUT passes and the colour conversions then run whole on
 * native threads (a pool woken by a condition variable) with as many threads as the CpuPool has — measured on the
 * H100 machine, waking 16 JavaScript workers by message twice per equalize was a third of a 4K equalize. The
 * JavaScript loops (on the worker pool, dynamic blocks) are used otherwise (browsers, no C compiler at install,
 * IMGPU_NO_NATIVE_KERNELS=1). Both give identical results (integer kernels).
 */
export interface PointKernels {
  /** Adds the counts of all of data to out (256 bins), on `threads` native threads (blocks taken dynamically). */
  histogram8(data: Uint8Array, out: Uint32Array, threads: number): void;
  /** dst[i] = lut[src[i]] for all i (dst has src's length), on `threads` native threads. */
  applyLut8(src: Uint8Array, dst: Uint8Array, lut: Uint8Array, threads: number): void;
  /**
   * cv2.cvtColor's integer conversions (native/colour.c) of the src.length / channels pixels of `src` (3 or 4
   * interleaved samples; all arrays Uint8Array or all Uint16Array), on `threads` native threads: kind 0 writes the
   * gray plane `plane`, kind 1 the Y of YCrCb; kind 2 writes `dst` (src's length) from plane's Y and src's chroma
   * (alpha copied). core/colour.ts has the JavaScript loops giving the same bytes.
   */
  /**
   * Tiled CLAHE's interpolation of every pixel (native/clahe.c; ops/clahe/cpu-kernels.ts claheInterpolateRows is the
   * JavaScript twin): src, dst and lut all Uint8Array (bins 256) or all Uint16Array (bins 65536); the axis tables of
   * ops/clahe/plan.ts; on `threads` native threads.
   */
  claheInterpolate(src: Uint8Array | Uint16Array, dst: Uint8Array | Uint16Array, width: number, tilesX: number, bins: number, lut: Uint8Array | Uint16Array,
    xw: Float32Array, xt: Uint32Array, yw: Float32Array, yt: Uint32Array, threads: number): void;
  colourConvert(kind: 0 | 1 | 2, src: Uint8Array | Uint16Array, channels: number, plane: Uint8Array | Uint16Array, dst: Uint8Array | Uint16Array | null, threads: number): void;
}

// The CPU half of the GPU JPEG decoder: entropy decoding to quantized DCT coefficients (native/coef-decode.c,
// libjpeg-turbo's libjpeg with its IDCT replaced by a copy of each block), built by scripts/build-native.mjs. The GPU
// half is in node/jpeg-gpu-decode.ts; io only loads the binding (the layer the other native codec lives in).
import type { CoefFallback, CoefLayout } from '../codecs/jpeg/decode/coef-layout.js';
import { loadNativeModule, nativeModuleProblem } from './native-module.js';

export type { CoefFallback, CoefLayout } from '../codecs/jpeg/decode/coef-layout.js';

interface CoefBinding {
  /** The header's layout, or why the GPU kernels do not cover the file. Throws (code EJPEG) on an unreadable header. */
  coefLayout(jpeg: Uint8Array, gray: boolean): CoefLayout | CoefFallback;
  /**
   * Fills `out` (layout.bytes; with `compact`, the compact form: layout.compactBytes at most) on libuv's thread pool and
   * resolves with the bytes written; rejects with code EJPEGFALLBACK (a reason) or EJPEG (damaged).
   */
  coefDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean, compact?: boolean): Promise<number>;
  /**
   * The scan form instead (headers, Huffman tables and the unstuffed entropy-coded bytes, for Huffman decoding on the
   * GPU: codecs/jpeg/decode/huffman-decode.ts; `out` at least scanFormBytes(jpeg.length)); rejects as coefDecodeAsync does.
   */
  scanDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean): Promise<number>;
  /**
   * The whole decode to pixels as cv2.imread runs libjpeg, warnings counted (the first's message kept, a premature
   * end flagged) and the decode carried on; throws (rejects) with code EJPEG on a libjpeg error (io/jpeg.ts failOn).
   */
  decodeLenient(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, async: false): LenientDecode;
  decodeLenient(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, async: true): Promise<LenientDecode>;
}

/** What a lenient decode met: libjpeg's warnings, whether the file ended early, the first warning's message. */
export interface LenientDecode {
  warnings: number;
  truncated: number;
  first: string;
}

const FILE = 'imgpu-jpegcoef.node';
let binding: CoefBinding | null | undefined;

/** The entropy stage of the GPU JPEG decoder, or undefined where it was not built (IMGPU_NO_GPU_JPEG=1 also turns it off). */
export function jpegCoefDecoder(): CoefBinding | undefined {
  binding ??= loadNativeModule<CoefBinding>(FILE, 'IMGPU_NO_GPU_JPEG') ?? null;
  return binding ?? undefined;
}

/** Why jpegCoefDecoder() is undefined, for the fallback's reason. */
export function jpegCoefProblem(): string {
  return `dist/native/${FILE}: ${nativeModuleProblem(FILE) ?? 'not loaded'}`;
}

// The GPU JPEG decoder on Node: its plan and kernels (codecs/jpeg/decode/plan.ts) over the native front end —
// libjpeg's header reading, entropy decoding and scan unstuffing on libuv's threads (io/jpeg-coef.ts,
// native/coef-decode.c) — with the Node layer's defaults (IMGPU_JPEG_DECODE_ENTROPY) and trace spans.
import type { GpuContext } from '../core/gpu/context.js';
import { decodeJpegOnGpu as decodeWith, prepareJpegDecode as prepareWith, type GpuJpegDecoded, type GpuJpegFallback, type GpuJpegTimes, type JpegDecodeFrontEnd } from '../codecs/jpeg/decode/plan.js';
import { checkEntropy, type HostBuffers, type JpegEntropyPath } from '../codecs/jpeg/options.js';
import { jpegCoefDecoder, jpegCoefProblem } from '../io/jpeg-coef.js';
import { traced } from './trace.js';

export { OUT_OF_RANGE, type GpuJpegDecoded, type GpuJpegFallback, type GpuJpegTimes } from '../codecs/jpeg/decode/plan.js';
export type { HostBuffers } from '../codecs/jpeg/options.js';

/**
 * Where the GPU decode path's Huffman decoding runs by default (JpegToGpuOptions.entropy): IMGPU_JPEG_DECODE_ENTROPY
 * ('gpu' or 'cpu', so that a batch can be measured with either), else 'gpu' — on the H100 a 24 MP photo decoded
 * to a GpuImage in 3.1 ms against 44 ms with libjpeg's Huffman decoding on a CPU thread (docs/jpeg.md).
 */
export function defaultDecodeEntropy(): JpegEntropyPath {
  return checkEntropy(process.env.IMGPU_JPEG_DECODE_ENTROPY || 'gpu', 'IMGPU_JPEG_DECODE_ENTROPY');
}

/** Compiles the GPU decoder's kernels on `ctx` (a batch starts this before its first photo: jpeg-gpu.ts prepareJpegGpu). */
export function prepareJpegDecode(ctx: GpuContext, entropy: JpegEntropyPath = defaultDecodeEntropy()): Promise<void> {
  return prepareWith(ctx, entropy);
}

/** The native front end (the binding, and the trace spans), or undefined where the binding was not built. */
function frontEnd(): JpegDecodeFrontEnd | undefined {
  const coef = jpegCoefDecoder();
  return coef && { coefLayout: (j, g) => coef.coefLayout(j, g), coefDecodeAsync: (j, o, g, c) => coef.coefDecodeAsync(j, o, g, c), scanDecodeAsync: (j, o, g) => coef.scanDecodeAsync(j, o, g), traced };
}

/**
 * Decodes a JPEG on the GPU into a resident 8-bit image (codecs/jpeg/decode/plan.ts decodeJpegOnGpu), or says why
 * not (the entropy stage not built; CMYK, 12-bit…) for the caller to decode it on the CPU. `host`: see HostBuffers.
 */
export async function decodeJpegOnGpu(
  ctx: GpuContext, buf: Uint8Array, path: string, gray: boolean, times?: GpuJpegTimes, orientation = 1, host?: HostBuffers,
  entropy: JpegEntropyPath = defaultDecodeEntropy(),
): Promise<GpuJpegDecoded | GpuJpegFallback> {
  const fe = frontEnd();
  if (!fe) return { fallback: `the GPU decoder's entropy stage is not available (${jpegCoefProblem()})` };
  return decodeWith(ctx, fe, buf, path, gray, entropy, times, orientation, host);
}

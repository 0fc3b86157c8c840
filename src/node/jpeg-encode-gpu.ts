// The GPU JPEG encoder on Node: its plan and kernels (codecs/jpeg/encode/plan.ts) over the native front end —
// libjpeg's quantization tables, headers and entropy coding (native/coef-encode.c, imgpu-jpegenc.node) — with the
// Node layer's default for where the entropy coding runs (IMGPU_JPEG_ENTROPY).
import type { GpuContext } from '../core/gpu/context.js';
import type { GpuImage } from '../core/gpu/gpu-image.js';
import { encodeJpegGpu as encodeWith, prepareJpegEncode as prepareWith, type JpegEncodeFrontEnd, type JpegGpuEncodeOptions } from '../codecs/jpeg/encode/plan.js';
import { checkEntropy, type JpegEntropyPath } from '../codecs/jpeg/options.js';
import { loadNativeModule, nativeModuleProblem } from '../io/native-module.js';

export {
  blockLayout, gpuJpegEncodable, jpegBands, type JpegEncodePhases, type JpegEntropyPath, type JpegGpuEncodeOptions, type JpegSubsampling,
} from '../codecs/jpeg/encode/plan.js';

const CODER_FILE = 'imgpu-jpegenc.node';
let coder: JpegEncodeFrontEnd | null | undefined;

/** The native entropy coder (built from native/coef-encode.c), or undefined where it was not built. */
export function nativeCoefEncoder(): JpegEncodeFrontEnd | undefined {
  coder ??= loadNativeModule<JpegEncodeFrontEnd>(CODER_FILE, 'IMGPU_NO_NATIVE_JPEG') ?? null;
  return coder ?? undefined;
}

/** Why nativeCoefEncoder() gives undefined: the module's file and the loader's reason. */
export function nativeCoefEncoderProblem(): string {
  return `dist/native/${CODER_FILE}: ${nativeModuleProblem(CODER_FILE) ?? 'not loaded'}`;
}

/**
 * The default entropy path: IMGPU_JPEG_ENTROPY ('gpu' or 'cpu': so that a batch's `--jpeg gpu` can be measured with
 * either), else 'gpu', as measured on the H100 against the hybrid: one photo 24 MP colour 9.8 ms against 83.6 ms,
 * 1 MP 1.3 against 4.7 ms (h100-jpeg-encode-entropy.json); a 210-photo `--jpeg gpu` batch 1.1–1.7× the images/s
 * (h100-batch-entropy.json). Images past the GPU coder's bindings are coded on the CPU either way (the same bytes).
 */
export function defaultEntropy(): JpegEntropyPath {
  return checkEntropy(process.env.IMGPU_JPEG_ENTROPY || 'gpu', 'IMGPU_JPEG_ENTROPY');
}

/** Compiles the GPU encoder's kernels on `ctx`, its entropy coder's where `entropy` is 'gpu' (jpeg-gpu.ts prepareJpegGpu). */
export function prepareJpegEncode(ctx: GpuContext, entropy: JpegEntropyPath = defaultEntropy()): Promise<void> {
  return prepareWith(ctx, entropy);
}

/**
 * Encodes a resident 8-bit gray or RGB image to JPEG with the arithmetic on the GPU (codecs/jpeg/encode/plan.ts):
 * the bytes cv2.imwrite writes for the same pixels at the same quality (and, for colour, subsampling).
 */
export function encodeJpegGpu(img: GpuImage, opts: JpegGpuEncodeOptions = {}): Promise<Uint8Array> {
  return encodeWith(img, nativeCoefEncoder() ?? { missing: nativeCoefEncoderProblem() }, defaultEntropy, opts);
}

// The CPU half of the GPU JPEG decoder: entropy decoding to quantized DCT coefficients (native/coef-decode.c,
// libjpeg-turbo's libjpeg with its IDCT replaced by a copy of each block), built by scripts/build-native.mjs. The GPU
// half is in node/jpeg-gpu-decode.ts; io only loads the binding (the layer the other native codec lives in).
import { loadNativeModule, nativeModuleProblem } from './native-module.js';

/** Where one component's coefficients lie in the decoded buffer, and its sample grid (libjpeg's names in comments). */
export interface CoefComponent {
  /** Sampling factors (h_samp_factor, v_samp_factor). */
  h: number;
  v: number;
  /** Blocks per row and block rows the IDCT covers (width_in_blocks, height_in_blocks). */
  blocksW: number;
  blocksH: number;
  /** Blocks per stored row: blocksW rounded up to even, so each block row starts 256-byte aligned. */
  stride: number;
  /** Byte offset of the component's first block (a multiple of 256). */
  offset: number;
  /** Real samples per row and rows (downsampled_width, downsampled_height): the edges upsampling replicates. */
  samplesW: number;
  samplesH: number;
  /** The compact form: byte offset of the component's block headers (3 u32 a block, the same grid; 256-aligned). */
  header: number;
}

/** The coefficient buffer of a JPEG: quantization tables at byte 0 (64 u32 per component, 256 bytes each), then the components. */
export interface CoefLayout {
  width: number;
  height: number;
  maxH: number;
  maxV: number;
  bytes: number;
  /** The compact form (nonzero coefficients only: native/coef-decode.c): byte offset of its values (256-aligned). */
  values: number;
  /** The compact form's worst case (every coefficient nonzero): what its buffer must hold. */
  compactBytes: number;
  /** 1 (gray file, or gray output: only Y) or 3 (Y, Cb, Cr). */
  components: CoefComponent[];
}

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
   * GPU: node/jpeg-entropy.ts; `out` at least scanFormBytes(jpeg.length)); rejects as coefDecodeAsync does.
   */
  scanDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean): Promise<number>;
  /**
   * The whole decode to pixels as cv2.imread runs libjpeg, warnings counted (the first's message kept, a premature
   * end flagged) and the decode carried on; throws (rejects) with code EJPEG on a libjpeg error (io/jpeg.ts failOn).
   */
  decodeLenient(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, async: false): LenientDecode;
  decodeLenient(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, async: true): Promise<LenientDecode>;
}

/** Why the GPU kernels do not cover a file, with its header's size and libjpeg's colour space (J_COLOR_SPACE: 1 gray, 2 RGB, 3 YCbCr). */
export interface CoefFallback {
  fallback: string;
  width: number;
  height: number;
  colorSpace: number;
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

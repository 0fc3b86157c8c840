// JPEG straight to and from GPU memory through the native codec (io/jpeg.ts): the decoder writes into mapped upload
// memory, the encoder reads mapped readback memory. Here in node, not io: it joins the codec to the GPU context.
import type { GpuContext } from '../core/gpu/context.js';
import { GpuImage } from '../core/gpu/gpu-image.js';
import { jpegCoefDecoder } from '../io/jpeg-coef.js';
import { UnsupportedFormatError } from '../core/errors.js';
import { decodePlanned, isJpeg, jpegEncoder, nativePlan, type CodecThreadOptions, type FailOn, type NativePlan } from '../io/jpeg.js';
import type { JpegEntropyPath, JpegPath, JpegPathOption } from '../codecs/jpeg/options.js';
import { encodeJpegGpu, prepareJpegEncode } from './jpeg-encode-gpu.js';
import { decodeJpegOnGpu, prepareJpegDecode, type GpuJpegTimes, type HostBuffers } from './jpeg-gpu-decode.js';

export type { CodecThreadOptions } from '../io/jpeg.js';
export type { GpuJpegTimes, HostBuffers } from './jpeg-gpu-decode.js';

export { JPEG_PATHS, type JpegPath, type JpegPathOption } from '../codecs/jpeg/options.js';

export interface JpegToGpuOptions extends CodecThreadOptions {
  /** @default 'auto' */
  jpeg?: JpegPathOption;
  /** Adds the GPU path's phase times here (bench/jpeg-decode.ts). */
  times?: GpuJpegTimes;
  /** The GPU path's coefficients go through this host memory (a batch: jpeg-gpu-decode.ts HostBuffers). */
  host?: HostBuffers;
  /** The most pixels the file may declare, checked from its header (io ReadOptions.maxPixels). */
  maxPixels?: number;
  /**
   * On the GPU path, where the Huffman decoding runs: 'gpu' (codecs/jpeg/decode/huffman-decode.ts; files it does not cover — progressive,
   * restart markers — take the CPU's) or 'cpu' (libjpeg on a libuv thread). The pixels are the same.
   * @default defaultDecodeEntropy(): IMGPU_JPEG_DECODE_ENTROPY, else 'gpu'
   */
  entropy?: JpegEntropyPath;
  /**
   * A damaged file (io ReadOptions.failOn): below 'warning', one libjpeg warns of is decoded by libjpeg as cv2.imread
   * decodes it (the GPU path declines it: its stages refuse damage), its warnings in `warnings`. @default 'warning'
   */
  failOn?: FailOn;
}

/** A decoded JPEG resident on the GPU, and the path that decoded it. */
export interface JpegOnGpu {
  image: GpuImage;
  /** The path that ran: 'cpu' where it was asked for, or where the GPU decoder does not cover the file (`fallback` says why). */
  jpeg: JpegPath;
  fallback?: string;
  /** On the GPU path: where the Huffman decoding ran ('cpu' for files the GPU's does not cover: JpegToGpuOptions.entropy). */
  huffman?: JpegEntropyPath;
  /** What libjpeg warned of, where `failOn` let a damaged file be decoded. */
  warnings?: readonly string[];
}

/**
 * The path 'auto' takes on `ctx`: the GPU's on a hardware adapter where the GPU decoder's entropy stage is built —
 * on the H100 a batch ran 2.0–2.1× faster with it than with the CPU's (bench/results/h100-batch-compact.json) and a
 * single photo decoded as fast or faster (docs/jpeg.md, Measured) — else the CPU's (a software adapter's kernels are
 * slower than libjpeg-turbo; no context: the CPU's). The pixels and bytes are the same on either path.
 */
export function resolveJpegPath(opt: JpegPathOption = 'auto', ctx?: GpuContext): JpegPath {
  if (opt !== 'auto') return opt;
  return ctx && !ctx.adapter.software && jpegCoefDecoder() ? 'gpu' : 'cpu';
}

/**
 * Starts compiling the GPU JPEG decoder's and (or) encoder's kernels on `ctx`, all at once, and resolves when they are
 * compiled (a failure is left to the first decode or encode to report). A batch calls it before its first photo: on
 * a machine whose driver cache is empty they took 0.69–0.71 s one after another, as the first photos reached each,
 * and 0.34–0.46 s at once (H100; 94 ms from the cache; docs/jpeg.md).
 */
export async function prepareJpegGpu(ctx: GpuContext, what: { decode?: boolean; encode?: boolean } = { decode: true, encode: true }): Promise<void> {
  await Promise.all([what.decode ? prepareJpegDecode(ctx) : undefined, what.encode ? prepareJpegEncode(ctx) : undefined]).catch(() => undefined);
}

/**
 * Decodes a JPEG into a resident GpuImage (pixels identical to cv2.imread on either path, EXIF orientation applied on
 * the GPU path), saying which path ran. Undefined where neither native path applies (no codec, CMYK on the CPU path,
 * an EXIF orientation on the CPU path): read it with readImage and upload that instead.
 */
export async function readJpegToGpu(ctx: GpuContext, buf: Uint8Array, path: string, gray: boolean, opts: JpegToGpuOptions = {}): Promise<JpegOnGpu | undefined> {
  const plan = isJpeg(buf) ? nativePlan(buf, path, gray, opts.maxPixels, opts.failOn) : undefined;
  if (!plan) return undefined;
  let fallback: string | undefined;
  if (resolveJpegPath(opts.jpeg, ctx) === 'gpu') {
    const r = await onGpuOrDamaged(ctx, buf, path, gray, plan.orientation, opts);
    if ('image' in r) return { image: r.image, jpeg: 'gpu', huffman: r.huffman };
    fallback = r.fallback;
  }
  if (plan.orientation !== 1) return undefined; // the CPU path here does not orient: readImage does
  const { image, warnings } = await decodeOnCpu(ctx, plan, buf, path, opts);
  return { image, jpeg: 'cpu', ...(fallback === undefined ? {} : { fallback }), ...(warnings.length ? { warnings } : {}) };
}

/** Why the GPU path hands a damaged file to libjpeg where `failOn` lets it be decoded. */
export const DAMAGED = 'damaged data (libjpeg warns): decoded by libjpeg, as cv2.imread';

/** The GPU decode; below failOn 'warning', damage it refuses is a fallback to libjpeg's lenient decode instead. */
async function onGpuOrDamaged(ctx: GpuContext, buf: Uint8Array, path: string, gray: boolean, orientation: number, opts: JpegToGpuOptions) {
  try {
    return await decodeJpegOnGpu(ctx, buf, path, gray, opts.times, orientation, opts.host, opts.entropy);
  } catch (e) {
    if ((opts.failOn ?? 'warning') === 'warning' || !(e instanceof UnsupportedFormatError)) throw e;
    return { fallback: DAMAGED };
  }
}

/**
 * Decodes a JPEG straight into mapped GPU upload memory and returns it resident (GpuImage.staging): the decoder's
 * output is the only write of the pixels on the host, no copy follows — or, with `jpeg: 'gpu'`, on the GPU
 * (readJpegToGpu says which path ran). Undefined where the native path does not apply (no codec, CMYK, an EXIF
 * rotation): read it with readImage and upload that instead.
 */
export async function decodeJpegToGpu(ctx: GpuContext, buf: Uint8Array, path: string, gray: boolean, opts: JpegToGpuOptions = {}): Promise<GpuImage | undefined> {
  return (await readJpegToGpu(ctx, buf, path, gray, opts))?.image;
}

/** The CPU path: libjpeg-turbo decodes into mapped upload memory (damage as `failOn` says: its warnings returned). */
async function decodeOnCpu(ctx: GpuContext, plan: NativePlan, buf: Uint8Array, path: string, opts: CodecThreadOptions & { failOn?: FailOn }): Promise<{ image: GpuImage; warnings: string[] }> {
  const staged = await GpuImage.staging(ctx, [plan.height, plan.width], 'uint8', plan.channels);
  let warnings: string[];
  try {
    warnings = await decodePlanned(plan, buf, path, staged.image.data as Uint8Array, opts);
  } catch (e) {
    staged.discard();
    throw e;
  }
  return { image: staged.upload(), warnings };
}

/** Options of encodeJpegFromGpu: where the codec thread runs, and which encoder. */
export interface JpegFromGpuOptions extends CodecThreadOptions {
  /**
   * 'gpu': colour conversion, DCT, quantization and (JpegGpuEncodeOptions.entropy) entropy coding on the GPU (encodeJpegGpu);
   * 'cpu': libjpeg-turbo on a CPU thread from mapped readback memory; 'auto': 'cpu' until the GPU path is measured
   * faster (docs/jpeg-encode.md). The bytes are the same either way. @default 'auto'
   */
  jpeg?: JpegPathOption;
  /** With `jpeg: 'gpu'`: where its entropy coding runs (JpegGpuEncodeOptions.entropy). */
  entropy?: JpegEntropyPath;
}

/**
 * Encodes a resident 8-bit gray or RGB image to JPEG (cv2.imwrite's bytes, 4:2:0 for colour). On the CPU path
 * (the default) straight from mapped readback memory (GpuImage.toHostView): the encoder reads the pixels where the
 * GPU's copy put them, no host copy. Undefined where the CPU path does not apply (no codec, another dtype or channel
 * count): download it and use writeImage. With `jpeg: 'gpu'` an image it cannot encode is an error instead.
 */
export async function encodeJpegFromGpu(img: GpuImage, quality: number, opts: JpegFromGpuOptions = {}): Promise<Uint8Array | undefined> {
  if (opts.jpeg === 'gpu') return encodeJpegGpu(img, { quality, async: opts.async, entropy: opts.entropy });
  const enc = jpegEncoder(img.dtype, img.channels);
  if (!enc || img.shape.length !== 2) return undefined;
  const [h, w] = img.shape;
  const v = await img.toHostView();
  try {
    // The view stays mapped until the encoder is done with it (released below, after the await).
    return await enc.encode(v.image.data as Uint8Array, w, h, quality, opts);
  } finally {
    v.release();
  }
}

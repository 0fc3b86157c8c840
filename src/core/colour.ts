import { cpuTuning, defineTask, forBlocks, shareable, type CpuPool, type Range, type TaskHandle } from './cpu/pool.js';
import type { Image } from './image.js';
import { createImage, GRAY_WEIGHTS, pixelCount } from './image.js';

/**
 * OpenCV's integer RGB ↔ YCrCb conversion (imgproc color_yuv: RGB2YCrCb_i / YCrCb2RGB_i, 14-bit fixed point),
 * bit-identical to `cv2.cvtColor(img, COLOR_RGB2YCrCb)` and back for 8- and 16-bit images, and its RGB → gray. Operations
 * defined on lightness (CLAHE) work on Y and keep the chroma. This Y uses OpenCV's 14-bit weights, not the 15-bit ones
 * of its RGB→gray (core/image.ts GRAY_WEIGHTS): the two differ by one level on some pixels, as they do in OpenCV.
 *
 * The conversion back takes the processed Y and the original image: Cr and Cb are recomputed from the original's
 * pixels rather than kept in planes of their own (they are a function of them), as the GPU kernels do
 * (core/gpu/wgsl/colour.ts) and the native loops (native/colour.c). The loops here run over ranges of pixels, as worker
 * tasks (core/colour-cpu.ts runs them on the pool, or the native ones), with no allocation per pixel.
 */

/** The one definition of OpenCV's YCrCb fixed-point weights: the CPU loops here, the native ones and the WGSL use these. */
export const YCRCB = {
  shift: 14, r2y: 4899, g2y: 9617, b2y: 1868, y2cr: 11682, y2cb: 9241, cr2r: 22987, cr2g: -11698, cb2g: -5636, cb2b: 29049,
} as const;
const { shift: SHIFT, r2y: R2Y, g2y: G2Y, b2y: B2Y, y2cr: Y2CR, y2cb: Y2CB, cr2r: CR2R, cr2g: CR2G, cb2g: CB2G, cb2b: CB2B } = YCRCB;
const ROUND = 1 << (SHIFT - 1);

type Samples = Uint8Array | Uint16Array;

/** What a conversion task reads and writes: pixels [start, end) of `src` (`channels` interleaved samples each). */
export interface ColourArgs extends Range {
  src: Samples;
  channels: number;
  /** The 1-channel plane: written by gray and luma, read (the new Y) by back. */
  plane: Samples;
  /** back only: the colour output, src's length. */
  dst?: Samples;
}

/** plane[i] = cv2's RGB→gray of pixel i, for i in [start, end). */
export function grayRange({ src, channels: c, plane, start, end }: ColourArgs): void {
  const { r: wr, g: wg, b: wb, shift } = GRAY_WEIGHTS;
  const round = 1 << (shift - 1);
  for (let i = start, j = start * c; i < end; i++, j += c) plane[i] = (src[j] * wr + src[j + 1] * wg + src[j + 2] * wb + round) >>> shift;
}

/** plane[i] = the Y of cv2's RGB→YCrCb of pixel i, for i in [start, end). */
export function lumaRange({ src, channels: c, plane, start, end }: ColourArgs): void {
  for (let i = start, j = start * c; i < end; i++, j += c) plane[i] = (src[j] * R2Y + src[j + 1] * G2Y + src[j + 2] * B2Y + ROUND) >> SHIFT;
}

/** dst's pixels [start, end): cv2's YCrCb→RGB of (plane's Y, src's Cr and Cb), src's alpha copied. */
export function fromLumaRange({ src, channels: c, plane, dst, start, end }: ColourArgs): void {
  const out = dst!;
  const max = src instanceof Uint8Array ? 255 : 65535;
  const half = (max + 1) >> 1, delta = half << SHIFT;
  for (let i = start, j = start * c; i < end; i++, j += c) {
    const r = src[j], b = src[j + 2];
    const y = (r * R2Y + src[j + 1] * G2Y + b * B2Y + ROUND) >> SHIFT;
    let cr = ((r - y) * Y2CR + delta + ROUND) >> SHIFT;
    let cb = ((b - y) * Y2CB + delta + ROUND) >> SHIFT;
    cr = (cr < 0 ? 0 : cr > max ? max : cr) - half;
    cb = (cb < 0 ? 0 : cb > max ? max : cb) - half;
    const y2 = plane[i];
    const r2 = y2 + ((cr * CR2R + ROUND) >> SHIFT);
    const g2 = y2 + ((cb * CB2G + cr * CR2G + ROUND) >> SHIFT);
    const b2 = y2 + ((cb * CB2B + ROUND) >> SHIFT);
    // Typed-array stores wrap, not clamp: clamp here.
    out[j] = r2 < 0 ? 0 : r2 > max ? max : r2;
    out[j + 1] = g2 < 0 ? 0 : g2 > max ? max : g2;
    out[j + 2] = b2 < 0 ? 0 : b2 > max ? max : b2;
    if (c === 4) out[j + 3] = src[j + 3];
  }
}

export const grayTask = defineTask('colour.gray', grayRange);
export const lumaTask = defineTask('colour.luma', lumaRange);
export const fromLumaTask = defineTask('colour.fromLuma', fromLumaRange);

/** The colour conversions' CPU tasks (ops/tasks.ts). */
export const colourTasks = [grayTask, lumaTask, fromLumaTask];

/** The Y plane of cv2.cvtColor(COLOR_RGB2YCrCb) of an 8/16-bit RGB(A) image, on the calling thread. */
export function lumaOf(img: Image): Image {
  const y = createImage(img.shape, img.dtype, 1);
  lumaRange({ src: img.data as Samples, channels: img.channels, plane: y.data as Samples, start: 0, end: pixelCount(img.shape) });
  return y;
}

/** `colour` with its Y replaced by `y` (cv2's YCrCb→RGB of y and colour's chroma; alpha kept), on the calling thread. */
export function withLuma(colour: Image, y: Image): Image {
  const out = createImage(colour.shape, colour.dtype, colour.channels);
  fromLumaRange({ src: colour.data as Samples, channels: colour.channels, plane: y.data as Samples, dst: out.data as Samples, start: 0, end: pixelCount(colour.shape) });
  return out;
}

/** The native loops' codes for each conversion (native/colour.c). */
const NATIVE_KIND = { gray: 0, luma: 1, fromLuma: 2 } as const;
const TASKS: Record<keyof typeof NATIVE_KIND, TaskHandle<ColourArgs, void>> = { gray: grayTask, luma: lumaTask, fromLuma: fromLumaTask };

/**
 * Runs a conversion over every pixel: the native loops on native threads where the pool has them (no copies), else
 * the tasks on the pool's workers in blocks (outputs are allocated shared; an input that is not shared is copied once),
 * else on the calling thread.
 */
async function convert(kind: keyof typeof NATIVE_KIND, src: Samples, channels: number, plane: Samples, dst: Samples | undefined, pool: CpuPool): Promise<void> {
  if (pool.native) {
    pool.native.colourConvert(NATIVE_KIND[kind], src, channels, plane, dst ?? null, pool.size);
    return;
  }
  const n = src.length / channels;
  const shared = shareable(pool, src);
  const read = kind === 'fromLuma' ? shareable(pool, plane) : plane;
  await forBlocks(pool, n, cpuTuning.pixelBlock, TASKS[kind], { src: shared, channels, plane: read, dst });
}

/** cv2.cvtColor(COLOR_RGB2GRAY) of an 8/16-bit RGB(A) image on the pool (core/image.ts toGray is the one-thread form). */
export async function grayCpu(img: Image, pool: CpuPool): Promise<Image> {
  const out = createImage(img.shape, img.dtype, 1);
  await convert('gray', img.data as Samples, img.channels, out.data as Samples, undefined, pool);
  return out;
}

/** lumaOf on the pool. */
export async function lumaCpu(img: Image, pool: CpuPool): Promise<Image> {
  const out = createImage(img.shape, img.dtype, 1);
  await convert('luma', img.data as Samples, img.channels, out.data as Samples, undefined, pool);
  return out;
}

/** withLuma on the pool. */
export async function withLumaCpu(colour: Image, y: Image, pool: CpuPool): Promise<Image> {
  const out = createImage(colour.shape, colour.dtype, colour.channels);
  await convert('fromLuma', colour.data as Samples, colour.channels, y.data as Samples, out.data as Samples, pool);
  return out;
}

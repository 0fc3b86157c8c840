import type { Image } from './image.js';
import { allocPixels, createImage, pixelCount } from './image.js';

/**
 * OpenCV's integer RGB ↔ YCrCb conversion (imgproc color_yuv: RGB2YCrCb_i / YCrCb2RGB_i, 14-bit fixed point),
 * bit-identical to `cv2.cvtColor(img, COLOR_RGB2YCrCb)` and back for 8- and 16-bit images. Operations defined on
 * lightness (CLAHE) work on Y and keep the chroma. This Y uses OpenCV's 14-bit weights, not the 15-bit ones of its
 * RGB→gray (core/image.ts GRAY_WEIGHTS): the two differ by one level on some pixels, as they do in OpenCV.
 */
/** The one definition of OpenCV's YCrCb fixed-point weights: the CPU loops here, the native ones and the WGSL use these. */
export const YCRCB = {
  shift: 14, r2y: 4899, g2y: 9617, b2y: 1868, y2cr: 11682, y2cb: 9241, cr2r: 22987, cr2g: -11698, cb2g: -5636, cb2b: 29049,
} as const;
const { shift: SHIFT, r2y: R2Y, g2y: G2Y, b2y: B2Y, y2cr: Y2CR, y2cb: Y2CB, cr2r: CR2R, cr2g: CR2G, cb2g: CB2G, cb2b: CB2B } = YCRCB;
const descale = (x: number): number => (x + (1 << (SHIFT - 1))) >> SHIFT;

/** Y plane and packed (Cr, Cb) planes of an RGB(A) 8/16-bit image; alpha is left in the source. */
export interface YCrCb {
  y: Image;
  cr: Uint8Array | Uint16Array;
  cb: Uint8Array | Uint16Array;
}

export function rgbToYCrCb(img: Image): YCrCb {
  const n = pixelCount(img.shape), c = img.channels, src = img.data;
  const max = img.dtype === 'uint8' ? 255 : 65535;
  const delta = ((max + 1) >> 1) << SHIFT;
  const y = createImage(img.shape, img.dtype, 1);
  const cr = allocPixels(img.dtype, n) as Uint8Array | Uint16Array;
  const cb = allocPixels(img.dtype, n) as Uint8Array | Uint16Array;
  const clamp = (v: number): number => (v < 0 ? 0 : v > max ? max : v);
  for (let i = 0, j = 0; i < n; i++, j += c) {
    const Y = descale(src[j] * R2Y + src[j + 1] * G2Y + src[j + 2] * B2Y);
    y.data[i] = Y;
    cr[i] = clamp(descale((src[j] - Y) * Y2CR + delta));
    cb[i] = clamp(descale((src[j + 2] - Y) * Y2CB + delta));
  }
  return { y, cr, cb };
}

/** Recombines a (processed) Y plane with the chroma of `like` into a new image with like's channels (alpha copied). */
export function yCrCbToRgb(y: Image, chroma: YCrCb, like: Image): Image {
  const n = pixelCount(like.shape), c = like.channels;
  const max = like.dtype === 'uint8' ? 255 : 65535;
  const half = (max + 1) >> 1;
  const out = allocPixels(like.dtype, n * c);
  const Y = y.data, { cr, cb } = chroma;
  const clamp = (v: number): number => (v < 0 ? 0 : v > max ? max : v);
  for (let i = 0, j = 0; i < n; i++, j += c) {
    const yy = Y[i], dr = cr[i] - half, db = cb[i] - half;
    out[j] = clamp(yy + descale(dr * CR2R));
    out[j + 1] = clamp(yy + descale(db * CB2G + dr * CR2G));
    out[j + 2] = clamp(yy + descale(db * CB2B));
    if (c === 4) out[j + 3] = like.data[j + 3];
  }
  return { data: out, shape: [...like.shape] as Image['shape'], channels: like.channels, dtype: like.dtype };
}

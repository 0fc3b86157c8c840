import { decode, encode, convertIndexedToRgb, type DecodedPng } from 'fast-png';
import { UnsupportedFormatError } from '../../core/errors.js';
import { allocPixels, planeSize, type Image } from '../../core/image.js';
import { checkInputPixels, DEFAULT_MAX_INPUT_PIXELS } from '../limits.js';
import type { DecodeOptions, EncodeOptions, ImageFormat } from './format.js';
import { imageOfSamples, startsWith } from './samples.js';

/** PNG's 8-byte signature. */
const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Samples of 1, 2 or 4 bits (packed, rows padded to whole bytes) spread to 8 bits, 0…2^d−1 → 0…255 as libpng does. */
function unpackLowDepth(png: DecodedPng): Uint8Array {
  const d = png.depth, c = png.channels, w = png.width, max = (1 << d) - 1;
  const rowBytes = Math.ceil((w * c * d) / 8), src = png.data as Uint8Array, out = new Uint8Array(w * png.height * c);
  for (let y = 0; y < png.height; y++) {
    for (let i = 0; i < w * c; i++) {
      const bit = i * d, byte = src[y * rowBytes + (bit >> 3)];
      out[y * w * c + i] = Math.round((((byte >> (8 - d - (bit & 7))) & max) * 255) / max);
    }
  }
  return out;
}

// png_set_rgb_to_gray(png, 1, 0.299, 0.587)'s coefficients as libpng 1.6 stores them: each weight ×100000 (png_fixed),
// then ×32768/100000 truncated; blue takes the rest of 32768.
const RC = 9797, GC = 19234, BC = 32768 - RC - GC;

/**
 * An RGB(A) image to one gray channel as libpng's png_set_rgb_to_gray does on a PNG without gamma (no gAMA, sRGB):
 * 8-bit truncated, 16-bit rounded; alpha ignored. What the portable decoder (the browser's) and Node's sharp fallback
 * apply to a gray read, so that they give cv2.imread(IMREAD_GRAYSCALE)'s pixels for such files (cvtColor's weights
 * differ by a level on many pixels); imgpu's libpng decoder (png-native.ts) lets libpng convert, gamma included.
 */
export function libpngGray(img: Image): Image {
  if (img.channels < 3) return img;
  const n = img.shape[0] * img.shape[1], c = img.channels, src = img.data;
  const dst = allocPixels(img.dtype, n);
  const round = img.dtype === 'uint16' ? 16384 : 0;
  for (let i = 0, j = 0; i < n; i++, j += c) dst[i] = (RC * src[j] + GC * src[j + 1] + BC * src[j + 2] + round) >>> 15;
  return { data: dst, shape: [img.shape[0], img.shape[1]], channels: 1, dtype: img.dtype };
}

/**
 * A PNG with fast-png: 8/16-bit gray, gray+alpha (alpha dropped), RGB, RGBA; palettes expanded; 1–4-bit gray to 8;
 * a gray read (`opts.gray`) converted as libpng converts (libpngGray).
 */
function decodePng(bytes: Uint8Array, name: string, opts: DecodeOptions): Image {
  let png: DecodedPng;
  try {
    png = decode(bytes);
  } catch (e) {
    throw new UnsupportedFormatError(`${name} is not a readable image (${(e as Error).message})`);
  }
  checkInputPixels(png.width, png.height, name, opts.maxPixels ?? DEFAULT_MAX_INPUT_PIXELS);
  const img = png.palette
    ? imageOfSamples(convertIndexedToRgb(png), png.width, png.height, png.palette[0]?.length ?? 3, name)
    : imageOfSamples((png.depth < 8 ? unpackLowDepth(png) : png.data) as Uint8Array | Uint16Array, png.width, png.height, png.channels, name);
  return opts.gray ? libpngGray(img) : img;
}

/** An 8- or 16-bit PNG of the image's own channels (gray stays one channel) with fast-png. */
function encodePng(img: Image, opts: EncodeOptions): Uint8Array {
  const [h, w] = planeSize(img.shape);
  return encode(
    { width: w, height: h, data: img.data as Uint8Array | Uint16Array, depth: img.dtype === 'uint16' ? 16 : 8, channels: img.channels },
    { zlib: { level: (opts.compression ?? 1) as 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 } },
  );
}

export const png: ImageFormat = {
  name: 'png',
  title: 'PNG',
  holds: '8/16-bit gray, RGB, RGBA',
  extensions: ['.png'],
  sniff: (bytes) => startsWith(bytes, SIGNATURE),
  volume: 'never',
  writes: { dtypes: ['uint8', 'uint16'], volumes: false },
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: decodePng,
  encode: encodePng,
};

import { UnsupportedFormatError } from '../../core/errors.js';
import { imageFrom, type Image } from '../../core/image.js';
import { checkInputPixels, DEFAULT_MAX_INPUT_PIXELS } from '../limits.js';
import type { DecodeOptions, ImageFormat } from './format.js';
import { startsWith } from './samples.js';

/**
 * A JPEG (or any image this browser reads: WebP, GIF, BMP) with the browser's own decoder (createImageBitmap; EXIF orientation applied, as cv2.imread does, no colour
 * management): one channel when every pixel is gray, else RGB; 8 bits a sample. Browsers' IDCTs differ from
 * libjpeg-turbo's by a level here and there, so these pixels are close to, not equal to, Node's (io/jpeg.ts).
 */
export async function decodeWithBrowser(bytes: Uint8Array, name: string, opts: DecodeOptions): Promise<Image> {
  if (typeof createImageBitmap !== 'function' || typeof OffscreenCanvas !== 'function') {
    throw new UnsupportedFormatError(`${name}: JPEG is decoded by the browser's own decoder here (no createImageBitmap); in Node, imgpu's readImage reads it`);
  }
  let bmp: ImageBitmap;
  try {
    bmp = await createImageBitmap(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'image/jpeg' }), { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    throw new UnsupportedFormatError(`this browser cannot decode ${name}: use PNG (8/16-bit), JPEG, TIFF, .npy or NIfTI`);
  }
  checkInputPixels(bmp.width, bmp.height, name, opts.maxPixels ?? DEFAULT_MAX_INPUT_PIXELS);
  const canvas = new OffscreenCanvas(bmp.width, bmp.height);
  const g = canvas.getContext('2d')!;
  g.drawImage(bmp, 0, 0);
  return imageOfRgba(g.getImageData(0, 0, bmp.width, bmp.height).data, bmp.width, bmp.height);
}

/** A canvas's RGBA pixels as one gray channel when every pixel is gray, else RGB (a JPEG has no alpha). */
function imageOfRgba(rgba: Uint8ClampedArray, w: number, h: number): Image {
  const n = w * h;
  let gray = true;
  for (let i = 0; i < n && gray; i++) gray = rgba[4 * i] === rgba[4 * i + 1] && rgba[4 * i] === rgba[4 * i + 2];
  const data = new Uint8Array(n * (gray ? 1 : 3));
  for (let i = 0; i < n; i++) {
    if (gray) data[i] = rgba[4 * i];
    else { data[3 * i] = rgba[4 * i]; data[3 * i + 1] = rgba[4 * i + 1]; data[3 * i + 2] = rgba[4 * i + 2]; }
  }
  return imageFrom(data, [h, w], gray ? 1 : 3);
}

/**
 * JPEG: read and written in Node by imgpu's libjpeg-turbo codec (cv2.imread / cv2.imwrite's pixels and bytes;
 * io/jpeg.ts, or sharp where it is not built), on the GPU by node/jpeg-gpu.ts; in a browser read by its decoder.
 */
export const jpeg: ImageFormat = {
  name: 'jpeg',
  title: 'JPEG',
  holds: '8-bit gray, RGB (baseline and progressive)',
  extensions: ['.jpg'],
  aliases: ['.jpeg'],
  sniff: (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]),
  volume: 'never',
  writes: { dtypes: ['uint8'], volumes: false },
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: decodeWithBrowser,
};

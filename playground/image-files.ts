// Image files in the page: what an upload decodes to, and what a result downloads as. The browser's own decoder
// gives 8 bits a sample, so 16-bit PNG (fast-png) and TIFF (tiff) are decoded here, keeping their samples as the
// CLI's reader does (gray+alpha drops alpha; 8 or 16 bits); .npy through the library's reader.
import { decode as decodePng, encode as encodePng, hasPngSignature } from 'fast-png';
import { decode as decodeTiff } from 'tiff';
import { UnsupportedFormatError } from '../src/core/errors.js';
import { imageFrom, planeSize, type Channels, type Image, type PixelArray } from '../src/core/image.js';
import { decodeNpy, encodeNpy } from '../src/io/npy.js';

/** A decoded upload and the words for how it was read ("16-bit PNG, fast-png"). */
export interface Decoded { image: Image; how: string }

/** The PNG header's bit depth (IHDR's byte 24); fast-png decodes those of 16 bits, the browser the rest. */
function pngDepth(bytes: Uint8Array): number {
  return bytes.length > 25 ? bytes[24] : 0;
}

/** Samples with `c` channels a pixel as an image: gray+alpha keeps gray (as the CLI's reader); 1, 3, 4 stay. */
function fromSamples(data: PixelArray, w: number, h: number, c: number, name: string): Image {
  if (c === 2) {
    const gray = new (data.constructor as new (n: number) => PixelArray)(w * h);
    for (let i = 0; i < w * h; i++) gray[i] = data[2 * i];
    return imageFrom(gray, [h, w], 1);
  }
  if (c !== 1 && c !== 3 && c !== 4) throw new UnsupportedFormatError(`${name}: ${c} samples a pixel are not supported (1, 2, 3 or 4)`);
  return imageFrom(data, [h, w], c as Channels);
}

function decode16BitPng(bytes: Uint8Array, name: string): Decoded {
  const png = decodePng(bytes);
  return { image: fromSamples(png.data as Uint16Array, png.width, png.height, png.channels, name), how: '16-bit PNG, decoded by fast-png' };
}

function decodeTiffFile(bytes: Uint8Array, name: string): Decoded {
  let ifd;
  try {
    ifd = decodeTiff(bytes, { pages: [0] })[0];
  } catch (e) {
    throw new UnsupportedFormatError(`${name} is not a readable TIFF (${(e as Error).message})`);
  }
  const bits = ifd.bitsPerSample;
  if (!(ifd.data instanceof Uint8Array || ifd.data instanceof Uint16Array) || (bits !== 8 && bits !== 16)) {
    throw new UnsupportedFormatError(`${name}: ${bits}-bit ${ifd.sampleFormat === 3 ? 'float ' : ''}samples are not supported (8- or 16-bit integer images; use .npy for float)`);
  }
  return { image: fromSamples(ifd.data, ifd.width, ifd.height, ifd.samplesPerPixel, name), how: `${bits}-bit TIFF, decoded by tiff` };
}

/** Decodes with the browser (createImageBitmap): RGB, or one channel when the image is gray; 8 bits a sample. */
async function decodeWithBrowser(blob: Blob): Promise<Image> {
  let bmp: ImageBitmap;
  try {
    bmp = await createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    throw new UnsupportedFormatError(`this browser cannot decode ${blob.type || 'this file'}: use PNG (8/16-bit), JPEG, TIFF or .npy`);
  }
  const c = new OffscreenCanvas(bmp.width, bmp.height);
  const g = c.getContext('2d')!;
  g.drawImage(bmp, 0, 0);
  const rgba = g.getImageData(0, 0, bmp.width, bmp.height).data;
  const n = bmp.width * bmp.height;
  let gray = true;
  for (let i = 0; i < n && gray; i++) gray = rgba[4 * i] === rgba[4 * i + 1] && rgba[4 * i] === rgba[4 * i + 2];
  const data = new Uint8Array(n * (gray ? 1 : 3));
  for (let i = 0; i < n; i++) {
    if (gray) data[i] = rgba[4 * i];
    else { data[3 * i] = rgba[4 * i]; data[3 * i + 1] = rgba[4 * i + 1]; data[3 * i + 2] = rgba[4 * i + 2]; }
  }
  return imageFrom(data, [bmp.height, bmp.width], gray ? 1 : 3);
}

/** An uploaded (or fetched) file as an image: 16-bit PNG and TIFF here, .npy by the library, the rest by the browser. */
export async function decodeFile(blob: Blob, name: string): Promise<Decoded> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  const lower = name.toLowerCase();
  if (lower.endsWith('.npy')) return { image: decodeNpy(bytes, name), how: '.npy' };
  if (hasPngSignature(bytes) && pngDepth(bytes) === 16) return decode16BitPng(bytes, name);
  const tiff = (bytes[0] === 0x49 && bytes[1] === 0x49 && bytes[2] === 42) || (bytes[0] === 0x4d && bytes[1] === 0x4d && bytes[3] === 42);
  if (tiff) return decodeTiffFile(bytes, name);
  return { image: await decodeWithBrowser(blob), how: 'decoded by the browser, 8 bits a sample' };
}

/**
 * How a result is saved: .npy for float32 (a PNG would have to round or rescale it) and for volumes of several
 * planes; else a PNG of the image's own depth, 8 or 16 bits.
 */
export function resultFormat(img: Image): { ext: '.png' | '.npy'; words: string } {
  if (img.dtype === 'float32' || (img.shape.length === 3 && img.shape[0] !== 1)) return { ext: '.npy', words: `.npy, ${img.dtype}` };
  return { ext: '.png', words: img.dtype === 'uint16' ? '16-bit PNG' : 'PNG' };
}

/** A result as a file (resultFormat): PNG by fast-png (gray stays one channel, 16 bits stay 16), or .npy. */
export function encodeResult(img: Image): { bytes: Uint8Array; ext: '.png' | '.npy'; type: string } {
  const { ext } = resultFormat(img);
  if (ext === '.npy') return { bytes: encodeNpy(img), ext, type: 'application/octet-stream' };
  const [h, w] = planeSize(img.shape);
  const bytes = encodePng({ width: w, height: h, data: img.data as Uint8Array | Uint16Array, depth: img.dtype === 'uint16' ? 16 : 8, channels: img.channels });
  return { bytes, ext, type: 'image/png' };
}

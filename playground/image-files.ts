// Image files in the page: what an upload decodes to, and what a result downloads as — through imgpu/browser's
// format registry (decodeImage / encodeImage: PNG 8/16-bit, TIFF, .npy, JPEG by the browser), keeping samples as
// the CLI's reader does (gray+alpha drops alpha; 8 or 16 bits); a format imgpu does not register by the browser.
import { decodeImage, decodeWithBrowser, encodeImage, extensionsOf, FORMATS, formatOfFile, UnsupportedFormatError, type Image } from '../src/browser.js';

/** A decoded upload and the words for how it was read ("PNG, uint16, decodeImage"). */
export interface Decoded { image: Image; how: string }

/** The file input's `accept`: images the browser shows, and every format the registry decodes in a browser. */
export const ACCEPTED = ['image/*', ...FORMATS.filter((f) => f.platforms.includes('browser') && f.decode).flatMap(extensionsOf)].join(',');

/** An uploaded (or fetched) file as an image: a registered format by decodeImage, any other by the browser. */
export async function decodeFile(blob: Blob, name: string): Promise<Decoded> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let title: string;
  try {
    title = formatOfFile(name, bytes).title;
  } catch (e) {
    if (!(e instanceof UnsupportedFormatError)) throw e;
    return { image: await decodeWithBrowser(bytes, name, {}), how: 'decoded by the browser, 8 bits a sample' };
  }
  const image = await decodeImage(bytes, { name });
  return { image, how: `${title}, ${image.dtype}, decodeImage` };
}

/**
 * How a result is saved: .npy for float32 (a PNG would have to round or rescale it) and for volumes of several
 * planes; else a PNG of the image's own depth, 8 or 16 bits.
 */
export function resultFormat(img: Image): { ext: '.png' | '.npy'; words: string } {
  if (img.dtype === 'float32' || (img.shape.length === 3 && img.shape[0] !== 1)) return { ext: '.npy', words: `.npy, ${img.dtype}` };
  return { ext: '.png', words: img.dtype === 'uint16' ? '16-bit PNG' : 'PNG' };
}

/** A result as a file (resultFormat) by encodeImage: PNG (gray stays one channel, 16 bits stay 16), or .npy. */
export async function encodeResult(img: Image): Promise<{ bytes: Uint8Array; ext: '.png' | '.npy'; type: string }> {
  const { ext } = resultFormat(img);
  return { bytes: await encodeImage(img, ext), ext, type: ext === '.npy' ? 'application/octet-stream' : 'image/png' };
}

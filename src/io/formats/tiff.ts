import { decode } from 'tiff';
import { UnsupportedFormatError } from '../../core/errors.js';
import type { Image } from '../../core/image.js';
import { checkInputPixels, DEFAULT_MAX_INPUT_PIXELS } from '../limits.js';
import type { DecodeOptions, ImageFormat } from './format.js';
import { imageOfSamples, startsWith } from './samples.js';

/** The first page of a TIFF with the `tiff` package: 8/16-bit integer samples (float is refused: use .npy). */
function decodeTiff(bytes: Uint8Array, name: string, opts: DecodeOptions): Image {
  let ifd;
  try {
    ifd = decode(bytes, { pages: [0] })[0];
  } catch (e) {
    throw new UnsupportedFormatError(`${name} is not a readable TIFF (${(e as Error).message})`);
  }
  checkInputPixels(ifd.width, ifd.height, name, opts.maxPixels ?? DEFAULT_MAX_INPUT_PIXELS);
  const bits = ifd.bitsPerSample;
  if (!(ifd.data instanceof Uint8Array || ifd.data instanceof Uint16Array) || (bits !== 8 && bits !== 16)) {
    throw new UnsupportedFormatError(`${name}: ${bits}-bit ${ifd.sampleFormat === 3 ? 'float ' : ''}samples are not supported (8- or 16-bit integer images; use .npy for float)`);
  }
  return imageOfSamples(ifd.data, ifd.width, ifd.height, ifd.samplesPerPixel, name);
}

/** TIFF: little-endian "II*\0" or big-endian "MM\0*". Written on Node (sharp, LZW); the pure-JS package only reads. */
export const tiff: ImageFormat = {
  name: 'tiff',
  title: 'TIFF',
  holds: '8/16-bit gray, RGB, RGBA (first page)',
  extensions: ['.tif'],
  aliases: ['.tiff'],
  sniff: (bytes) => startsWith(bytes, [0x49, 0x49, 42, 0]) || startsWith(bytes, [0x4d, 0x4d, 0, 42]),
  volume: 'never',
  writes: { dtypes: ['uint8', 'uint16'], volumes: false },
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: decodeTiff,
};

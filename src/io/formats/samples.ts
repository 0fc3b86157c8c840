import { UnsupportedFormatError } from '../../core/errors.js';
import { imageFrom, type Channels, type Image, type PixelArray } from '../../core/image.js';

/**
 * Interleaved samples, `c` a pixel, as an image the way Node's reader (sharp) gives them: gray+alpha keeps gray,
 * 1, 3 and 4 channels stay; anything else is a typed error.
 */
export function imageOfSamples(data: PixelArray, w: number, h: number, c: number, name: string): Image {
  if (c === 2) {
    const gray = new (data.constructor as new (n: number) => PixelArray)(w * h);
    for (let i = 0; i < w * h; i++) gray[i] = data[2 * i];
    return imageFrom(gray, [h, w], 1);
  }
  if (c !== 1 && c !== 3 && c !== 4) throw new UnsupportedFormatError(`${name}: ${c} samples a pixel are not supported (1, 2, 3 or 4)`);
  return imageFrom(data, [h, w], c as Channels);
}

/** Whether `bytes` start with `magic` at `at`. */
export function startsWith(bytes: Uint8Array, magic: readonly number[], at = 0): boolean {
  return bytes.length >= at + magic.length && magic.every((b, i) => bytes[at + i] === b);
}

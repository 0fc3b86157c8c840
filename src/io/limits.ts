import { ImageTooLargeError, InvalidArgumentError } from '../core/errors.js';

/**
 * The most pixels imgpu decodes from a compressed raster file (PNG, JPEG, TIFF), checked from the file's header
 * before any decoding: a PNG of a few MB may declare 40000×40000 pixels (1.6 GB of gray, 78 s to inflate) that no
 * operation then fits anyway. The default is sharp's limitInputPixels, 16383 × 16383 (268 megapixels); the
 * environment variable IMGPU_MAX_PIXELS or ReadOptions.maxPixels sets another.
 */
export const DEFAULT_MAX_INPUT_PIXELS = 16383 * 16383;

/** The pixel limit in force: `override`, else IMGPU_MAX_PIXELS, else the default. */
export function maxInputPixels(override?: number): number {
  if (override !== undefined) return override;
  const env = process.env.IMGPU_MAX_PIXELS;
  if (env === undefined || env === '') return DEFAULT_MAX_INPUT_PIXELS;
  const n = Number(env);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`IMGPU_MAX_PIXELS must be a positive integer (pixels), got '${env}'`);
  return n;
}

/** Refuses, before decoding, an image whose header declares more than `max` pixels. */
export function checkInputPixels(width: number, height: number, path: string, max: number): void {
  if (width * height > max) {
    throw new ImageTooLargeError(`${path}: ${width}×${height} = ${width * height} pixels, more than the ${max} imgpu decodes (set IMGPU_MAX_PIXELS to allow more)`);
  }
}

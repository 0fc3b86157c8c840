import { UnsupportedDtypeError } from '../core/errors.js';
import { GpuImage } from '../core/gpu/gpu-image.js';
import { forChunks, shareable, type CpuPool } from '../core/cpu/pool.js';
import { createImage, pixelCount, requireDtype, toGray, validateImage, type Dtype, type Image } from '../core/image.js';

/**
 * The gray input of an operation defined on gray images: a host image is validated and converted
 * (OpenCV's RGB→gray); a GpuImage must already be gray (there is no device-side conversion yet).
 */
export function grayInput(src: Image | GpuImage, op: string, dtypes: readonly Dtype[]): Image | GpuImage {
  let img: Image | GpuImage = src;
  if (src instanceof GpuImage) {
    if (src.channels !== 1) throw new UnsupportedDtypeError(`${op} of a GpuImage needs one gray channel; convert with toGray() before upload`);
  } else {
    validateImage(src);
    img = toGray(src);
  }
  requireDtype(img, dtypes, op);
  return img;
}

/** toGray on the worker pool (large colour images: the conversion off the calling thread, in parallel). */
export async function toGrayOn(img: Image, pool: CpuPool): Promise<Image> {
  if (img.channels === 1) return img;
  const out = createImage(img.shape, img.dtype, 1);
  const src = shareable(pool, img.data as Uint8Array);
  await forChunks(pool, pixelCount(img.shape), 1 << 18, 'toGray', (s, e) => [src, out.data, img.channels, s, e]);
  return { ...out, geometry: img.geometry };
}

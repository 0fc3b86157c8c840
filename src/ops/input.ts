import { UnsupportedDtypeError } from '../core/errors.js';
import { GpuImage } from '../core/gpu/gpu-image.js';
import { requireDtype, toGray, validateImage, type Dtype, type Image } from '../core/image.js';

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


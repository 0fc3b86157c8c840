import { defineOp, type OpOptions } from '../../core/op.js';
import type { ParamSpec } from '../../core/params.js';
import { HISTOGRAM_METHODS } from '../histogram/gpu.js';
import { equalizeCpu } from './cpu.js';
import { equalizeGpu } from './gpu.js';

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const equalizeParams = [
  { name: 'impl', aliases: ['hist'], kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm' },
] as const satisfies readonly ParamSpec[];

export type EqualizeOptions = OpOptions<typeof equalizeParams>;

/**
 * Global histogram equalization, bit-identical to OpenCV's `cv2.equalizeHist` on 8-bit images (OpenCV's
 * formula with 65536 bins on 16-bit images, which OpenCV itself does not support). Colour host images are
 * converted to gray first (OpenCV's RGB→gray). 2D images and 3D volumes (one histogram over all voxels).
 * A GpuImage input stays on its device and a GpuImage is returned.
 */
export const equalize = defineOp({
  name: 'equalize',
  summary: 'global histogram equalization (bit-identical to cv2.equalizeHist on 8-bit)',
  params: equalizeParams,
  input: { dtypes: ['uint8', 'uint16'], colour: 'gray', volumes: true },
  light: true,
  cpu: (img, _p, { pool, out }) => equalizeCpu(img, pool, out),
  gpu: (input, rec, p, _extra, opts) => equalizeGpu(input, rec, p.impl, opts.inPlace),
});

import type { CpuPool } from '../../core/cpu/pool.js';
import { UnsupportedDtypeError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { checkOut, requireDtype, toGray, validateImage, type Image } from '../../core/image.js';
import type { ParamSpec } from '../../core/params.js';
import { makeTimings, now, type OpResult } from '../../core/timings.js';
import { inlinePool } from '../tasks.js';
import { equalizeCpu } from './cpu.js';
import { equalizeGpu } from './gpu.js';

/** equalize has no parameters of its own; declared for the CLI like every op. */
export const equalizeParams: readonly ParamSpec[] = [];

export interface EqualizeOptions extends GpuRunOptions {
  /** Run on this GPU context (host images are uploaded and the result downloaded). Omit for the CPU path. */
  gpu?: GpuContext;
  /** Worker pool for the CPU path. @default single-threaded */
  pool?: CpuPool;
}

/**
 * Global histogram equalization, bit-identical to OpenCV's `cv2.equalizeHist` on 8-bit images (OpenCV's
 * formula with 65536 bins on 16-bit images, which OpenCV itself does not support). Colour host images are
 * converted to gray first (OpenCV's RGB→gray). 2D images and 3D volumes (one histogram over all voxels).
 * A GpuImage input stays on its device and a GpuImage is returned.
 */
export async function equalize(src: Image, opts?: EqualizeOptions): Promise<OpResult<Image>>;
export async function equalize(src: GpuImage, opts?: EqualizeOptions): Promise<OpResult<GpuImage>>;
export async function equalize(src: Image | GpuImage, opts: EqualizeOptions = {}): Promise<OpResult<Image | GpuImage>> {
  if (src instanceof GpuImage) {
    if (src.channels !== 1) throw new UnsupportedDtypeError('equalize on a GpuImage needs one gray channel; convert with toGray() before upload');
    requireDtype(src, ['uint8', 'uint16'], 'equalize');
    return runGpu(src.ctx, src, 'equalize', opts, equalizeGpu) as Promise<OpResult<GpuImage>>;
  }
  const t0 = now();
  validateImage(src);
  requireDtype(src, ['uint8', 'uint16'], 'equalize');
  const gray = toGray(src);
  if (opts.out) checkOut(opts.out, gray);
  if (opts.gpu) {
    const r = (await runGpu(opts.gpu, gray, 'equalize', opts, equalizeGpu)) as OpResult<Image>;
    const total = now() - t0; // validation and gray conversion count as host time
    r.timings.host += total - r.timings.total;
    r.timings.total = total;
    return r;
  }
  const tk = now();
  const output = await equalizeCpu(gray, opts.pool ?? inlinePool, opts.out);
  const k = now() - tk;
  return { output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: 'equalize', ms: k }], kernelSource: 'cpu', total: now() - t0 }) };
}

import type { CpuPool } from '../../core/cpu/pool.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { checkOut, type Image } from '../../core/image.js';
import { resolveParams, type ParamSpec } from '../../core/params.js';
import { HISTOGRAM_METHODS, type HistogramMethod } from '../histogram/gpu.js';
import { closeTimings, makeTimings, now, type OpResult } from '../../core/timings.js';
import { grayInput } from '../input.js';
import { inlinePool } from '../tasks.js';
import { equalizeCpu } from './cpu.js';
import { equalizeGpu } from './gpu.js';

/** Declared once: CLI flags, help and validation come from here. */
export const equalizeParams: readonly ParamSpec[] = [
  { name: 'hist', kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm' },
];

export interface EqualizeOptions extends GpuRunOptions {
  /** Run on this GPU context (host images are uploaded and the result downloaded). Omit for the CPU path. */
  gpu?: GpuContext;
  /** Worker pool for the CPU path. @default single-threaded */
  pool?: CpuPool;
  /** GPU histogram algorithm. @default 'atomic' */
  hist?: HistogramMethod;
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
  const { hist } = resolveParams<{ hist: HistogramMethod }>('equalize', equalizeParams, { hist: opts.hist });
  const body = (input: GpuImage, rec: Recording) => equalizeGpu(input, rec, hist);
  const t0 = now();
  const gray = grayInput(src, 'equalize', ['uint8', 'uint16']);
  if (gray instanceof GpuImage) return runGpu(gray.ctx, gray, 'equalize', opts, body) as Promise<OpResult<GpuImage>>;
  if (opts.out) checkOut(opts.out, gray);
  if (opts.gpu) {
    const r = (await runGpu(opts.gpu, gray, 'equalize', opts, body)) as OpResult<Image>;
    return { ...r, timings: closeTimings(r.timings, t0) }; // validation and gray conversion count as host time
  }
  const tk = now();
  const output = await equalizeCpu(gray, opts.pool ?? inlinePool, opts.out);
  const k = now() - tk;
  return { output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: 'equalize', ms: k }], kernelSource: 'cpu', total: now() - t0 }) };
}

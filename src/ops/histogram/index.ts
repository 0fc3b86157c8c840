import type { CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { runGpu, type DeviceResult, type GpuRunOptions } from '../../core/gpu/run.js';
import { acquireStorage, download } from '../../core/gpu/transfer.js';
import { createImage, pixelCount, validateImage, type Image } from '../../core/image.js';
import { resolveParams, type ParamSpec, type Rect } from '../../core/params.js';
import { closeTimings, makeTimings, now, type OpResult } from '../../core/timings.js';
import { grayInput } from '../input.js';
import { inlinePool } from '../tasks.js';
import { histogramCpu } from './cpu.js';
import { HISTOGRAM_METHODS, HistogramGpuPlan, type HistogramMethod } from './gpu.js';

export { HISTOGRAM_METHODS, type HistogramMethod } from './gpu.js';

/** Declared once: CLI flags, help and validation come from here. */
export const histogramParams: readonly ParamSpec[] = [
  { name: 'hist', kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm: workgroup atomics, or per-invocation sub-histograms without atomics' },
  { name: 'bins', kind: 'int', min: 1, max: 65536, doc: 'bins spanning the dtype range [0, 2^bits) (default: one per value)' },
  { name: 'roi', kind: 'rect', doc: 'count only this rectangle x,y,width,height (2D; combined with a mask by AND)' },
];

export interface HistogramOptions extends GpuRunOptions {
  /** GPU algorithm. @default 'atomic' */
  method?: HistogramMethod;
  /** Number of bins over [0, 2^bits): bin = floor(v · bins / 2^bits), as np.histogram(range=(0, 2^bits)). @default 2^bits */
  bins?: number;
  /** 8-bit mask of the same shape: only pixels where it is non-zero are counted (cv2.calcHist's mask). */
  mask?: Image;
  /** Count only this rectangle (2D images; with a mask, pixels must be in both). */
  roi?: Rect;
  gpu?: GpuContext;
  pool?: CpuPool;
}

/** Histogram counts resident on the device. */
class GpuCounts implements DeviceResult<Uint32Array> {
  constructor(private readonly ctx: GpuContext, readonly buffer: GPUBuffer, readonly bins: number) {}
  toHost(into?: Uint32Array): Promise<Uint32Array> {
    return download(this.ctx, this.buffer, into ?? new Uint32Array(this.bins));
  }
  release(): void {
    this.ctx.buffers.release(this.buffer);
  }
}

/** A mask that keeps the ROI rectangle (and, if given, only where `mask` is non-zero too). */
function roiMask(roi: Rect, shape: Image['shape'], mask?: Image): Image {
  if (shape.length === 3 && shape[0] !== 1) throw new InvalidArgumentError('histogram: roi applies to 2D images; use a mask for volumes');
  const [h, w] = shape.length === 3 ? [shape[1], shape[2]] : shape;
  if (roi.x + roi.width > w || roi.y + roi.height > h) {
    throw new InvalidArgumentError(`histogram: roi ${roi.x},${roi.y},${roi.width},${roi.height} lies outside the ${w}×${h} image`);
  }
  const m = createImage(shape, 'uint8');
  for (let y = roi.y; y < roi.y + roi.height; y++) {
    for (let x = roi.x; x < roi.x + roi.width; x++) m.data[y * w + x] = mask ? (mask.data[y * w + x] ? 1 : 0) : 1;
  }
  return m;
}

function validateMask(mask: Image | undefined, like: { shape: Image['shape'] }): void {
  if (!mask) return;
  validateImage(mask, 'mask');
  if (mask.dtype !== 'uint8' || mask.channels !== 1) throw new InvalidArgumentError(`mask must be one 8-bit channel, got ${mask.channels}×${mask.dtype}`);
  if (mask.shape.join() !== like.shape.join()) throw new InvalidArgumentError(`mask is ${mask.shape.join('×')} but the image is ${like.shape.join('×')}`);
}

/**
 * Histogram of an 8- or 16-bit gray image or volume (colour host images are converted to gray first), on the
 * CPU or the GPU with either algorithm. Equal to numpy.bincount (full range) / np.histogram(range=(0, 2^bits))
 * (with `bins`) and to cv2.calcHist with a mask. The counts always come back to the host (they are small).
 */
export async function histogram(src: Image | GpuImage, opts: HistogramOptions = {}): Promise<OpResult<Uint32Array>> {
  const t0 = now();
  const { hist: method, bins: binsOpt, roi } = resolveParams<{ hist: HistogramMethod; bins?: number; roi?: Rect }>('histogram', histogramParams, {
    hist: opts.method, bins: opts.bins, roi: opts.roi,
  });
  const img = grayInput(src, 'histogram', ['uint8', 'uint16']);
  const dtype = img.dtype as 'uint8' | 'uint16';
  const bits = dtype === 'uint8' ? 8 : 16;
  const bins = binsOpt ?? 1 << bits;
  if (bins > 1 << bits) throw new InvalidArgumentError(`histogram: ${bins} bins exceed the ${1 << bits} values of a ${dtype} image`);
  validateMask(opts.mask, img);
  const mask = roi ? roiMask(roi, img.shape, opts.mask) : opts.mask;
  const gpu = src instanceof GpuImage ? src.ctx : opts.gpu;
  if (gpu) {
    const config = { dtype, bins, masked: !!mask, method };
    const body = async (input: GpuImage, rec: Recording, extra: GpuImage[]) => {
      const plan = await HistogramGpuPlan.prepare(gpu, config);
      const out = acquireStorage(gpu, bins * 4, 'histogram');
      plan.encode(rec, input.buffer, pixelCount(input.shape), out, extra[0]?.buffer);
      return new GpuCounts(gpu, out, bins);
    };
    const r = (await runGpu<Uint32Array, GpuCounts>(gpu, img, 'histogram', { profile: opts.profile }, body, {
      extra: mask ? [mask] : [], alwaysDownload: true,
    })) as OpResult<Uint32Array>;
    return { ...r, timings: closeTimings(r.timings, t0) };
  }
  const tk = now();
  const counts = await histogramCpu(img as Image, opts.pool ?? inlinePool, bins, mask?.data as Uint8Array | undefined);
  const k = now() - tk;
  return { output: counts, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: 'histogram', ms: k }], kernelSource: 'cpu', total: now() - t0 }) };
}

import { compareArrays } from '../../core/compare.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { DeviceResult } from '../../core/gpu/run.js';
import { acquireStorage, download } from '../../core/gpu/transfer.js';
import { createImage, pixelCount, planeSize, validateImage, type Image } from '../../core/image.js';
import { defineOp, type OpOptions } from '../../core/op.js';
import type { ParamSpec, Rect, ResolvedOf } from '../../core/params.js';
import type { OpResult } from '../../core/timings.js';
import { histogramCpu } from './cpu.js';
import { HISTOGRAM_METHODS, HistogramGpuPlan } from './gpu.js';

export { HISTOGRAM_METHODS, type HistogramMethod } from './gpu.js';

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const histogramParams = [
  // `method` is the API's old name, `hist` the CLI's (--hist): both keep working.
  { name: 'impl', aliases: ['method', 'hist'], kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm: workgroup atomics, or per-invocation sub-histograms without atomics' },
  { name: 'bins', kind: 'int', min: 1, max: 65536, doc: 'bins spanning the dtype range [0, 2^bits) (default: one per value)' },
  { name: 'mask', kind: 'image', doc: 'count only where this 8-bit image of the same size is non-zero' },
  { name: 'roi', kind: 'rect', doc: 'count only this rectangle x,y,width,height (2D; combined with a mask by AND)' },
] as const satisfies readonly ParamSpec[];

/**
 * `impl` (or `method`, its old name): GPU algorithm; `bins` over [0, 2^bits): bin = floor(v · bins / 2^bits), as
 * np.histogram(range=(0, 2^bits)); `mask`: 8-bit, same shape, only its non-zero pixels counted (cv2.calcHist's
 * mask); `roi`: count only this rectangle (2D images; with a mask, pixels must be in both).
 */
export type HistogramOptions = OpOptions<typeof histogramParams>;
type Params = ResolvedOf<typeof histogramParams>;

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

type Shape = Image['shape'];

/** The bins counted: `bins`, or one per value of the dtype. */
function binsOf(p: Params, dtype: string): number {
  return p.bins ?? 1 << (dtype === 'uint8' ? 8 : 16);
}

/** The 2D plane [h, w] the roi lies in, or a typed error (roi outside the image, or a volume). */
function checkRoi(roi: Rect, shape: Shape): void {
  if (shape.length === 3 && shape[0] !== 1) throw new InvalidArgumentError('histogram: roi applies to 2D images; use a mask for volumes');
  const [h, w] = planeSize(shape);
  if (roi.x + roi.width > w || roi.y + roi.height > h) {
    throw new InvalidArgumentError(`histogram: roi ${roi.x},${roi.y},${roi.width},${roi.height} lies outside the ${w}×${h} image`);
  }
}

function checkMask(mask: Image | GpuImage | undefined, like: { shape: Shape }, roi: Rect | undefined, gpu: GpuContext | undefined): void {
  if (!mask) return;
  if (mask instanceof GpuImage) {
    mask.assertLive();
    // A roi is combined with the mask's pixels on the host.
    if (!gpu || roi) throw new InvalidArgumentError(`histogram: a GpuImage mask needs the GPU path${roi ? ' and no roi' : ''}; pass a host image`);
  } else {
    validateImage(mask, 'mask');
  }
  if (mask.dtype !== 'uint8' || mask.channels !== 1) throw new InvalidArgumentError(`mask must be one 8-bit channel, got ${mask.channels}×${mask.dtype}`);
  if (mask.shape.join() !== like.shape.join()) throw new InvalidArgumentError(`mask is ${mask.shape.join('×')} but the image is ${like.shape.join('×')}`);
}

/** Before any work: bins within the dtype's values, the mask and the roi fitting the image. */
function check(p: Params, img: Image | GpuImage, gpu?: GpuContext): void {
  const bins = binsOf(p, img.dtype);
  if (bins > 1 << (img.dtype === 'uint8' ? 8 : 16)) throw new InvalidArgumentError(`histogram: ${bins} bins exceed the ${1 << (img.dtype === 'uint8' ? 8 : 16)} values of a ${img.dtype} image`);
  checkMask(p.mask, img, p.roi, gpu);
  if (p.roi) checkRoi(p.roi, img.shape);
}

/** The mask as a host image (check lets a GpuImage mask through only to the GPU path, without a roi). */
function hostMask(p: Params): Image | undefined {
  if (p.mask instanceof GpuImage) throw new InvalidArgumentError('histogram: a GpuImage mask needs the GPU path and no roi; pass a host image');
  return p.mask;
}

/** A mask that keeps the roi rectangle (and, if given, only where `mask` is non-zero too). */
function roiMask(roi: Rect, shape: Shape, mask?: Image): Image {
  const w = shape[shape.length - 1];
  const m = createImage(shape, 'uint8');
  for (let y = roi.y; y < roi.y + roi.height; y++) {
    for (let x = roi.x; x < roi.x + roi.width; x++) m.data[y * w + x] = mask ? (mask.data[y * w + x] ? 1 : 0) : 1;
  }
  return m;
}

/** The pixels counted, as a host mask: the roi (AND the mask, if given), or the mask, or all (undefined). */
function countMask(p: Params, shape: Shape): Image | undefined {
  return p.roi ? roiMask(p.roi, shape, hostMask(p)) : hostMask(p);
}

/** The counts' one-line summary the CLI prints. */
function summarizeCounts(h: Uint32Array): string[] {
  let total = 0, nonzero = 0, mode = 0, lo = -1, hi = -1;
  for (let i = 0; i < h.length; i++) {
    total += h[i];
    if (h[i]) {
      nonzero++;
      if (lo < 0) lo = i;
      hi = i;
      if (h[i] > h[mode]) mode = i;
    }
  }
  return [`  ${h.length} bins, ${total} pixels counted, ${nonzero} non-zero bins in [${lo}, ${hi}], mode bin ${mode} (${h[mode]})`];
}

/**
 * Histogram of an 8- or 16-bit gray image or volume (colour host images are converted to gray first), on the
 * CPU or the GPU with either algorithm. Equal to numpy.bincount (full range) / np.histogram(range=(0, 2^bits))
 * (with `bins`) and to cv2.calcHist with a mask. The counts always come back to the host (they are small).
 * Typed as a plain function (it still carries `.op` for the registry): TypeScript types a call to a callable that
 * has members only through full overload resolution, which inside loops can turn circular (TS7022).
 */
export const histogram: (src: Image | GpuImage, opts?: HistogramOptions) => Promise<OpResult<Uint32Array>> = defineOp({
  name: 'histogram',
  summary: 'histogram counts (numpy.bincount / np.histogram over [0, 2^bits), cv2.calcHist with --mask)',
  params: histogramParams,
  input: { dtypes: ['uint8', 'uint16'], colour: 'gray' },
  check,
  cpu: (img, p, { pool }) => histogramCpu(img, pool, binsOf(p, img.dtype), countMask(p, img.shape)?.data as Uint8Array | undefined),
  // A resident mask is read where it is.
  gpuImages: (p, input) => [p.mask instanceof GpuImage ? p.mask : countMask(p, input.shape)],
  gpu: async (input, rec, p, extra) => {
    const ctx = input.ctx;
    const bins = binsOf(p, input.dtype);
    const plan = await HistogramGpuPlan.prepare(ctx, { dtype: input.dtype as 'uint8' | 'uint16', bins, masked: extra.length > 0, method: p.impl });
    const out = acquireStorage(ctx, bins * 4, 'histogram');
    plan.encode(rec, input.buffer, pixelCount(input.shape), out, extra[0]?.buffer);
    return new GpuCounts(ctx, out, bins);
  },
  alwaysDownload: true,
  compare: (cpu: Uint32Array, gpu: Uint32Array) => compareArrays(cpu, gpu),
  report: (r) => ({ json: { counts: Array.from(r.output) }, text: summarizeCounts(r.output) }),
});

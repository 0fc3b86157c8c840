import type { CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError, optionRef, UnsupportedDtypeError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { runGpu } from '../../core/gpu/run.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import type { Recording } from '../../core/gpu/recording.js';
import { download } from '../../core/gpu/transfer.js';
import { intoOut, plane2D, planeSize, requireDtype, type Image } from '../../core/image.js';
import { defineOp, runOperation, type OpOptions, type Produced } from '../../core/op.js';
import type { ParamSpec, ResolvedOf } from '../../core/params.js';
import { now, type OpResult } from '../../core/timings.js';
import { histogram } from '../histogram/index.js';
import { HISTOGRAM_METHODS } from '../histogram/gpu.js';
import { applyLutCpu } from '../lut/cpu.js';
import { applyLut } from '../lut/index.js';
import { binaryLut, isodataThreshold, otsuThreshold } from './global.js';
import { adaptiveGpu, localThresholdGpu, otsuGpu, otsuKernelReady } from './gpu.js';
import { adaptiveCpu, localThresholdCpu, type LocalMethod } from './local-cpu.js';

export const THRESHOLD_METHODS = ['otsu', 'isodata', 'adaptive', 'mean', 'gaussian'] as const;
export const ADAPTIVE_SCHEMES = ['sliding', 'naive'] as const;
export type ThresholdMethod = (typeof THRESHOLD_METHODS)[number];

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const thresholdParams = [
  { name: 'method', kind: 'enum', choices: THRESHOLD_METHODS, default: 'otsu', doc: 'global: otsu (cv2 THRESH_OTSU), isodata (skimage); local: adaptive (isodata per window), mean, gaussian (cv2.adaptiveThreshold)' },
  { name: 'impl', aliases: ['hist'], kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm used by the global methods' },
  { name: 'window', kind: 'int', min: 3, max: 2047, default: 11, doc: 'local methods: odd window side (cv2 blockSize); larger than the image is allowed (replicated borders)' },
  { name: 'contrast', kind: 'int', min: 0, max: 255, default: 15, doc: 'adaptive: windows whose value range is below this use the global isodata threshold' },
  // A second choice of implementation (same output), of adaptive's window histogram: `impl` already names the
  // histogram algorithm, which adaptive uses too (for its fallback), so this one keeps its own name.
  { name: 'scheme', kind: 'enum', choices: ADAPTIVE_SCHEMES, default: 'sliding', doc: 'adaptive, GPU: sliding window histogram per row run, or naive (rebuilt per pixel)' },
  { name: 'offset', kind: 'float', default: 2, doc: 'local methods: C, subtracted from the local mean (foreground: src − mean > −ceil(C))' },
] as const satisfies readonly ParamSpec[];

/** `method`, `impl` (or its old name `hist`), `window`, `contrast`, `scheme`, `offset`, and where to run. */
export type ThresholdOptions = OpOptions<typeof thresholdParams>;
type Params = ResolvedOf<typeof thresholdParams>;

/** What thresholding reports beside its image. */
interface ThresholdExtra {
  /** Global methods: pixels > it are set. */
  threshold?: number;
  /** adaptive: the global isodata threshold used in windows too uniform to split. */
  fallback?: number;
}

/**
 * A binary image (0 / dtype maximum) and, for the global methods, the threshold (pixels > it are set); for
 * adaptive, `fallback` is the global isodata threshold used in windows too uniform to split.
 */
export type ThresholdResult<T> = OpResult<T> & ThresholdExtra;

const isLocal = (m: ThresholdMethod): m is LocalMethod => m === 'mean' || m === 'gaussian';

function globalThreshold(method: ThresholdMethod, hist: Uint32Array): number {
  const t = method === 'otsu' ? otsuThreshold(hist) : isodataThreshold(hist);
  if (t === undefined) throw new UnsupportedDtypeError('isodata: no threshold satisfies the isodata criterion for this image');
  return t;
}

/** Checks a local method's window and input; returns the 2D shape. */
function localShape(img: Image | GpuImage, method: string, window: number): [number, number] {
  if (window % 2 !== 1) throw new InvalidArgumentError(`threshold: window must be odd (cv2.adaptiveThreshold's blockSize), got ${window}`);
  requireDtype(img, ['uint8'], `threshold ${optionRef('method', method)} (defined on 8-bit images, as cv2.adaptiveThreshold)`);
  return plane2D(img.shape, `threshold ${optionRef('method', method)}`);
}

/**
 * The local methods on an image beyond one storage binding run in row slabs (core/gpu/slabs.ts) with the
 * window's radius as halo; their widest buffers hold a u32 per pixel. Checked before any upload (in `check`).
 */
function localSlabs(gpu: GpuContext, shape: Image['shape'], method: string, window: number): SlabSpec {
  const spec: SlabSpec = { halo: (window - 1) / 2, unitBytes: planeSize(shape)[1] * 4, outDtype: 'uint8', what: `threshold ${optionRef('method', method)}` };
  slabsFor(gpu, shape, 'uint8', spec);
  return spec;
}

/** The parameters as a whole, before any work: the local methods' window, dtype, dimensions and device limits. */
function checkThreshold(p: Params, img: Image | GpuImage, gpu?: GpuContext): void {
  if (p.method === 'otsu' || p.method === 'isodata') return;
  localShape(img, p.method, p.window);
  if (p.method === 'adaptive' && p.window > 255) throw new InvalidArgumentError(`threshold ${optionRef('method', 'adaptive')}: window must be ≤ 255 (exact 64-bit window sums), got ${p.window}`);
  if (gpu) localSlabs(gpu, img.shape, p.method, p.window);
}

/** The binary image with the image's own shape: into the caller's `out`, or the 2D result reshaped. */
function asShaped(result: Image, img: Image, out?: Image): Image {
  const r = intoOut(result, out);
  return out ?? { ...r, shape: [...img.shape] as Image['shape'] };
}

/** CPU: histogram, the threshold from it, then binarize through a LUT (global) or per window (local). */
async function thresholdCpu(img: Image, p: Params, pool: CpuPool, out?: Image): Promise<Produced<Image, ThresholdExtra>> {
  if (isLocal(p.method)) {
    const tk = now();
    const output = asShaped(await localThresholdCpu({ ...img, shape: planeSize(img.shape) }, p.method, p.window, p.offset, pool), img, out);
    return { output, kernels: [{ name: `threshold.${p.method}`, ms: now() - tk }] };
  }
  const h = await histogram(img, { pool, method: p.impl });
  if (p.method === 'adaptive') {
    const fallback = isodataThreshold(h.output) ?? 0;
    const tk = now();
    const output = asShaped(await adaptiveCpu({ ...img, shape: planeSize(img.shape) }, p.window, p.contrast, fallback, pool), img, out);
    return { output, kernels: [...h.timings.kernels, { name: 'threshold.adaptive', ms: now() - tk }], extra: { fallback } };
  }
  const t = globalThreshold(p.method, h.output);
  const tk = now();
  const output = await applyLutCpu(img, binaryLut(h.output.length, t, img.dtype === 'uint8' ? 255 : 65535), pool, out);
  return { output, kernels: [...h.timings.kernels, { name: 'binarize', ms: now() - tk }], extra: { threshold: t } };
}

/**
 * GPU, one recording: the local mean/gaussian methods (in row slabs), or 8-bit Otsu, whose threshold is found
 * on the device in OpenCV's double arithmetic (otsu.wgsl.ts) and read back after the run (4 bytes) unless the caller
 * keeps only the image (RunOptions.extras false: batch mode, pipelines), which then waits for nothing.
 */
async function thresholdGpu(input: GpuImage, rec: Recording, p: Params, inPlace = false): Promise<GpuImage | Produced<GpuImage, ThresholdExtra>> {
  const method = p.method;
  if (isLocal(method)) {
    const slabs = localSlabs(input.ctx, input.shape, method, p.window);
    return recordInSlabs(rec, input, slabs, (slab) => localThresholdGpu(slab, rec, planeSize(slab.shape), method, p.window, p.offset));
  }
  const r = await otsuGpu(input, rec, p.impl, inPlace);
  const drop = () => input.ctx.buffers.release(r.threshold); // after the submission: the queue runs in order
  const read = async (): Promise<ThresholdExtra> => {
    const t = (await download(input.ctx, r.threshold, new Uint32Array(1)))[0];
    drop();
    return { threshold: t };
  };
  return { output: r.image, read, drop };
}

/**
 * GPU with a host decision between device steps: the device histogram comes to the host, the threshold (or
 * adaptive's fallback) is taken from it there, then the LUT or the adaptive kernel runs on the resident image.
 * 16-bit Otsu is here too: OpenCV's sequential recurrence over 65536 bins would run on one GPU invocation.
 */
async function thresholdSteps(dev: GpuImage, p: Params, opts: { profile?: boolean; wait?: boolean; inPlace?: boolean }) {
  const h = await histogram(dev, { method: p.impl, profile: opts.profile });
  if (p.method === 'adaptive') {
    const fallback = isodataThreshold(h.output) ?? 0;
    const slabs = localSlabs(dev.ctx, dev.shape, 'adaptive', p.window);
    const r = (await runGpu<Image, GpuImage>(dev.ctx, dev, 'threshold.adaptive', opts, (input, rec) =>
      recordInSlabs(rec, input, slabs, (slab) => adaptiveGpu(slab, rec, planeSize(slab.shape), p.window, p.contrast, fallback, p.scheme)))) as OpResult<GpuImage>;
    return { output: r.output, steps: [h.timings, r.timings], extra: { fallback } };
  }
  const t = globalThreshold(p.method, h.output);
  // The engine's entry (not the public applyLut, which drops engine options): in place as the one kernel would be.
  const lut = binaryLut(h.output.length, t, dev.dtype === 'uint8' ? 255 : 65535);
  const b = (await runOperation(applyLut.op, dev, { lut }, { profile: opts.profile, inPlace: opts.inPlace })) as OpResult<GpuImage>;
  return { output: b.output, steps: [h.timings, b.timings], extra: { threshold: t } };
}

/**
 * Binary segmentation of an 8/16-bit gray image (colour host images are converted to gray):
 * - otsu: threshold and output equal to cv2.threshold(img, 0, 255, THRESH_BINARY | THRESH_OTSU); on the GPU
 *   (8-bit) the threshold is found on the device in OpenCV's double arithmetic (no host round trip; while that
 *   kernel compiles, a call takes the threshold from the device histogram on the host); 16-bit:
 *   device histogram, threshold in double on the host;
 * - isodata: scikit-image's threshold_isodata (its tie rule: the lowest qualifying t); output img > t.
 *   On the GPU the histogram is computed on the device and the threshold on the host from it.
 * - adaptive (8-bit, 2D): the isodata rule on every pixel's window histogram, with the global isodata threshold
 *   as the fallback for windows too uniform to split (adaptive-kernels.ts);
 * - mean, gaussian (8-bit, 2D): cv2.adaptiveThreshold's ADAPTIVE_THRESH_MEAN_C / GAUSSIAN_C.
 * 16-bit images use 65536 bins and 65535 as the foreground value. A GpuImage input stays on its device.
 */
export const threshold = defineOp<typeof thresholdParams, ThresholdExtra>({
  name: 'threshold',
  summary: 'binary segmentation: global otsu/isodata, local adaptive (isodata per window), mean/gaussian (cv2.adaptiveThreshold)',
  params: thresholdParams,
  input: { dtypes: ['uint8', 'uint16'], colour: 'gray', volumes: true },
  light: (p) => p.method === 'otsu' || p.method === 'isodata', // the windowed methods are neighbourhood work
  check: checkThreshold,
  cpu: (img, p, { pool, out }) => thresholdCpu(img, p, pool, out),
  gpu: (input, rec, p, _extra, opts) => thresholdGpu(input, rec, p, opts.inPlace),
  gpuName: (p) => `threshold.${p.method}`,
  // 8-bit Otsu runs as steps until its one kernel is compiled (otsuKernelReady says why), with the same result. A
  // batch or a pipeline (no extras) does not start the compile: on a machine whose driver cache lacked the kernel, the
  // first Otsu batch of 200 photos waited for it (H200: 65 images/s, the next process 122; docs/throughput.md), and
  // the process, once it started the compile, still waited for it at exit; the steps run as fast.
  stepsWhen: (p, img, gpu, extras) => p.method === 'isodata' || p.method === 'adaptive' || (p.method === 'otsu' && (img.dtype !== 'uint8' || !otsuKernelReady(gpu, extras))),
  gpuSteps: thresholdSteps,
  report: (r) => {
    if (r.threshold !== undefined) return { json: { threshold: r.threshold }, text: [`  threshold ${r.threshold} (pixels > ${r.threshold} are foreground)`] };
    if (r.fallback !== undefined) return { json: { fallback: r.fallback }, text: [`  global isodata fallback ${r.fallback} (used in windows too uniform to split)`] };
    return { json: {}, text: [] };
  },
});

import type { CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError, UnsupportedDtypeError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { download } from '../../core/gpu/transfer.js';
import { checkOut, intoOut, requireDtype, type Image } from '../../core/image.js';
import { resolveParams, type ParamSpec } from '../../core/params.js';
import { closeTimings, makeTimings, now, type OpResult, type Timings } from '../../core/timings.js';
import { histogram } from '../histogram/index.js';
import { HISTOGRAM_METHODS, type HistogramMethod } from '../histogram/gpu.js';
import { applyLutCpu } from '../lut/cpu.js';
import { applyLut } from '../lut/index.js';
import { grayInput } from '../input.js';
import { inlinePool } from '../tasks.js';
import { binaryLut, isodataThreshold, otsuThreshold } from './global.js';
import { adaptiveGpu, localThresholdGpu, otsuGpu } from './gpu.js';
import { adaptiveCpu, localThresholdCpu, type LocalMethod } from './local-cpu.js';

export const THRESHOLD_METHODS = ['otsu', 'isodata', 'adaptive', 'mean', 'gaussian'] as const;
export const ADAPTIVE_SCHEMES = ['sliding', 'naive'] as const;
export type ThresholdMethod = (typeof THRESHOLD_METHODS)[number];

/** Declared once: CLI flags, help and validation come from here. */
export const thresholdParams: readonly ParamSpec[] = [
  { name: 'method', kind: 'enum', choices: THRESHOLD_METHODS, default: 'otsu', doc: 'global: otsu (cv2 THRESH_OTSU), isodata (skimage); local: adaptive (isodata per window), mean, gaussian (cv2.adaptiveThreshold)' },
  { name: 'hist', kind: 'enum', choices: HISTOGRAM_METHODS, default: 'atomic', doc: 'GPU histogram algorithm used by the global methods' },
  { name: 'window', kind: 'int', min: 3, max: 2047, default: 11, doc: 'local methods: odd window side (cv2 blockSize); larger than the image is allowed (replicated borders)' },
  { name: 'contrast', kind: 'int', min: 0, max: 255, default: 15, doc: 'adaptive: windows whose value range is below this use the global isodata threshold' },
  { name: 'scheme', kind: 'enum', choices: ADAPTIVE_SCHEMES, default: 'sliding', doc: 'adaptive, GPU: sliding window histogram per row run, or naive (rebuilt per pixel)' },
  { name: 'offset', kind: 'float', default: 2, doc: 'local methods: C, subtracted from the local mean (foreground: src − mean > −ceil(C))' },
];

export interface ThresholdOptions extends GpuRunOptions {
  /** @default 'otsu' */
  method?: ThresholdMethod;
  /** GPU histogram algorithm (global methods). @default 'atomic' */
  hist?: HistogramMethod;
  /** Local methods: odd window side. @default 11 */
  window?: number;
  /** Local methods: the constant C of cv2.adaptiveThreshold. @default 2 */
  offset?: number;
  /** adaptive: minimum window value range to threshold locally (else the global isodata threshold). @default 15 */
  contrast?: number;
  /** adaptive, GPU: window histogram scheme. @default 'sliding' */
  scheme?: (typeof ADAPTIVE_SCHEMES)[number];
  gpu?: GpuContext;
  pool?: CpuPool;
}

/**
 * A binary image (0 / dtype maximum) and, for the global methods, the threshold (pixels > it are set); for
 * adaptive, `fallback` is the global isodata threshold used in windows too uniform to split.
 */
export type ThresholdResult<T> = OpResult<T> & { threshold?: number; fallback?: number };


function globalThreshold(method: ThresholdMethod, hist: Uint32Array): number {
  const t = method === 'otsu' ? otsuThreshold(hist) : isodataThreshold(hist);
  if (t === undefined) throw new UnsupportedDtypeError('isodata: no threshold satisfies the isodata criterion for this image');
  return t;
}

/**
 * Runs a GPU pipeline made of several operations with one upload and one download: a host image goes to the
 * device once, `steps` run on the resident copy, and the result comes back into `opts.out` or a new image.
 */
async function onDevice(
  gpu: GpuContext, img: Image | GpuImage, opts: ThresholdOptions, t0: number,
  steps: (dev: GpuImage) => Promise<{ output: GpuImage; steps: Timings[]; extra: { threshold?: number; fallback?: number } }>,
): Promise<ThresholdResult<Image | GpuImage>> {
  let upload = 0, download = 0;
  let dev: GpuImage;
  if (img instanceof GpuImage) {
    dev = img;
  } else {
    const tu = now();
    dev = await GpuImage.upload(gpu, img);
    if (opts.profile ?? true) await gpu.finish();
    upload = now() - tu;
  }
  try {
    const r = await steps(dev);
    let output: Image | GpuImage = r.output;
    if (!(img instanceof GpuImage)) {
      const td = now();
      output = await r.output.toHost(opts.out);
      r.output.release();
      download = now() - td;
    }
    const timings = r.steps.reduce(addTimings, { backend: 'gpu', host: 0, upload, download, kernels: [], kernelSource: r.steps[0].kernelSource, total: 0 } as Timings);
    return { output, timings: closeTimings(timings, t0), ...r.extra };
  } finally {
    if (!(img instanceof GpuImage)) dev.release();
  }
}

/** Adds one step's timings to another's (operations composed of operations). */
function addTimings(a: Timings, b: Timings): Timings {
  return {
    ...a, host: a.host + b.host, upload: a.upload + b.upload, download: a.download + b.download,
    kernels: [...a.kernels, ...b.kernels], total: a.total + b.total,
    ...(a.slabs || b.slabs ? { slabs: Math.max(a.slabs ?? 1, b.slabs ?? 1) } : {}),
  };
}

/**
 * Global thresholding of an 8/16-bit gray image (colour host images are converted to gray):
 * - otsu: threshold and output equal to cv2.threshold(img, 0, 255, THRESH_BINARY | THRESH_OTSU); on the GPU
 *   (8-bit) the threshold is found on the device in OpenCV's double arithmetic (no host round trip); 16-bit: device histogram, threshold in double on the host (see below);
 * - isodata: scikit-image's threshold_isodata (its tie rule: the lowest qualifying t); output img > t.
 *   On the GPU the histogram is computed on the device and the threshold on the host from it.
 * 16-bit images use 65536 bins and 65535 as the foreground value.
 */
export async function threshold(src: Image, opts?: ThresholdOptions): Promise<ThresholdResult<Image>>;
export async function threshold(src: GpuImage, opts?: ThresholdOptions): Promise<ThresholdResult<GpuImage>>;
export async function threshold(src: Image | GpuImage, opts?: ThresholdOptions): Promise<ThresholdResult<Image | GpuImage>>;
export async function threshold(src: Image | GpuImage, opts: ThresholdOptions = {}): Promise<ThresholdResult<Image | GpuImage>> {
  const t0 = now();
  const p = resolveParams<{ method: ThresholdMethod; hist: HistogramMethod; window: number; offset: number; contrast: number; scheme: 'sliding' | 'naive' }>(
    'threshold', thresholdParams, { method: opts.method, hist: opts.hist, window: opts.window, offset: opts.offset, contrast: opts.contrast, scheme: opts.scheme },
  );
  const img = grayInput(src, 'threshold', ['uint8', 'uint16']);
  const maxv = img.dtype === 'uint8' ? 255 : 65535;
  const gpu = src instanceof GpuImage ? src.ctx : opts.gpu;
  if (opts.out && !(img instanceof GpuImage)) checkOut(opts.out, img);
  if (p.method === 'mean' || p.method === 'gaussian') return localThreshold(img, p.method, p.window, p.offset, gpu, opts, t0);
  if (p.method === 'adaptive') return adaptiveThreshold(img, p.window, p.contrast, p.scheme, gpu, { ...opts, hist: p.hist }, t0);

  // 8-bit Otsu runs entirely on the device, in software doubles (otsu.wgsl.ts). For 16-bit, OpenCV's sequential
  // recurrence over 65536 bins would run on one GPU invocation, so the threshold is taken on the host, in double,
  // from the device histogram (256 KiB read back).
  if (p.method === 'otsu' && gpu && img.dtype === 'uint8') {
    let tBuf: GPUBuffer | undefined;
    const r = (await runGpu(gpu, img, 'threshold.otsu', opts, async (input, rec) => {
      const res = await otsuGpu(input, rec, p.hist);
      tBuf = res.threshold;
      return res.image;
    })) as OpResult<Image | GpuImage>;
    const td = now();
    const t = (await download(gpu, tBuf!, new Uint32Array(1)))[0];
    gpu.buffers.release(tBuf);
    r.timings.download += now() - td;
    return { ...r, timings: closeTimings(r.timings, t0), threshold: t };
  }

  // Histogram, threshold from it on the host, then binarize through a LUT where the data is.
  if (gpu) {
    return onDevice(gpu, img, opts, t0, async (dev) => {
      const h = await histogram(dev, { method: p.hist, profile: opts.profile });
      const t = globalThreshold(p.method, h.output);
      const b = (await applyLut(dev, binaryLut(h.output.length, t, maxv), { profile: opts.profile })) as OpResult<GpuImage>;
      return { output: b.output, steps: [h.timings, b.timings], extra: { threshold: t } };
    });
  }
  const h = await histogram(img, { pool: opts.pool, method: p.hist });
  const t = globalThreshold(p.method, h.output);
  const lut = binaryLut(h.output.length, t, maxv);
  const tk = now();
  const output = await applyLutCpu(img as Image, lut, opts.pool ?? inlinePool, opts.out);
  const kernels = [...h.timings.kernels, { name: 'binarize', ms: now() - tk }];
  return { output, threshold: t, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels, kernelSource: 'cpu', total: now() - t0 }) };
}

/** Checks a local method's window and input; returns the 2D shape. */
function localShape(img: Image | GpuImage, method: string, window: number): [number, number] {
  if (window % 2 !== 1) throw new InvalidArgumentError(`threshold: window must be odd (cv2.adaptiveThreshold's blockSize), got ${window}`);
  requireDtype(img, ['uint8'], `threshold --method ${method} (defined on 8-bit images, as cv2.adaptiveThreshold)`);
  if (img.shape.length === 3 && img.shape[0] !== 1) throw new InvalidArgumentError(`threshold --method ${method} works on 2D images, got a ${img.shape.join('×')} volume`);
  return (img.shape.length === 3 ? img.shape.slice(1) : img.shape) as [number, number];
}

/** The [h, w] of a 2D image (or a volume of depth 1). */
function plane(shape: Image['shape']): [number, number] {
  return (shape.length === 3 ? shape.slice(1) : shape) as [number, number];
}

/**
 * The local methods on an image beyond one storage binding run in row slabs (core/gpu/slabs.ts) with the
 * window's radius as halo; their widest buffers hold a u32 per pixel. Checked before any upload.
 */
function localSlabs(gpu: GpuContext, shape: Image['shape'], method: string, window: number): SlabSpec {
  const spec: SlabSpec = { halo: (window - 1) / 2, unitBytes: plane(shape)[1] * 4, outDtype: 'uint8', what: `threshold --method ${method}` };
  slabsFor(gpu, shape, 'uint8', spec);
  return spec;
}

/**
 * Adaptive isodata segmentation (8-bit, 2D): the isodata rule on every pixel's window histogram, with the
 * global isodata threshold as the fallback for windows too uniform to split (adaptive-kernels.ts).
 */
async function adaptiveThreshold(
  img: Image | GpuImage, window: number, contrast: number, scheme: 'sliding' | 'naive', gpu: GpuContext | undefined, opts: ThresholdOptions, t0: number,
): Promise<ThresholdResult<Image | GpuImage>> {
  const shape2d = localShape(img, 'adaptive', window);
  if (window > 255) throw new InvalidArgumentError(`threshold --method adaptive: window must be ≤ 255 (exact 64-bit window sums), got ${window}`);
  if (gpu) {
    const slabs = localSlabs(gpu, img.shape, 'adaptive', window);
    return onDevice(gpu, img, opts, t0, async (dev) => {
      const h = await histogram(dev, { method: opts.hist, profile: opts.profile });
      const fallback = isodataThreshold(h.output) ?? 0;
      const r = (await runGpu(gpu, dev, 'threshold.adaptive', opts, (input, rec) =>
        recordInSlabs(rec, input, slabs, (slab) => adaptiveGpu(slab, rec, plane(slab.shape), window, contrast, fallback, scheme)))) as OpResult<GpuImage>;
      return { output: r.output, steps: [h.timings, r.timings], extra: { fallback } };
    });
  }
  const h = await histogram(img, { pool: opts.pool, method: opts.hist });
  const fallback = isodataThreshold(h.output) ?? 0;
  const tk = now();
  const out = intoOut(await adaptiveCpu({ ...(img as Image), shape: shape2d }, window, contrast, fallback, opts.pool ?? inlinePool), opts.out);
  const kernels = [...h.timings.kernels, { name: 'threshold.adaptive', ms: now() - tk }];
  return { output: opts.out ?? { ...out, shape: [...img.shape] as Image['shape'] }, fallback, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels, kernelSource: 'cpu', total: now() - t0 }) };
}

/** The cv2.adaptiveThreshold-compatible methods (8-bit, 2D), on the CPU pool or the GPU. */
async function localThreshold(
  img: Image | GpuImage, method: LocalMethod, window: number, offset: number, gpu: GpuContext | undefined, opts: ThresholdOptions, t0: number,
): Promise<ThresholdResult<Image | GpuImage>> {
  const shape2d = localShape(img, method, window);
  if (gpu) {
    const slabs = localSlabs(gpu, img.shape, method, window);
    return runGpu(gpu, img, `threshold.${method}`, opts, (input, rec) =>
      recordInSlabs(rec, input, slabs, (slab) => localThresholdGpu(slab, rec, plane(slab.shape), method, window, offset))) as Promise<ThresholdResult<Image | GpuImage>>;
  }
  const tk = now();
  const out = intoOut(await localThresholdCpu({ ...(img as Image), shape: shape2d }, method, window, offset, opts.pool ?? inlinePool), opts.out);
  const output = opts.out ?? { ...out, shape: [...img.shape] as Image['shape'] };
  return { output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: `threshold.${method}`, ms: now() - tk }], kernelSource: 'cpu', total: now() - t0 }) };
}

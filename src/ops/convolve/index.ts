import { BORDER_MODES, borderIndex, borderParam } from '../../core/border.js';
import { compareWithin } from '../../core/compare.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { intoOut, type Image, type Shape } from '../../core/image.js';
import { defineOp, GRAY_PARAM, paramsOf, type OpOptions, type RunOptions } from '../../core/op.js';
import type { ParamSpec } from '../../core/params.js';
import type { OpResult } from '../../core/timings.js';
import { filterCpu } from './cpu.js';
import { filterGpuHost, filterResident, gpuPlan, recordFilter, residentSlabs } from './device.js';
import type { FilterPlan } from './filters.js';
import { CONV_IMPLS, type ConvSchedule } from './gpu.js';
import { denseKernel, flipKernel, kernelFromJson, type ConvKernel } from './kernel.js';
import { filterRun, outGeometry } from './run.js';

export { CONV_IMPLS, DEFAULT_CONV_SCHEDULE, type ConvImpl, type ConvSchedule } from './gpu.js';
export { denseKernel, flipKernel, kernelFromJson, rankOneFactors, separableKernel, type ConvKernel } from './kernel.js';
export { gaussianWeights, parseFilter, type FilterPlan } from './filters.js';
export { BORDER_MODES, type BorderMode } from '../../core/border.js';

/**
 * `kernel:FILE` as a one-kernel filter: a .npy (2D or 3D, any dtype imgpu reads, read by io) or a .json kernel
 * (kernel.ts kernelFromJson), applied as a correlation (cv2.filter2D, scipy.ndimage.correlate).
 */
function filterFromFile(f: { path: string; spec: string; image?: Image; text?: string }): FilterPlan {
  if (f.text !== undefined) return { name: f.spec, components: [kernelFromJson(f.text, f.path)], combine: 'single' };
  const k = f.image!;
  if (k.channels !== 1) throw new InvalidArgumentError(`${f.spec}: a kernel has one channel`);
  return { name: f.spec, components: [denseKernel(k.data, [...k.shape], undefined, f.path)], combine: 'single' };
}

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const filterParams = [
  { name: 'filter', kind: 'string', default: 'sobel', file: { prefix: 'kernel:', text: ['.json'], load: filterFromFile }, doc: 'sobel[-x|-y|-z] | prewitt[-x|-y|-z] | roberts | gauss:SIGMA[,SY[,SZ]][mm] | box:N[xM[xK]] | laplace | kernel:FILE (.npy or .json)' },
  borderParam(BORDER_MODES, 'reflect', 'reflect (dcba|abcd, scipy default) | reflect101 = mirror (dcb|abcd, OpenCV default) | replicate = nearest | wrap | constant (--cval) | valid (output shrinks)'),
  { name: 'cval', kind: 'float', default: 0, doc: 'value outside the image for --border constant' },
  { name: 'impl', kind: 'enum', choices: CONV_IMPLS, default: 'auto', doc: 'GPU implementation: naive (global memory) | tiled (workgroup memory) | separable (1-D passes, x and y in one kernel) | fused (separable, one pass) | auto' },
  { name: 'truncate', kind: 'float', default: 4, min: 0.5, max: 20, doc: 'Gaussian radius in sigmas (scipy truncate)' },
  { name: 'saturate', kind: 'bool', default: false, doc: 'round and saturate the float32 result back to an 8/16-bit input type (cv2 ddepth = -1)' },
  GRAY_PARAM,
] as const satisfies readonly ParamSpec[];

/** Options a filter call takes besides its parameters (tests, benchmarks): no command-line flags. */
export interface FilterTuning {
  /** Largest buffer a slab may use (default: the device's binding/buffer limit); smaller values force slabs. */
  maxSlabBytes?: number;
  /** Tile shape of the tiled kernels (benchmarks). */
  schedule?: ConvSchedule;
}

/**
 * The options of filter, correlate and convolve: the declared parameters (border — any of its OpenCV/scipy names —,
 * cval, impl, truncate, saturate; the filter itself is an argument), where to run, and the tuning.
 */
export type FilterOptions = Omit<OpOptions<typeof filterParams>, 'filter'> & FilterTuning;

/** The result of a filter: its output, its timings, and which implementation ran. */
export interface FilterResult<T> extends OpResult<T> {
  impl: string;
}

/** CPU and GPU float results of filters agree to this fraction of the output's largest magnitude (docs/convolution.md). */
export const FILTER_TOLERANCE = 1e-5;

/** The caller's tuning, read from the options as given (the skeleton passes them through to the GPU paths). */
const tuning = (opts: RunOptions): RunOptions & FilterTuning => opts;

/**
 * The operation: a named filter (filters.ts) or a FilterPlan (`kernel:FILE` loaded) over a gray 2D image or 3D
 * volume — a colour image channel by channel (core/op.ts 'planes'; `gray`: converted first) —, float32 out (`saturate`: back to the 8/16-bit input type). Host images beyond the GPU's buffers run in
 * host slabs, resident ones in device slabs (device.ts).
 */
const filterOp = defineOp<typeof filterParams, { impl: string }>({
  name: 'filter',
  summary: 'convolution filters on 2D images and 3D volumes: sobel, prewitt, roberts, gauss, box, laplace, any kernel (= scipy.ndimage / cv2 within 1e-5)',
  params: filterParams,
  // Colour: each channel alone, as cv2.GaussianBlur/blur/Sobel/filter2D of a 3-channel image (gray with `gray`).
  input: { dtypes: ['uint8', 'uint16', 'float32'], colour: 'planes', volumes: true },
  reach: (p, input) => {
    const run = filterRun(p, input);
    // 'valid' shrinks the volume, and a float box spreads a NaN down the rest of its line (scipy's running sum): whole.
    if (p.border === 'valid' || (run.plan.nonFinite === 'running' && input.dtype === 'float32')) return undefined;
    const ks = run.plan.components;
    return {
      before: Math.max(...ks.map((k) => k.anchor[0])), after: Math.max(...ks.map((k) => k.size[0] - 1 - k.anchor[0])),
      // 'constant' pads each 1-D pass with cval, which a gathered plane would not reproduce: the ends are the slab's own.
      gather: p.border === 'constant' ? undefined : (z: number, depth: number) => borderIndex(z, depth, p.border),
    };
  },
  check: (p, input) => {
    const run = filterRun(p, input);
    if (input instanceof GpuImage) residentSlabs(input.ctx, input.shape, run.plan, p.border, run.outDtype);
  },
  outputOf: (p, img) => {
    const run = filterRun(p, img);
    return { shape: run.outShape, dtype: run.outDtype };
  },
  cpu: async (img, p, { pool, out }) => {
    const run = filterRun(p, img);
    const { data, impl, kernels } = await filterCpu(img, run, p, pool);
    const geometry = outGeometry(img.geometry, run.plan.components[0], p.border);
    const output = intoOut({ data, shape: run.outShape, channels: 1, dtype: run.outDtype, geometry }, out);
    return { output: { ...output, geometry }, kernels, extra: { impl } };
  },
  gpu: async (input, rec, p, _extra, opts) => {
    const { output, impl } = await filterResident(rec, input, filterRun(p, input), p, tuning(opts).schedule);
    return { output, extra: { impl } };
  },
  gpuHost: async (img, p, gpu, opts) => {
    const run = filterRun(p, img);
    const res = await filterGpuHost(gpu, img, run, p, tuning(opts));
    return { ...res, output: { ...intoOut(res.output, opts.out), geometry: outGeometry(img.geometry, run.plan.components[0], p.border) } };
  },
  // Saturated 8/16-bit results may round a float lying within rounding of a .5 tie differently: ±1.
  compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareWithin(a, b, 0, 1)),
  report: (r) => ({ json: { impl: r.impl }, text: [`  implementation: ${r.impl}`] }),
});

/** A named filter (filters.ts: sobel, prewitt, roberts, gauss, box, laplace) or a FilterPlan. */
async function filterFn(src: Image, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<Image>>;
async function filterFn(src: GpuImage, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
async function filterFn(src: Image | GpuImage, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<Image | GpuImage>>;
async function filterFn(src: Image | GpuImage, spec: string | FilterPlan, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  return filterOp(src, { ...opts, filter: spec });
}
/** The filter operation's public function (`filter.op`: its declaration, what the registry and the CLI use). */
export const filter = Object.assign(filterFn, { op: filterOp.op });

/**
 * Correlation with a kernel (scipy.ndimage.correlate, cv2.filter2D): out(o) = Σ_j k(j) · in(o + j − anchor), 2D
 * or 3D, float32 output (8/16-bit input promoted; `saturate` casts back). NaN/Inf in the data propagate to every
 * output whose window holds them under a nonzero weight (as scipy's correlate, which skips zero weights; the
 * named filters follow scipy's own rules: nonfinite.ts).
 */
export async function correlate(src: Image, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<Image>>;
export async function correlate(src: GpuImage, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
export async function correlate(src: Image | GpuImage, kernel: ConvKernel, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  return filterOp(src, { ...opts, filter: { name: 'kernel', components: [kernel], combine: 'single' } });
}

/** Convolution (scipy.ndimage.convolve): correlation with the kernel reversed along every axis. */
export async function convolve(src: Image, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<Image>>;
export async function convolve(src: GpuImage, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
export async function convolve(src: Image | GpuImage, kernel: ConvKernel, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  return filterOp(src, { ...opts, filter: { name: 'kernel', components: [flipKernel(kernel)], combine: 'single' } });
}

/** 3D Sobel/2D Sobel along one axis: filter(src, 'sobel-x' | 'sobel-y' | 'sobel-z'), or the magnitude with 'sobel'. */
export const sobel = (src: Image, axis: 'x' | 'y' | 'z' | 'magnitude' = 'magnitude', opts: FilterOptions = {}) =>
  filter(src, axis === 'magnitude' ? 'sobel' : `sobel-${axis}`, opts);
/** scipy.ndimage.gaussian_filter with sigma in voxels (x, y[, z]) — or a 'gauss:…mm' spec through filter(). */
export const gaussian = (src: Image, sigma: number | number[], opts: FilterOptions = {}) =>
  filter(src, `gauss:${[sigma].flat().join(',')}`, opts);

/**
 * A filter prepared for a resident input of `shape` on `ctx` — for callers that record it themselves (the
 * benchmark's back-to-back batches): `record` appends its kernels (float32 out) to a recording and returns the output.
 */
export function prepareFilter(ctx: GpuContext, shape: Shape, spec: string | FilterPlan, opts: FilterOptions = {}): { impl: string; record: (rec: Recording, input: GpuImage) => Promise<GpuImage> } {
  const p = paramsOf('filter', filterParams, { ...opts, filter: spec, saturate: false });
  const run = filterRun(p, { shape, dtype: 'float32' });
  const { conv, impls, impl } = gpuPlan(ctx, run.plan, p.impl, run.rank, opts.schedule);
  return { impl, record: (rec, input) => recordFilter(conv, rec, input, run.plan, run.geos, impls, p, 'float32', run.rank) };
}

import { BORDER_ALIASES, BORDER_MODES, type BorderMode } from '../../core/border.js';
import type { CpuPool } from '../../core/cpu/pool.js';
import { GpuLimitError, InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { allocPixels, asShape3D, checkOut, intoOut, type Geometry, type Image, type Shape } from '../../core/image.js';
import { resolveParams, type ParamSpec } from '../../core/params.js';
import { closeTimings, makeTimings, now, type KernelTime, type OpResult, type Timings } from '../../core/timings.js';
import { grayInput } from '../input.js';
import { inlinePool } from '../tasks.js';
import { boxSums, type BoxRounding } from './box.js';
import { castCpu, correlateCpu, magnitudeCpu } from './cpu.js';
import { parseFilter, type FilterPlan } from './filters.js';
import { CONV_IMPLS, ConvGpu, type ConvImpl, type ConvSchedule, type Volume } from './gpu.js';
import { denseKernel, flipKernel, kernelFromJson, type ConvKernel } from './kernel.js';
import { hasNonFinite, nonFiniteClasses, patchNonFinite } from './nonfinite.js';
import { NonFiniteGpu, type AcrossSlabs } from './nonfinite-gpu.js';
import { planSlabs, wholeGeometry, type Geo3, type Slab } from './plan.js';

export { CONV_IMPLS, DEFAULT_CONV_SCHEDULE, type ConvImpl, type ConvSchedule } from './gpu.js';
export { denseKernel, flipKernel, kernelFromJson, rankOneFactors, separableKernel, type ConvKernel } from './kernel.js';
export { gaussianWeights, parseFilter, type FilterPlan } from './filters.js';
export { BORDER_MODES, type BorderMode } from '../../core/border.js';

/** Declared once: CLI flags, help and validation come from here. */
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

export const filterParams: readonly ParamSpec[] = [
  { name: 'filter', kind: 'string', default: 'sobel', file: { prefix: 'kernel:', text: ['.json'], load: filterFromFile }, doc: 'sobel[-x|-y|-z] | prewitt[-x|-y|-z] | roberts | gauss:SIGMA[,SY[,SZ]][mm] | box:N[xM[xK]] | laplace | kernel:FILE (.npy or .json)' },
  { name: 'border', kind: 'enum', choices: [...BORDER_MODES, ...Object.keys(BORDER_ALIASES)], default: 'reflect', doc: 'reflect (dcba|abcd, scipy default) | reflect101 = mirror (dcb|abcd, OpenCV default) | replicate = nearest | wrap | constant (--cval) | valid (output shrinks)' },
  { name: 'cval', kind: 'float', default: 0, doc: 'value outside the image for --border constant' },
  { name: 'impl', kind: 'enum', choices: CONV_IMPLS, default: 'auto', doc: 'GPU implementation: naive (global memory) | tiled (workgroup memory) | separable (1-D pass per axis) | fused (separable, one pass) | auto' },
  { name: 'truncate', kind: 'float', default: 4, min: 0.5, max: 20, doc: 'Gaussian radius in sigmas (scipy truncate)' },
  { name: 'saturate', kind: 'bool', default: false, doc: 'round and saturate the float32 result back to an 8/16-bit input type (cv2 ddepth = -1)' },
];

export interface FilterOptions extends GpuRunOptions {
  /** @default 'reflect' (scipy.ndimage's default; OpenCV's is 'reflect101') */
  border?: BorderMode | keyof typeof BORDER_ALIASES;
  /** Value outside the image for border 'constant'. @default 0 */
  cval?: number;
  /** @default 'auto' */
  impl?: ConvImpl;
  /** Gaussian radius in sigmas. @default 4 */
  truncate?: number;
  /** Round and saturate back to the input's integer type. @default false (float32 output) */
  saturate?: boolean;
  gpu?: GpuContext;
  pool?: CpuPool;
  /** Largest buffer a slab may use (default: the device's binding/buffer limit); smaller values force slabs. */
  maxSlabBytes?: number;
  /** Tile shape of the tiled kernels (benchmarks). */
  schedule?: ConvSchedule;
}

/** The result of a filter: its output, its timings, and which implementation ran. */
export interface FilterResult<T> extends OpResult<T> {
  impl: string;
}

function borderOf(b: string | undefined): BorderMode {
  const m = (b && BORDER_ALIASES[b]) ?? b ?? 'reflect';
  if (!(BORDER_MODES as readonly string[]).includes(m)) throw new InvalidArgumentError(`border must be one of ${BORDER_MODES.join('|')} (or scipy's mirror/nearest), got ${b}`);
  return m as BorderMode;
}

function rankOf(shape: Shape): 2 | 3 {
  return shape.length === 3 && shape[0] > 1 ? 3 : 2;
}

/** Geometry of the output: the input's, moved by the anchor for 'valid' (output voxel 0 lies at input voxel anchor). */
function outGeometry(g: Geometry | undefined, k: ConvKernel, mode: BorderMode): Geometry | undefined {
  if (!g || mode !== 'valid') return g;
  const shift = [k.anchor[2], k.anchor[1], k.anchor[0]];
  const origin = g.origin.map((o, r) => o + [0, 1, 2].reduce((s, c) => s + g.direction[r * 3 + c] * g.spacing[c] * shift[c], 0)) as Geometry['origin'];
  return { ...g, origin };
}

/**
 * Correlation with a kernel (scipy.ndimage.correlate, cv2.filter2D): out(o) = Σ_j k(j) · in(o + j − anchor), 2D
 * or 3D, float32 output (8/16-bit input promoted; `saturate` casts back). NaN/Inf in the data propagate to every
 * output whose window holds them under a nonzero weight (as scipy's correlate, which skips zero weights; the
 * named filters follow scipy's own rules: nonfinite.ts).
 */
export async function correlate(src: Image, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<Image>>;
export async function correlate(src: GpuImage, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
export async function correlate(src: Image | GpuImage, kernel: ConvKernel, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  return runFilter(src, { name: 'kernel', components: [kernel], combine: 'single' }, opts) as Promise<FilterResult<Image | GpuImage>>;
}

/** Convolution (scipy.ndimage.convolve): correlation with the kernel reversed along every axis. */
export async function convolve(src: Image, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<Image>>;
export async function convolve(src: GpuImage, kernel: ConvKernel, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
export async function convolve(src: Image | GpuImage, kernel: ConvKernel, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  return runFilter(src, { name: 'kernel', components: [flipKernel(kernel)], combine: 'single' }, opts) as Promise<FilterResult<Image | GpuImage>>;
}

/** A named filter (filters.ts: sobel, prewitt, roberts, gauss, box, laplace) or a FilterPlan. */
export async function filter(src: Image, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<Image>>;
export async function filter(src: GpuImage, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<GpuImage>>;
export async function filter(src: Image | GpuImage, spec: string | FilterPlan, opts?: FilterOptions): Promise<FilterResult<Image | GpuImage>>;
export async function filter(src: Image | GpuImage, spec: string | FilterPlan, opts: FilterOptions = {}): Promise<FilterResult<Image | GpuImage>> {
  const plan = typeof spec === 'string'
    ? parseFilter(spec, { rank: rankOf(src.shape), geometry: src instanceof GpuImage ? undefined : src.geometry, truncate: opts.truncate })
    : spec;
  return runFilter(src, plan, opts) as Promise<FilterResult<Image | GpuImage>>;
}

/** 3D Sobel/2D Sobel along one axis: filter(src, 'sobel-x' | 'sobel-y' | 'sobel-z'), or the magnitude with 'sobel'. */
export const sobel = (src: Image, axis: 'x' | 'y' | 'z' | 'magnitude' = 'magnitude', opts: FilterOptions = {}) =>
  filter(src, axis === 'magnitude' ? 'sobel' : `sobel-${axis}`, opts);
/** scipy.ndimage.gaussian_filter with sigma in voxels (x, y[, z]) — or a 'gauss:…mm' spec through filter(). */
export const gaussian = (src: Image, sigma: number | number[], opts: FilterOptions = {}) =>
  filter(src, `gauss:${[sigma].flat().join(',')}`, opts);

interface Resolved {
  mode: BorderMode;
  cval: number;
  impl: ConvImpl;
  saturate: boolean;
}

/** The options every filter call checks against the declared parameters. */
function resolveOptions(opts: FilterOptions): Resolved {
  const p = resolveParams<{ border: string; cval: number; impl: ConvImpl; saturate: boolean }>('filter', filterParams.filter((s) => s.name !== 'filter' && s.name !== 'truncate'), {
    border: opts.border, cval: opts.cval, impl: opts.impl, saturate: opts.saturate,
  });
  return { mode: borderOf(p.border), cval: p.cval, impl: p.impl, saturate: p.saturate };
}

/** The device side of a filter: its recorder and the implementation each kernel resolves to on this device. */
function gpuPlan(ctx: GpuContext, plan: FilterPlan, r: Resolved, rank: 2 | 3, schedule?: ConvSchedule): { conv: ConvGpu; impls: Exclude<ConvImpl, 'auto'>[]; impl: string } {
  const conv = new ConvGpu(ctx, schedule);
  const impls = plan.components.map((k) => conv.resolve(r.impl, k, rank === 2));
  return { conv, impls, impl: impls.join('+') };
}

async function runFilter(src: Image | GpuImage, asked: FilterPlan, opts: FilterOptions): Promise<FilterResult<Image | GpuImage>> {
  const t0 = now();
  const r = resolveOptions(opts);
  const gray = grayInput(src, 'filter', ['uint8', 'uint16', 'float32']);
  const rank = rankOf(gray.shape);
  const shape = asShape3D(gray.shape);
  for (const k of asked.components) {
    if (rank === 2 && k.size[0] > 1) throw new InvalidArgumentError(`${asked.name}: a 3D kernel (${k.size.join('×')}) needs a volume; the image is 2D`);
  }
  const geos = asked.components.map((k) => wholeGeometry(shape, k, r.mode));
  const outShape = geos[0].map((g) => g.nOut) as [number, number, number];
  if (geos.some((g) => g.some((a, i) => a.nOut !== outShape[i]))) throw new InvalidArgumentError(`${asked.name}: its kernels give outputs of different sizes with border 'valid'`);
  const outDtype = r.saturate && gray.dtype !== 'float32' ? gray.dtype : 'float32';
  const finalShape = (rank === 2 ? outShape.slice(1) : outShape) as Shape;
  // A 16-bit box (an 8-bit one on a 2D image) rounded back to its type runs as window sums rounded as cv2.blur does (box.ts).
  const sums = boxSums(asked, gray.dtype, outDtype, r.mode === 'constant' ? r.cval : 0, outShape[2], rank === 2);
  const plan = sums?.plan ?? asked;
  const box = sums?.rounding;

  if (gray instanceof GpuImage) {
    const { conv, impls, impl } = gpuPlan(gray.ctx, plan, r, rank, opts.schedule);
    const spec = residentSlabs(gray.ctx, gray.shape, plan, r.mode, outDtype);
    const res = await runGpu(gray.ctx, gray, 'filter', opts, (input, rec) => {
      const across = input.dtype === 'float32' ? NonFiniteGpu.acrossSlabs(rec, input.shape, slabsFor(rec.ctx, input.shape, input.dtype, spec), plan.nonFinite) : undefined;
      return recordInSlabs(rec, input, spec, (slab, at) =>
        recordFilter(conv, rec, slab, plan, plan.components.map((k) => wholeGeometry(asShape3D(slab.shape), k, r.mode)), impls, r, outDtype, rank, box, across?.(at)));
    });
    return { ...res, impl } as FilterResult<GpuImage>;
  }
  if (opts.out) checkOut(opts.out, { data: opts.out.data, shape: finalShape, channels: 1, dtype: outDtype });
  const geometry = outGeometry(gray.geometry, plan.components[0], r.mode);
  if (opts.gpu) {
    const res = await filterGpuHost(opts.gpu, gray, plan, geos, r, outDtype, rank, opts, box);
    return { ...res, output: { ...intoOut(res.output, opts.out), geometry }, timings: closeTimings(res.timings, t0) };
  }
  const pool = opts.pool ?? inlinePool;
  const separable = r.impl === 'auto' || r.impl === 'separable' || r.impl === 'fused';
  const tk = now();
  const parts: Float32Array[] = [];
  for (const k of plan.components) parts.push((await correlateCpu(gray.data, shape, k, r.mode, r.cval, separable, pool)).data);
  if (plan.nonFinite && gray.data instanceof Float32Array && hasNonFinite(gray.data)) {
    plan.components.forEach((k, c) => patchNonFinite(parts[c], nonFiniteClasses(gray.data as Float32Array, shape, k, geos[c], r.mode, plan.nonFinite!)));
  }
  let data: Float32Array | Uint8Array | Uint16Array = plan.combine === 'magnitude' ? await magnitudeCpu(parts, pool) : parts[0];
  if (outDtype !== 'float32') data = await castCpu(data as Float32Array, outDtype, pool, box);
  const kernels: KernelTime[] = [{ name: `filter.${plan.name}`, ms: now() - tk }];
  const output = intoOut({ data, shape: finalShape, channels: 1, dtype: outDtype, geometry }, opts.out);
  const impl = plan.components.map((k) => (separable && k.factors ? 'separable' : 'dense')).join('+');
  return { output: { ...output, geometry }, impl, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels, kernelSource: 'cpu', total: now() - t0 }) };
}

/**
 * A resident input beyond one storage binding (a pipeline's image) runs on the device in row (plane) slabs with
 * the kernels' reach as halo (core/gpu/slabs.ts; host images take the host slabs of filterGpuHost). Checked
 * before any work: 'valid' shrinks the output, which slabs of the input's shape cannot hold, and 'wrap' reads the
 * far side of the image, which a slab does not hold: those must fit whole.
 */
function residentSlabs(ctx: GpuContext, shape: Shape, plan: FilterPlan, mode: BorderMode, outDtype: 'uint8' | 'uint16' | 'float32'): SlabSpec {
  const s3 = asShape3D(shape);
  const axis = s3[0] > 1 ? 0 : 1;
  const halo = Math.max(...plan.components.map((k) => Math.max(k.anchor[axis], k.size[axis] - 1 - k.anchor[axis])));
  // The widest buffers are the float32 results and temporaries.
  const spec: SlabSpec = { halo, unitBytes: (axis === 0 ? s3[1] * s3[2] : s3[2]) * 4, outDtype, what: 'filter' };
  if (slabsFor(ctx, shape, outDtype, spec).length > 1 && (mode === 'valid' || mode === 'wrap')) {
    throw new GpuLimitError(`filter --border ${mode}: this ${shape.join('×')} resident image exceeds one GPU storage binding, and ${mode === 'valid' ? 'a shrunk output' : 'a border read from the far side of the image'} cannot be computed in slabs on the device; filter the host image (split there) or use --device cpu`);
  }
  return spec;
}

/**
 * A filter prepared for a resident input of `shape` on `ctx` — for callers that record it themselves (the
 * benchmark's back-to-back batches): `record` appends its kernels to a recording and returns the output.
 */
export function prepareFilter(ctx: GpuContext, shape: Shape, spec: string | FilterPlan, opts: FilterOptions = {}): { impl: string; record: (rec: Recording, input: GpuImage) => Promise<GpuImage> } {
  const rank = rankOf(shape);
  const plan = typeof spec === 'string' ? parseFilter(spec, { rank, truncate: opts.truncate }) : spec;
  const r = resolveOptions({ ...opts, saturate: false });
  const geos = plan.components.map((k) => wholeGeometry(asShape3D(shape), k, r.mode));
  const { conv, impls, impl } = gpuPlan(ctx, plan, r, rank, opts.schedule);
  return { impl, record: (rec, input) => recordFilter(conv, rec, input, plan, geos, impls, r, 'float32', rank) };
}

/** Records the filter's kernels (each component, then the magnitude and the cast) on a resident input. */
async function recordFilter(
  conv: ConvGpu, rec: Recording, input: GpuImage, plan: FilterPlan, geos: Geo3[], impls: Exclude<ConvImpl, 'auto'>[], r: Resolved, outDtype: string, rank: 2 | 3,
  box?: BoxRounding, across?: AcrossSlabs,
): Promise<GpuImage> {
  const src: Volume = { buffer: input.buffer, dtype: input.dtype, shape: [geos[0][0].nIn, geos[0][1].nIn, geos[0][2].nIn] };
  const single = plan.combine === 'single' && outDtype === 'float32';
  const parts: Volume[] = [];
  // NaN and ±inf as scipy spreads them, patched into each component (float32 input only; nonfinite.ts).
  const nonFinite = plan.nonFinite && src.dtype === 'float32' ? await NonFiniteGpu.scan(conv.ctx, rec, src, across) : undefined;
  for (let c = 0; c < plan.components.length; c++) {
    parts.push(await conv.apply(rec, src, plan.components[c], geos[c], r.mode, r.cval, impls[c], single));
    await nonFinite?.patch(rec, src, parts[c], plan.components[c], geos[c], r.mode, plan.nonFinite!);
  }
  let out = plan.combine === 'magnitude' ? await conv.magnitude(rec, parts, outDtype === 'float32') : parts[0];
  if (outDtype !== 'float32') out = await conv.cast(rec, out, outDtype as 'uint8' | 'uint16', box);
  return ConvGpu.toImage(conv.ctx, out, rank);
}

/**
 * A host image on the GPU: whole when the input and the float32 results fit the device's buffer limits, else
 * in slabs along z (volumes) or y (2D images) with gathered halo planes; timings are summed over the slabs.
 */
async function filterGpuHost(ctx: GpuContext, img: Image, plan: FilterPlan, geos: Geo3[], r: Resolved, outDtype: 'uint8' | 'uint16' | 'float32', rank: 2 | 3, opts: FilterOptions, box?: BoxRounding): Promise<FilterResult<Image>> {
  const { conv, impls, impl } = gpuPlan(ctx, plan, r, rank, opts.schedule);
  const limit = Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize, opts.maxSlabBytes ?? Infinity);
  const shape = asShape3D(img.shape);
  const inBytes = img.data.byteLength, outBytes = geos[0][0].nOut * geos[0][1].nOut * geos[0][2].nOut * 4;
  const run = (input: Image, g: Geo3[], out?: Image, view?: boolean) => runGpu(ctx, input, 'filter', { profile: opts.profile, out, view }, (x, rec) => recordFilter(conv, rec, x, plan, g, impls, r, outDtype, rank, box)) as Promise<OpResult<Image>>;
  // Whole: downloaded straight into the caller's `out` when given (no second copy), or handed over as a view of
  // the mapped readback memory (`view`). Slabs are assembled in a host array.
  if (inBytes <= limit && outBytes <= limit) return { ...(await run(img, geos, opts.out, opts.view && !opts.out)), impl };
  const axis: 0 | 1 = shape[0] > 1 ? 0 : 1;
  const planeIn = (inBytes / shape[axis]), planeOut = outBytes / geos[0][axis].nOut;
  const slabs = planSlabs(geos, plan.components, r.mode, axis, planeIn, planeOut, limit);
  const outShape = geos[0].map((g) => g.nOut);
  const out = allocPixels(outDtype, outShape[0] * outShape[1] * outShape[2]);
  const total: Timings = { backend: 'gpu', host: 0, upload: 0, kernels: [], kernelSource: 'timestamp', download: 0, total: 0, slabs: slabs.length };
  for (const slab of slabs) {
    const res = await run(gatherSlab(img, shape, axis, slab), slab.geos);
    const elemsPerPlane = axis === 0 ? outShape[1] * outShape[2] : outShape[2];
    out.set(res.output.data, slab.s0 * elemsPerPlane);
    accumulate(total, res.timings);
  }
  const finalShape = (rank === 2 ? outShape.slice(1) : outShape) as Shape;
  // A running sum crosses slabs: scipy's box classes come from the whole lines, on the host.
  if (plan.nonFinite === 'running' && img.data instanceof Float32Array && hasNonFinite(img.data)) {
    patchNonFinite(out as Float32Array, nonFiniteClasses(img.data, shape, plan.components[0], geos[0], r.mode, 'running'));
  }
  return { output: { data: out, shape: finalShape, channels: 1, dtype: outDtype }, impl, timings: total };
}

/** The slab's input: its planes (rows for a 2D image) copied in order, border planes by the rule, cval planes for −1. */
function gatherSlab(img: Image, shape: [number, number, number], axis: 0 | 1, slab: Slab): Image {
  const plane = axis === 0 ? shape[1] * shape[2] : shape[2];
  const data = allocPixels(img.dtype, slab.planes.length * plane);
  slab.planes.forEach((p, i) => {
    // A −1 plane stays zero: kernels read cval for planes outside the slab's real range [lo, hi).
    if (p >= 0) data.set(img.data.subarray(p * plane, (p + 1) * plane), i * plane);
  });
  const s: Shape = axis === 0 ? [slab.planes.length, shape[1], shape[2]] : [1, slab.planes.length, shape[2]];
  return { data, shape: s, channels: 1, dtype: img.dtype };
}

function accumulate(t: Timings, s: Timings): void {
  t.upload += s.upload;
  t.download += s.download;
  t.host += s.host;
  t.total += s.total;
  t.kernelSource = s.kernelSource;
  for (const k of s.kernels) {
    const e = t.kernels.find((x) => x.name === k.name);
    if (e) e.ms += k.ms;
    else t.kernels.push({ ...k });
  }
}

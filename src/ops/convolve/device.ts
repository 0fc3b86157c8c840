import type { BorderMode } from '../../core/border.js';
import { CPU_PATH, GpuLimitError, optionRef } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import type { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { allocPixels, asShape3D, type Image, type Shape } from '../../core/image.js';
import type { OpResult, Timings } from '../../core/timings.js';
import type { BoxRounding } from './box.js';
import type { FilterPlan } from './filters.js';
import { ConvGpu, type ConvImpl, type ConvSchedule, type Volume } from './gpu.js';
import { hasNonFinite, nonFiniteClasses, patchNonFinite } from './nonfinite.js';
import { NonFiniteGpu, type AcrossSlabs } from './nonfinite-gpu.js';
import { planSlabs, wholeGeometry, type Geo3, type Slab } from './plan.js';
import type { FilterRun } from './run.js';

/** The border and its value: what the kernels need of the parameters. */
interface Border {
  border: BorderMode;
  cval: number;
}

/** The device side of a filter: its recorder and the implementation each kernel resolves to on this device (checked). */
export function gpuPlan(ctx: GpuContext, plan: FilterPlan, impl: ConvImpl, rank: 2 | 3, schedule?: ConvSchedule): { conv: ConvGpu; impls: Exclude<ConvImpl, 'auto'>[]; impl: string } {
  const conv = new ConvGpu(ctx, schedule);
  const impls = plan.components.map((k) => conv.resolve(impl, k, rank === 2));
  return { conv, impls, impl: impls.join('+') };
}

/**
 * A resident input beyond one storage binding (a pipeline's image) runs on the device in row (plane) slabs with
 * the kernels' reach as halo (core/gpu/slabs.ts; host images take the host slabs of filterGpuHost). Checked
 * before any work: 'valid' shrinks the output, which slabs of the input's shape cannot hold, and 'wrap' reads the
 * far side of the image, which a slab does not hold: those must fit whole.
 */
export function residentSlabs(ctx: GpuContext, shape: Shape, plan: FilterPlan, mode: BorderMode, outDtype: 'uint8' | 'uint16' | 'float32'): SlabSpec {
  const s3 = asShape3D(shape);
  const axis = s3[0] > 1 ? 0 : 1;
  const halo = Math.max(...plan.components.map((k) => Math.max(k.anchor[axis], k.size[axis] - 1 - k.anchor[axis])));
  // The widest buffers are the float32 results and temporaries.
  const spec: SlabSpec = { halo, unitBytes: (axis === 0 ? s3[1] * s3[2] : s3[2]) * 4, outDtype, what: 'filter' };
  if (slabsFor(ctx, shape, outDtype, spec).length > 1 && (mode === 'valid' || mode === 'wrap')) {
    throw new GpuLimitError(`filter ${optionRef('border', mode)}: this ${shape.join('×')} resident image exceeds one GPU storage binding, and ${mode === 'valid' ? 'a shrunk output' : 'a border read from the far side of the image'} cannot be computed in slabs on the device; filter the host image (split there) or use ${CPU_PATH}`);
  }
  return spec;
}

/** Records the filter on a resident input, in device slabs where it exceeds one binding; returns the output and the implementation. */
export async function filterResident(rec: Recording, input: GpuImage, run: FilterRun, p: Border & { impl: ConvImpl }, schedule?: ConvSchedule): Promise<{ output: GpuImage; impl: string }> {
  const { plan, rank, outDtype, box } = run;
  const { conv, impls, impl } = gpuPlan(input.ctx, plan, p.impl, rank, schedule);
  const spec = residentSlabs(input.ctx, input.shape, plan, p.border, outDtype);
  const across = input.dtype === 'float32' ? NonFiniteGpu.acrossSlabs(rec, input.shape, slabsFor(rec.ctx, input.shape, input.dtype, spec), plan.nonFinite) : undefined;
  const output = await recordInSlabs(rec, input, spec, (slab, at) =>
    recordFilter(conv, rec, slab, plan, plan.components.map((k) => wholeGeometry(asShape3D(slab.shape), k, p.border)), impls, p, outDtype, rank, box, across?.(at)));
  return { output, impl };
}

/** Records the filter's kernels (each component, then the magnitude and the cast) on a resident input. */
export async function recordFilter(
  conv: ConvGpu, rec: Recording, input: GpuImage, plan: FilterPlan, geos: Geo3[], impls: Exclude<ConvImpl, 'auto'>[], p: Border, outDtype: string, rank: 2 | 3,
  box?: BoxRounding, across?: AcrossSlabs,
): Promise<GpuImage> {
  const src: Volume = { buffer: input.buffer, dtype: input.dtype, shape: [geos[0][0].nIn, geos[0][1].nIn, geos[0][2].nIn] };
  const single = plan.combine === 'single' && outDtype === 'float32';
  const parts: Volume[] = [];
  // NaN and ±inf as scipy spreads them, patched into each component (float32 input only; nonfinite.ts).
  // The tiled kernels (tiled, fused) read every input value: the first one scans for them (no pass of its own).
  const byKernel = impls[0] === 'tiled' || impls[0] === 'fused';
  const nonFinite = plan.nonFinite && src.dtype === 'float32' ? await NonFiniteGpu.scan(conv.ctx, rec, src, across, byKernel) : undefined;
  for (let c = 0; c < plan.components.length; c++) {
    parts.push(await conv.apply(rec, src, plan.components[c], geos[c], p.border, p.cval, impls[c], single, c === 0 && byKernel ? nonFinite?.flag : undefined));
    await nonFinite?.patch(rec, src, parts[c], plan.components[c], geos[c], p.border, plan.nonFinite!);
  }
  let out = plan.combine === 'magnitude' ? await conv.magnitude(rec, parts, outDtype === 'float32') : parts[0];
  if (outDtype !== 'float32') out = await conv.cast(rec, out, outDtype as 'uint8' | 'uint16', box);
  return ConvGpu.toImage(conv.ctx, out, rank);
}

/** Where a host image's filter runs on the GPU: the run options, and a smaller slab budget (tests, benchmarks). */
export interface HostGpuOptions extends GpuRunOptions {
  maxSlabBytes?: number;
  schedule?: ConvSchedule;
}

/**
 * A host image on the GPU: whole when the input and the float32 results fit the device's buffer limits, else
 * in slabs along z (volumes) or y (2D images) with gathered halo planes; timings are summed over the slabs.
 */
export async function filterGpuHost(ctx: GpuContext, img: Image, run: FilterRun, p: Border & { impl: ConvImpl }, opts: HostGpuOptions): Promise<OpResult<Image> & { impl: string }> {
  const { plan, geos, rank, outDtype, box } = run;
  const { conv, impls, impl } = gpuPlan(ctx, plan, p.impl, rank, opts.schedule);
  const limit = Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize, opts.maxSlabBytes ?? Infinity);
  const shape = asShape3D(img.shape);
  const inBytes = img.data.byteLength, outBytes = geos[0][0].nOut * geos[0][1].nOut * geos[0][2].nOut * 4;
  const record = (input: Image, g: Geo3[], out?: Image, view?: boolean) => runGpu(ctx, input, 'filter', { profile: opts.profile, out, view }, (x, rec) => recordFilter(conv, rec, x, plan, g, impls, p, outDtype, rank, box)) as Promise<OpResult<Image>>;
  // Whole: downloaded straight into the caller's `out` when given (no second copy), or handed over as a view of
  // the mapped readback memory (`view`). Slabs are assembled in a host array.
  if (inBytes <= limit && outBytes <= limit) return { ...(await record(img, geos, opts.out, opts.view && !opts.out)), impl };
  const axis: 0 | 1 = shape[0] > 1 ? 0 : 1;
  const planeIn = (inBytes / shape[axis]), planeOut = outBytes / geos[0][axis].nOut;
  const slabs = planSlabs(geos, plan.components, p.border, axis, planeIn, planeOut, limit);
  const outShape = geos[0].map((g) => g.nOut);
  const out = allocPixels(outDtype, outShape[0] * outShape[1] * outShape[2]);
  const total: Timings = { backend: 'gpu', host: 0, upload: 0, kernels: [], kernelSource: 'timestamp', download: 0, total: 0, slabs: slabs.length };
  for (const slab of slabs) {
    const res = await record(gatherSlab(img, shape, axis, slab), slab.geos);
    const elemsPerPlane = axis === 0 ? outShape[1] * outShape[2] : outShape[2];
    out.set(res.output.data, slab.s0 * elemsPerPlane);
    accumulate(total, res.timings);
  }
  // A running sum crosses slabs: scipy's box classes come from the whole lines, on the host.
  if (plan.nonFinite === 'running' && img.data instanceof Float32Array && hasNonFinite(img.data)) {
    patchNonFinite(out as Float32Array, nonFiniteClasses(img.data, shape, plan.components[0], geos[0], p.border, 'running'));
  }
  return { output: { data: out, shape: run.outShape, channels: 1, dtype: outDtype }, impl, timings: total };
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

import { CPU_PATH, GpuLimitError } from '../errors.js';
import { asShape3D, bytesPerElement, type Dtype, type Shape } from '../image.js';
import { fmtBytes, alignUp, type GpuContext } from './context.js';
import { GpuImage } from './gpu-image.js';
import { maxBinding } from './limits.js';
import type { Recording } from './recording.js';
import { acquireStorage } from './transfer.js';

/**
 * Neighbourhood operations on images beyond one storage binding: the image is cut into slabs of whole rows (2D)
 * or planes (volumes), each with `halo` extra rows/planes on both sides, copied into a buffer of its own; the
 * operation runs on each slab as if it were the whole image, and only the slab's own rows are copied into the
 * output. Rows at least `halo` away from a cut never see it, so the output equals the whole image's (dask's
 * map_overlap). planRowSlabs is the one slab planner: the filters' host slabs (ops/convolve/plan.ts planSlabs) take
 * their cuts from it too, and gather their halo planes through the border rule instead of copying a clipped range.
 */

/** One slab: output units (rows or planes) [y0, y1), computed from the input units [in0, in1) copied for it. */
export interface RowSlab {
  y0: number;
  y1: number;
  in0: number;
  in1: number;
}

/** What an operation needs of its slabs. */
export interface SlabSpec {
  /** Rows (2D) or planes (volumes) the operation reads beyond an output one, on either side. */
  halo: number;
  /** Bytes of the operation's largest buffer per row (2D) or plane (volume): what must fit one binding. */
  unitBytes: number;
  /** The output's element type. @default the input's */
  outDtype?: Dtype;
  /** Names the work in errors. */
  what: string;
}

/** The unit slabs are cut in: rows of a 2D image, planes of a volume; and its pixel count. */
function units(shape: Shape): { count: number; pixels: number; volume: boolean } {
  const [d, h, w] = asShape3D(shape);
  return d > 1 ? { count: d, pixels: h * w, volume: true } : { count: h, pixels: w, volume: false };
}

/**
 * Cuts `count` units into slabs whose input (own units plus halos, clipped to the image) holds at most
 * `maxUnits` units, each slab starting at a multiple of `align` units. One slab when everything fits.
 */
export function planRowSlabs(count: number, halo: number, maxUnits: number, align: number): RowSlab[] | undefined {
  if (count <= maxUnits) return [{ y0: 0, y1: count, in0: 0, in1: count }];
  // Own units per slab: what is left of the budget after both halos and the rounding down of its start.
  const own = Math.floor((maxUnits - 2 * halo - (align - 1)) / align) * align;
  if (own < align) return undefined;
  const slabs: RowSlab[] = [];
  const down = (y: number) => Math.max(0, Math.floor(y / align) * align);
  // A slab holds at least a whole window (2·halo + 1 units) where the image does: a short last slab is widened
  // towards the image (operations may refuse windows larger than their input).
  const least = Math.min(count, 2 * halo + 1);
  for (let y0 = 0; y0 < count; y0 += own) {
    const y1 = Math.min(count, y0 + own);
    let in0 = down(y0 - halo), in1 = Math.min(count, y1 + halo);
    if (in1 - in0 < least) {
      in1 = Math.min(count, in0 + least);
      in0 = down(in1 - least);
    }
    slabs.push({ y0, y1, in0, in1 });
  }
  return slabs;
}

/**
 * The slabs an operation on an image of `shape` runs in on `ctx` (one when it fits), or a GpuLimitError — before
 * any work — where even one unit with its halos does not fit a binding.
 */
export function slabsFor(ctx: GpuContext, shape: Shape, inDtype: Dtype, spec: SlabSpec): RowSlab[] {
  const u = units(shape);
  const outDtype = spec.outDtype ?? inDtype;
  const limit = maxBinding(ctx);
  // Copies move multiples of 4 bytes from 4-byte offsets: slab starts fall on units whose byte offsets are so.
  const align = unitAlignment(shape, inDtype, outDtype);
  const slabs = planRowSlabs(u.count, spec.halo, Math.floor(limit / spec.unitBytes), align);
  if (!slabs) {
    const unit = u.volume ? 'plane' : 'row';
    throw new GpuLimitError(`${spec.what}: a slab of this ${shape.join('×')} image needs ${2 * spec.halo + align} ${unit}s of ${fmtBytes(spec.unitBytes)} (its halo reaches ${spec.halo} ${unit}s), more than this adapter binds (${fmtBytes(limit)}); use a smaller element/window or ${CPU_PATH}`);
  }
  return slabs;
}

/**
 * Input units [in0, in1) of a resident image copied into a buffer of their own (alive until the recording is
 * submitted), as an image of that many rows (2D) or planes (volumes). in0 must start on a 4-byte boundary.
 */
export function copyUnits(rec: Recording, input: GpuImage, in0: number, in1: number, what: string): GpuImage {
  const u = units(input.shape);
  const unit = u.pixels * bytesPerElement(input.dtype) * input.channels;
  const bytes = (in1 - in0) * unit;
  const buf = rec.storage(bytes, `${what} slab`);
  rec.copyRange(input.buffer, in0 * unit, buf, 0, alignUp(bytes, 4));
  const [, h, w] = asShape3D(input.shape);
  const n = in1 - in0;
  const shape: Shape = u.volume ? [n, h, w] : input.shape.length === 3 ? [1, n, w] : [n, w];
  return new GpuImage(rec.ctx, buf, shape, input.channels, input.dtype);
}

/** The smallest number of units whose bytes, in either dtype, are a multiple of 4 (copies need 4-byte offsets). */
export function unitAlignment(shape: Shape, ...dtypes: Dtype[]): number {
  const { pixels } = units(shape);
  let align = 1;
  while (dtypes.some((d) => (align * pixels * bytesPerElement(d)) % 4)) align *= 2;
  return align;
}

/**
 * Records `body` over a resident image: directly when the image fits (the usual case, nothing changes), else
 * slab by slab (slabsFor) into one output image. `body` gets each slab as a GpuImage, and where it lies, and
 * returns its result (a pooled image of the slab's shape).
 */
export async function recordInSlabs(rec: Recording, input: GpuImage, spec: SlabSpec, body: (slab: GpuImage, at: RowSlab) => Promise<GpuImage>): Promise<GpuImage> {
  const slabs = slabsFor(rec.ctx, input.shape, input.dtype, spec);
  if (slabs.length === 1) return body(input, slabs[0]);
  const u = units(input.shape);
  const outDtype = spec.outDtype ?? input.dtype;
  const outUnit = u.pixels * bytesPerElement(outDtype);
  const out = acquireStorage(rec.ctx, u.count * outUnit, `${spec.what} output`);
  rec.split(slabs.length);
  for (const s of slabs) {
    const res = await body(copyUnits(rec, input, s.in0, s.in1, spec.what), s);
    rec.copyRange(res.buffer, (s.y0 - s.in0) * outUnit, out, s.y0 * outUnit, alignUp((s.y1 - s.y0) * outUnit, 4));
    // Pooled again only once this recording is submitted: the copy above still reads it.
    rec.retain(res.buffer);
  }
  return new GpuImage(rec.ctx, out, [...input.shape] as Shape, 1, outDtype);
}

import type { BorderMode } from '../../core/border.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { f32ToBits, type Recording } from '../../core/gpu/recording.js';
import type { RowSlab } from '../../core/gpu/slabs.js';
import { asShape3D, type Shape } from '../../core/image.js';
import { CountParams, Geo } from './conv.wgsl.js';
import { geoParams, type Volume } from './gpu.js';
import type { ConvKernel } from './kernel.js';
import { lineStrides, type NonFiniteRule } from './nonfinite.js';
import { LineParams, patchWgsl, runningWgsl, scanWgsl, tapsWgsl } from './nonfinite.wgsl.js';
import type { Geo3 } from './plan.js';

/** Workgroups of the grid-stride kernels: enough to fill a GPU, few enough that an early return costs nothing. */
const MAX_GROUPS = 1024;

/**
 * A resident image filtered in slabs along `axis` (core/gpu/slabs.ts): a running sum along that axis crosses
 * them, so one slab's running pass hands the first NaN/±inf positions of each line to the next (`state`), and all
 * slabs share one scan flag (a NaN in an earlier slab arms the later ones).
 */
export interface AcrossSlabs {
  flag: GPUBuffer;
  state: GPUBuffer;
  axis: 0 | 1;
  /** Rows (planes) of the whole image along the axis; this slab's first one; the next slab's first one. */
  total: number;
  start: number;
  next?: number;
}

/**
 * Records scipy's spreading of NaN and ±inf into filter results on the device (nonfinite.ts, nonfinite.wgsl.ts):
 * `scan` once per input, then `patch` per component result. Only float32 inputs can hold them.
 */
export class NonFiniteGpu {
  private constructor(private readonly ctx: GpuContext, readonly flag: GPUBuffer, private readonly across?: AcrossSlabs) {}

  /**
   * What the slabs of a box filter (rule 'running') of a float32 image of `shape` share, per slab: undefined for
   * one slab or other filters.
   */
  static acrossSlabs(rec: Recording, shape: Shape, slabs: RowSlab[], rule: NonFiniteRule | undefined): ((at: RowSlab) => AcrossSlabs) | undefined {
    if (rule !== 'running' || slabs.length < 2) return undefined;
    const [d, h, w] = asShape3D(shape);
    const axis = d > 1 ? 0 : 1;
    const flag = rec.storage(16, 'non-finite flag');
    const state = rec.storage(16 * (axis === 0 ? h * w : w), 'non-finite slab state');
    rec.clear(flag);
    rec.clear(state);
    return (at) => {
      const i = slabs.findIndex((s) => s.y0 === at.y0);
      return { flag, state, axis, total: axis === 0 ? d : h, start: at.in0, next: slabs[i + 1]?.in0 };
    };
  }

  /**
   * Scans `src` (float32) into a fresh flag, or into the slabs' shared one; with `byKernel`, no scan is recorded:
   * the first filter kernel sets `flag` on the loads it makes anyway (tiledWgsl's `scan`), before any patch reads it.
   */
  static async scan(ctx: GpuContext, rec: Recording, src: Volume, across?: AcrossSlabs, byKernel = false): Promise<NonFiniteGpu> {
    const n = src.shape[0] * src.shape[1] * src.shape[2];
    let flag = across?.flag;
    if (!flag) {
      flag = rec.storage(16, 'non-finite flag');
      rec.clear(flag);
    }
    if (byKernel) return new NonFiniteGpu(ctx, flag, across);
    const pipe = await ctx.pipeline('convolve-nonfinite-scan', scanWgsl, 'scan');
    rec.dispatch('convolve.nonfinite.scan', pipe, { src: src.buffer, flag, P: rec.uniform(CountParams, { n }) }, ...grid1d(ctx, Math.min(MAX_GROUPS, Math.ceil(n / 256))));
    return new NonFiniteGpu(ctx, flag, across);
  }

  private groups(items: number): [number, number] {
    return grid1d(this.ctx, Math.min(MAX_GROUPS, Math.ceil(items / 256)));
  }

  /** Writes scipy's non-finite values into `out`, the result of kernel `k` over `src` with geometry `geo`. */
  async patch(rec: Recording, src: Volume, out: Volume, k: ConvKernel, geo: Geo3, mode: BorderMode, rule: NonFiniteRule): Promise<void> {
    const total = geo[0].nOut * geo[1].nOut * geo[2].nOut;
    if (rule === 'taps') {
      const taps: number[] = [];
      const [kz, ky, kx] = k.size;
      for (let z = 0, i = 0; z < kz; z++) for (let y = 0; y < ky; y++) for (let x = 0; x < kx; x++, i++) taps.push(x, y, z, f32ToBits(k.weights[i]));
      const pipe = await this.ctx.pipeline('convolve-nonfinite-taps', tapsWgsl(mode), 'taps_patch');
      const params = rec.uniform(Geo, geoParams(geo, 0, taps.length / 4, total));
      rec.dispatch('convolve.nonfinite.taps', pipe, { src: src.buffer, dst: out.buffer, taps: rec.storageFrom(new Uint32Array(taps), 'non-finite taps'), g: params, flag: this.flag }, ...this.groups(total));
      return;
    }
    // 'running': one pass of classes per axis of size > 1, z then y then x (scipy's uniform_filter order).
    const pipe = await this.ctx.pipeline('convolve-nonfinite-running', runningWgsl(mode), 'running');
    const dims = [...src.shape] as [number, number, number];
    let cur = src.buffer;
    for (const axis of [0, 1, 2]) {
      const kk = k.size[axis];
      if (kk === 1) continue;
      const g = geo[axis];
      const { inner, outer } = lineStrides(dims, axis);
      dims[axis] = g.nOut;
      const next = rec.storage(dims[0] * dims[1] * dims[2] * 4, 'non-finite classes');
      // The whole line, or this slab's piece.
      const a = this.across?.axis === axis ? this.across : undefined;
      const common = { nIn: g.nIn, nOut: g.nOut, off: g.off, k: kk, inner, lines: outer * inner };
      const line = a
        ? { ...common, lo: 0, hi: a.total, start: a.start, total: a.total, save: a.next === undefined ? -1 : a.next - g.off, load: a.start > 0 ? 1 : 0,
          end: a.start + g.nIn === a.total ? a.total + kk - 1 : a.start + g.nIn - g.off }
        : { ...common, lo: g.lo, hi: g.hi, start: 0, total: g.nIn, save: -1, load: 0, end: g.nOut + kk - 1 };
      const state = a?.state ?? rec.storage(16, 'non-finite state (unused)');
      rec.dispatch(`convolve.nonfinite.running.${'zyx'[axis]}`, pipe, { src: cur, dst: next, P: rec.uniform(LineParams, line), flag: this.flag, state }, ...this.groups(outer * inner));
      cur = next;
    }
    const patch = await this.ctx.pipeline('convolve-nonfinite-patch', patchWgsl, 'patch_classes');
    rec.dispatch('convolve.nonfinite.patch', patch, { classes: cur, dst: out.buffer, P: rec.uniform(CountParams, { n: total }), flag: this.flag }, ...this.groups(total));
  }
}

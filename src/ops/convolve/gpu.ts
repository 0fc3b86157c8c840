import type { BorderMode } from '../../core/border.js';
import { InvalidArgumentError, optionRef } from '../../core/errors.js';
import type { Bindings } from '../../core/gpu/bindings.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { f32ToBits, type Recording } from '../../core/gpu/recording.js';
import { acquireStorage } from '../../core/gpu/transfer.js';
import type { UniformValues } from '../../core/gpu/uniforms.js';
import { CastParams, castWgsl, CountParams, Geo, MAGNITUDE_PARTS, magnitudeWgsl, naiveWgsl, planeSharedBytes, planeWgsl, tiledSharedBytes, tiledWgsl, type ConvDtype, type PlaneStage, type PlaneTile } from './conv.wgsl.js';
import type { BoxRounding } from './box.js';
import { isIdentity, type ConvKernel } from './kernel.js';
import type { AxisGeo, Geo3 } from './plan.js';

/**
 * naive: dense taps from global memory, one output per invocation (any kernel).
 * tiled: dense kernel, input tile + halo staged in workgroup memory, marching along z.
 * separable: scipy's sequential correlate1d passes (x, y, z), float32 intermediates: x and y in one kernel over
 *   each plane (planeWgsl) where its tile fits, else one tiled 1-D pass per axis; then a streaming z pass.
 * fused: separable kernel in one tiled pass — x and y within the staged plane, z across planes in registers —
 *   one read and one write of the volume.
 * auto: fused for rank-1 kernels, else tiled, falling back to naive where the tile does not fit workgroup memory.
 */
export const CONV_IMPLS = ['auto', 'naive', 'tiled', 'separable', 'fused'] as const;
export type ConvImpl = (typeof CONV_IMPLS)[number];

/** Tile shape of the tiled kernels; zc = output planes per workgroup. */
export interface ConvSchedule {
  /** volumes: invocations along x and y, output columns per invocation, output planes per workgroup */
  tx: number;
  ty: number;
  cx: number;
  zc: number;
  /** 2D images (one row of invocations marching down the image): invocations, columns per invocation */
  rowTile: number;
  rowCx: number;
  /** a pure z pass (no x/y taps): planes loaded ahead by each invocation */
  zdepth: number;
  /** separable kernels: the x-y pass's tile (planeWgsl); null: one pass per axis */
  plane: PlaneTile | null;
}
// From the H100 searches (bench/convolve.ts --search; bench/results/h100-convolve-schedules.json, clock free: 3D
// sobel-x tiled 0.54 ms with 32×8×1 against 0.74–1.7 ms for wider tiles, 8K sobel-x 0.14 ms with rows of 64×2;
// h100-convolve-k2-schedules.json and -k2c, clock held: two columns per invocation, 3D sobel-x tiled 0.402 → 0.324
// ms, 32×4 and 64 planes 0.342 ms; the Gaussian's z pass 0.895 → 0.652 ms with two columns, 0.48 ms loading two planes
// ahead; the x-y pass's 32×32 tile with runs of 8 × 4, 0.72 ms against 0.75–1.18 for the other shapes).
export const DEFAULT_CONV_SCHEDULE: ConvSchedule = { tx: 32, ty: 4, cx: 2, zc: 64, zdepth: 2, rowTile: 64, rowCx: 2, plane: { tw: 32, th: 32, cx: 8, cy: 4, zc: 8 } };

/** A device buffer holding a volume in some dtype, with its [z, y, x] shape. */
export interface Volume {
  buffer: GPUBuffer;
  dtype: ConvDtype;
  shape: [number, number, number];
}

/** The Geo uniform of a geometry: per-axis fields in x, y, z order, then cval and counts. */
export function geoParams(g: Geo3, cval: number, ntaps: number, total: number, chunks = 1): UniformValues<typeof Geo.fields> {
  const [z, y, x] = g;
  const v = (f: keyof AxisGeo) => [x[f], y[f], z[f], 0];
  return { nIn: v('nIn'), nOut: v('nOut'), off: v('off'), lo: v('lo'), hi: v('hi'), cval, ntaps, total, chunks };
}

/** An axis read as it is: n in, n out, no offset. */
const whole = (n: number): AxisGeo => ({ nIn: n, nOut: n, off: 0, lo: 0, hi: n });

/** The geometry of a pass along `axis` alone: identity along the other axes. */
function axisOnly(shape: [number, number, number], g: Geo3, axis: number): Geo3 {
  return [0, 1, 2].map((a) => (a === axis ? g[a] : whole(shape[a]))) as Geo3;
}

/** A 2D plane stage [1, ky, kx] as the stage of a [h, 1, w] volume: the y taps become the marched z taps. */
function rowLayout(stage: PlaneStage): PlaneStage {
  return stage.kind === 'dense'
    ? { kind: 'dense', size: [stage.size[1], 1, stage.size[2]], weights: stage.weights }
    : { kind: 'separable', wz: stage.wy, wy: Float32Array.of(1), wx: stage.wx };
}

/** Records convolution passes on one device. */
export class ConvGpu {
  constructor(readonly ctx: GpuContext, readonly schedule: ConvSchedule = DEFAULT_CONV_SCHEDULE) {}

  /** The implementation `impl` resolves to for kernel `k` on this device (checked: explicit choices that cannot run are errors). */
  resolve(impl: ConvImpl, k: ConvKernel, flat = false): Exclude<ConvImpl, 'auto'> {
    // `flat`: a 2D image, run as rows (rowLayout); its tile is one row segment.
    const fits = (stage: PlaneStage) => {
      const bytes = flat
        ? tiledSharedBytes({ stage: rowLayout(stage), tx: this.schedule.rowTile, ty: 1, cx: this.schedule.rowCx })
        : tiledSharedBytes({ stage, tx: this.schedule.tx, ty: this.schedule.ty, cx: this.schedule.cx });
      return bytes <= this.ctx.limits.maxComputeWorkgroupStorageSize;
    };
    const dense: PlaneStage = { kind: 'dense', size: k.size, weights: k.weights };
    if (impl === 'auto') {
      // Small kernels: the dense tile (one shared-memory stage per plane) was fastest on the H100 (3D sobel-x
      // 0.54 ms tiled, 1.8 ms fused); large separable ones (Gaussians): the x-y pass in workgroup memory and a z
      // pass (σ3 on 512×512×361 1.6–1.9 ms against 4.0 fused, 8K 0.40 against 0.44: h100-convolve-k2-schedules.json),
      // else fused, else the 1-D passes.
      const nonzero = k.weights.reduce((n, w) => n + (w !== 0 ? 1 : 0), 0);
      if (nonzero <= 125 && fits(dense)) return 'tiled';
      if (k.factors) return this.planeTile(k) || !fits(this.stageOf(k)) ? 'separable' : 'fused';
      return fits(dense) ? 'tiled' : 'naive';
    }
    if ((impl === 'separable' || impl === 'fused') && !k.factors) throw new InvalidArgumentError(`${optionRef('impl', impl)} needs a separable (rank-1) kernel; this one is not: use tiled or naive`);
    if (impl === 'tiled' && !fits(dense)) throw new InvalidArgumentError(`${optionRef('impl', 'tiled')}: a ${k.size.join('×')} kernel's tile does not fit this GPU's ${this.ctx.limits.maxComputeWorkgroupStorageSize}-byte workgroup memory; use naive or separable`);
    if (impl === 'fused' && !fits(this.stageOf(k))) throw new InvalidArgumentError(`${optionRef('impl', 'fused')}: a ${k.size.join('×')} kernel's tile does not fit this GPU's workgroup memory; use separable`);
    return impl;
  }

  private stageOf(k: ConvKernel): PlaneStage {
    const [wz, wy, wx] = k.factors!;
    return { kind: 'separable', wz, wy, wx };
  }

  /**
   * Records kernel `k` over `src` with the per-axis geometry `geo`; returns a float32 volume (a recording
   * temporary unless `keep`, then a pooled buffer the caller owns).
   */
  async apply(rec: Recording, src: Volume, k: ConvKernel, geo: Geo3, mode: BorderMode, cval: number, impl: Exclude<ConvImpl, 'auto'>, keep: boolean, scan?: GPUBuffer): Promise<Volume> {
    // `scan` (tiled, fused; float32 input): a flag the kernel sets where it reads NaN or ±inf (NonFiniteGpu.scan).
    if (scan && impl !== 'tiled' && impl !== 'fused') throw new Error(`convolve: a ${impl} pass cannot scan its input`);
    const out: [number, number, number] = [geo[0].nOut, geo[1].nOut, geo[2].nOut];
    const alloc = (last: boolean, shape = out) => {
      const bytes = shape[0] * shape[1] * shape[2] * 4;
      return keep && last ? acquireStorage(this.ctx, bytes, 'convolution output') : rec.storage(bytes, 'convolution temporary');
    };
    if (impl === 'naive') {
      const dst = alloc(true);
      await this.naive(rec, src, dst, k, geo, mode, cval);
      return { buffer: dst, dtype: 'float32', shape: out };
    }
    if (impl === 'tiled' || impl === 'fused') {
      const dst = alloc(true);
      const stage: PlaneStage = impl === 'tiled' ? { kind: 'dense', size: k.size, weights: k.weights } : this.stageOf(k);
      await this.tiled(rec, src, dst, stage, geo, mode, cval, `convolve.${impl}`, { scan });
      return { buffer: dst, dtype: 'float32', shape: out };
    }
    // separable: x → y → z, each axis a tiled 1-D pass; identity factors are skipped.
    const axes = [2, 1, 0].filter((a) => !isIdentity(k.factors![a]));
    if (axes.length === 0) axes.push(2);
    let cur = src;
    const shape = [...src.shape] as [number, number, number];
    const volume = src.shape[0] > 1;
    const tile = this.planeTile(k);
    if (tile && axes[0] === 2 && axes[1] === 1) {
      // x and y in one pass, the intermediate in workgroup memory (planeWgsl); then z, if any.
      const g: Geo3 = [whole(shape[0]), geo[1], geo[2]];
      shape[1] = geo[1].nOut;
      shape[2] = geo[2].nOut;
      const dst = alloc(axes.length === 2, shape);
      await this.plane(rec, cur, dst, k, tile, g, mode, cval);
      cur = { buffer: dst, dtype: 'float32', shape: [...shape] as [number, number, number] };
      axes.splice(0, 2);
    }
    for (let i = 0; i < axes.length; i++) {
      const a = axes[i];
      const g = axisOnly(shape, geo, a);
      const [d, h] = shape;
      shape[a] = geo[a].nOut;
      const one = (v: Float32Array, axis: number) => (axis === a ? v : Float32Array.of(1));
      const [wz, wy, wx] = k.factors!;
      const dst = alloc(i === axes.length - 1, shape);
      const label = `convolve.separable.${'zyx'[a]}`;
      if (volume && a === 2) {
        // x of a volume: its d·h rows are independent — one 2D row filter marching down all of them.
        await this.tiled(rec, cur, dst, { kind: 'separable', wz: Float32Array.of(1), wy: Float32Array.of(1), wx }, [whole(d * h), whole(1), g[2]], mode, cval, label, { rows: true });
      } else if (volume && a === 1) {
        // y of a volume: each slice as a [h, 1, w] volume marching down its rows (a batch of d), streaming —
        // no halo rows staged again and again as a y tile would.
        await this.tiled(rec, cur, dst, { kind: 'separable', wz: wy, wy: Float32Array.of(1), wx: Float32Array.of(1) }, [g[1], whole(1), g[2]], mode, cval, label, { rows: true, batch: d });
      } else {
        await this.tiled(rec, cur, dst, { kind: 'separable', wz: one(wz, 0), wy: one(wy, 1), wx: one(wx, 2) }, g, mode, cval, label);
      }
      cur = { buffer: dst, dtype: 'float32', shape: [...shape] as [number, number, number] };
    }
    return cur;
  }

  /** The x-y pass's tile for separable kernel `k`, where the schedule has one and it fits workgroup memory. */
  private planeTile(k: ConvKernel): PlaneTile | null {
    const t = this.schedule.plane;
    if (!t || t.tw % t.cx !== 0 || t.th % t.cy !== 0) return null;
    const [, wy, wx] = k.factors!;
    return planeSharedBytes(t, wx.length, wy.length) <= this.ctx.limits.maxComputeWorkgroupStorageSize ? t : null;
  }

  /** The x-y pass of a separable kernel: one dispatch, workgroups of tiles × chunks of t.zc planes. */
  private async plane(rec: Recording, src: Volume, dst: GPUBuffer, k: ConvKernel, t: PlaneTile, geo: Geo3, mode: BorderMode, cval: number): Promise<void> {
    const [, wy, wx] = k.factors!;
    const pipe = await this.ctx.pipeline('convolve-plane', planeWgsl({ ...t, dtype: src.dtype, mode, wx, wy }), 'plane');
    const tiles = Math.ceil(geo[2].nOut / t.tw) * Math.ceil(geo[1].nOut / t.th);
    const [x, y] = grid1d(this.ctx, tiles);
    rec.dispatch('convolve.separable.xy', pipe, { src: src.buffer, dst, g: rec.uniform(Geo, geoParams(geo, cval, 0, 0)) }, x, y, Math.ceil(geo[0].nOut / t.zc));
  }

  private async naive(rec: Recording, src: Volume, dst: GPUBuffer, k: ConvKernel, geo: Geo3, mode: BorderMode, cval: number): Promise<void> {
    const taps: number[] = [];
    const [kz, ky, kx] = k.size;
    for (let z = 0, i = 0; z < kz; z++) for (let y = 0; y < ky; y++) for (let x = 0; x < kx; x++, i++) {
      if (k.weights[i] !== 0) taps.push(x, y, z, f32ToBits(k.weights[i]));
    }
    const ntaps = taps.length / 4;
    // An all-zero kernel: a placeholder tap keeps the buffer non-empty; none is read (the output is 0, as on the CPU).
    if (ntaps === 0) taps.push(0, 0, 0, 0);
    const total = geo[0].nOut * geo[1].nOut * geo[2].nOut;
    const pipe = await this.ctx.pipeline('convolve-naive', naiveWgsl(src.dtype, mode), 'naive');
    const [x, y] = grid1d(this.ctx, Math.ceil(total / 64));
    const tapBuf = rec.storageFrom(new Uint32Array(taps), 'convolution taps');
    rec.dispatch('convolve.naive', pipe, { src: src.buffer, dst, taps: tapBuf, g: rec.uniform(Geo, geoParams(geo, cval, ntaps, total)) }, x, y);
  }

  /**
   * One tiled dispatch. `rows`: a row tile (the 2D shape) for a [n, 1, w] geometry; `batch`: that many volumes of
   * the geometry's size one after another in memory (the slices of a volume, for a y pass).
   */
  private async tiled(rec: Recording, src: Volume, dst: GPUBuffer, stage: PlaneStage, geo: Geo3, mode: BorderMode, cval: number, label: string, how: { rows?: boolean; batch?: number; scan?: GPUBuffer } = {}): Promise<void> {
    let { tx, ty, cx } = this.schedule;
    if (how.rows) [tx, ty, cx] = [this.schedule.rowTile, 1, this.schedule.rowCx];
    const kz = stage.kind === 'dense' ? stage.size[0] : stage.wz.length;
    if (geo[0].nIn === 1 && geo[0].nOut === 1 && kz === 1) {
      // A 2D image runs as a [h, 1, w] volume: the march goes down the rows (y taps accumulate in registers)
      // and a workgroup is one long row segment — so 2D gets the same reuse along y that volumes get along z.
      geo = [geo[1], whole(1), geo[2]];
      stage = rowLayout(stage);
      [tx, ty, cx] = [this.schedule.rowTile, 1, this.schedule.rowCx];
    }
    const tiles = Math.ceil(geo[2].nOut / (tx * cx)) * Math.ceil(geo[1].nOut / ty);
    // Planes per workgroup: the schedule's, fewer where that would leave too few workgroups to fill the GPU.
    const fill = 2 ** Math.floor(Math.log2(Math.max(1, (tiles * geo[0].nOut) / 4096)));
    let zc = Math.max(1, Math.min(this.schedule.zc, Math.max(8, fill), geo[0].nOut));
    // Workgroups along z are chunks × batch items: stay within the per-dimension limit.
    while (Math.ceil(geo[0].nOut / zc) * (how.batch ?? 1) > this.ctx.limits.maxComputeWorkgroupsPerDimension && zc < geo[0].nOut) zc *= 2;
    const scan = how.scan && src.dtype === 'float32' ? how.scan : undefined;
    const pipe = await this.ctx.pipeline('convolve-tiled', tiledWgsl({ dtype: src.dtype, mode, stage, tx, ty, cx, zc, zdepth: this.schedule.zdepth, scan: scan !== undefined }), 'tiled');
    const [x, y] = grid1d(this.ctx, tiles);
    const chunks = Math.ceil(geo[0].nOut / zc);
    const common = { src: src.buffer, dst, g: rec.uniform(Geo, geoParams(geo, cval, 0, 0, chunks)) };
    const bindings: Bindings = scan ? { ...common, flag: scan } : common;
    rec.dispatch(label, pipe, bindings, x, y, chunks * (how.batch ?? 1));
  }

  /** √(Σ cᵢ²) of 2–3 float32 volumes of one shape (a recording temporary unless `keep`). */
  async magnitude(rec: Recording, parts: Volume[], keep: boolean): Promise<Volume> {
    const n = parts[0].shape[0] * parts[0].shape[1] * parts[0].shape[2];
    const dst = keep ? acquireStorage(this.ctx, n * 4, 'gradient magnitude') : rec.storage(n * 4, 'gradient magnitude');
    const pipe = await this.ctx.pipeline('convolve-magnitude', magnitudeWgsl(parts.length), 'magnitude');
    const [x, y] = grid1d(this.ctx, Math.ceil(n / 256));
    rec.dispatch('convolve.magnitude', pipe, { ...Object.fromEntries(parts.map((p, i) => [MAGNITUDE_PARTS[i], p.buffer])), dst, P: rec.uniform(CountParams, { n }) }, x, y);
    return { buffer: dst, dtype: 'float32', shape: parts[0].shape };
  }

  /** float32 → u8/u16 (round half to even, saturate; box window sums: as cv2.blur, box.ts) into a new pooled buffer. */
  async cast(rec: Recording, src: Volume, dtype: 'uint8' | 'uint16', box?: BoxRounding): Promise<Volume> {
    const n = src.shape[0] * src.shape[1] * src.shape[2];
    const per = dtype === 'uint8' ? 4 : 2;
    const words = Math.ceil(n / per);
    const dst = acquireStorage(this.ctx, words * 4, 'cast output');
    const pipe = await this.ctx.pipeline('convolve-cast', castWgsl(dtype, box?.area, box?.shift), 'cast_sat');
    const [x, y] = grid1d(this.ctx, Math.ceil(words / 256));
    rec.dispatch('convolve.cast', pipe, { src: src.buffer, dst, P: rec.uniform(CastParams, { n, row: box?.width ?? 0, tail: box?.tail ?? 0 }) }, x, y);
    return { buffer: dst, dtype, shape: src.shape };
  }

  /** A finished volume as a GpuImage of the caller's rank. */
  static toImage(ctx: GpuContext, v: Volume, rank: 2 | 3): GpuImage {
    const shape = rank === 2 ? [v.shape[1], v.shape[2]] : [...v.shape];
    return new GpuImage(ctx, v.buffer, shape as GpuImage['shape'], 1, v.dtype);
  }
}

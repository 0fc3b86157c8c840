import type { GpuContext } from '../../core/gpu/context.js';
import { fmtBytes } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { f32ToBits, type Recording } from '../../core/gpu/recording.js';
import { acquireStorage } from '../../core/gpu/transfer.js';
import { GpuOutOfMemoryError } from '../../core/errors.js';
import { pixelCount } from '../../core/image.js';
import {
  columnsWorkgroupBytes, interpolateWgsl, tileCellsWgsl, tileHistWgsl, tileLutWgsl, windowColumnsWgsl, windowNaiveWgsl, type ColumnsSchedule,
} from './clahe.wgsl.js';
import { axisTable, type AxisTable, type ClaheBorder, type ClaheDtype, type TiledGeometry, type WindowGeometry } from './plan.js';

export const CLAHE_SCHEMES = ['columns', 'naive'] as const;
/** GPU algorithm of sliding-window CLAHE: column histograms (cost independent of R) or a naive recount per pixel. */
export type ClaheScheme = (typeof CLAHE_SCHEMES)[number];

function checkBinding(ctx: GpuContext, bytes: number, what: string): void {
  if (bytes > ctx.limits.maxStorageBufferBindingSize) {
    throw new GpuOutOfMemoryError(`clahe: ${what} needs ${fmtBytes(bytes)}, more than this adapter binds (${fmtBytes(ctx.limits.maxStorageBufferBindingSize)}); use fewer tiles or --device cpu`);
  }
}

/** Row slices per tile for tile_hist: about 1024 workgroups in all, whatever the grid. */
export function tileSlices(g: TiledGeometry): { slices: number; sliceRows: number } {
  const slices = Math.min(g.tileH, Math.max(1, Math.ceil(1024 / (g.tilesX * g.tilesY))));
  const sliceRows = Math.ceil(g.tileH / slices);
  return { slices: Math.ceil(g.tileH / sliceRows), sliceRows };
}

/** Tiled CLAHE: tile_hist → tile_lut → interpolate, recorded back to back. */
export class ClaheTiledGpuPlan {
  private constructor(
    private readonly ctx: GpuContext, private readonly dtype: ClaheDtype,
    private readonly hist: GPUComputePipeline, private readonly lut: GPUComputePipeline, private readonly interp: GPUComputePipeline,
    private readonly cells?: GPUComputePipeline,
  ) {}

  static prepare(ctx: GpuContext, dtype: ClaheDtype): Promise<ClaheTiledGpuPlan> {
    return ctx.plan(`claheTiled:${dtype}`, async () => {
      const [hist, lut, interp, cells] = await Promise.all([
        ctx.pipeline(`clahe-tile-hist-${dtype}`, tileHistWgsl(dtype), 'tile_hist'),
        ctx.pipeline(`clahe-tile-lut-${dtype}`, tileLutWgsl(dtype), 'tile_lut'),
        ctx.pipeline(`clahe-interpolate-${dtype}`, interpolateWgsl(dtype), 'interpolate'),
        dtype === 'uint8' ? ctx.pipeline('clahe-tile-cells', tileCellsWgsl(), 'tile_cells') : undefined,
      ]);
      return new ClaheTiledGpuPlan(ctx, dtype, hist, lut, interp, cells);
    });
  }

  encode(rec: Recording, input: GpuImage, g: TiledGeometry): GpuImage {
    return this.encodeInterpolate(rec, input, g, this.encodeLuts(rec, input, g));
  }

  /** Records tile_hist, tile_lut (and tile_cells for 8-bit): what interpolate reads, in a scratch buffer. */
  encodeLuts(rec: Recording, input: GpuImage, g: TiledGeometry): GPUBuffer {
    const tiles = g.tilesX * g.tilesY;
    const histBytes = tiles * g.bins * 4;
    checkBinding(this.ctx, histBytes, `${tiles} tile histograms of ${g.bins} bins`);
    const { slices, sliceRows } = tileSlices(g);
    const params = rec.uniform([g.width, g.height, g.tilesX, g.tileW, g.tileH, g.clipLimit, f32ToBits(g.lutScale), tiles, slices, sliceRows], 'clahe tile params');
    const hist = rec.storage(histBytes, 'clahe tile histograms');
    rec.clear(hist, histBytes);
    const [hx, hy] = grid1d(this.ctx, tiles * slices);
    rec.dispatch('clahe.tileHist', this.hist, [input.buffer, hist, params], hx, hy);
    const lut = rec.storage(tiles * g.bins * (this.dtype === 'uint8' ? 1 : 2), 'clahe luts');
    const [tx, ty] = grid1d(this.ctx, tiles);
    rec.dispatch('clahe.tileLut', this.lut, [hist, lut, params], tx, ty);
    if (!this.cells) return lut;
    const cellCount = (g.tilesX + 1) * (g.tilesY + 1);
    checkBinding(this.ctx, cellCount * 1024, `${cellCount} interpolation cells`);
    const cells = rec.storage(cellCount * 1024, 'clahe cells');
    const [cx, cy] = grid1d(this.ctx, cellCount);
    rec.dispatch('clahe.tileCells', this.cells, [lut, cells, params], cx, cy);
    return cells;
  }

  /** Records interpolate from the LUTs into a new pooled output image. */
  encodeInterpolate(rec: Recording, input: GpuImage, g: TiledGeometry, lut: GPUBuffer): GpuImage {
    const n = g.width * g.height;
    const words = Math.ceil(n / (this.dtype === 'uint8' ? 4 : 2));
    const out = acquireStorage(this.ctx, input.byteLength, 'clahe output');
    const [ix, iy] = grid1d(this.ctx, Math.ceil(words / 256));
    rec.dispatch('clahe.interpolate', this.interp, [
      input.buffer, out, lut,
      rec.storageFrom(packedAxis(axisTable(g.width, g.tileW, g.tilesX), this.cells ? g.tilesX : undefined), 'clahe x table'),
      rec.storageFrom(packedAxis(axisTable(g.height, g.tileH, g.tilesY), this.cells ? g.tilesY : undefined), 'clahe y table'),
      rec.uniform([g.width, n, g.tilesX, words, 0], 'clahe interpolate params'),
    ], ix, iy);
    return new GpuImage(this.ctx, out, [...input.shape] as GpuImage['shape'], 1, this.dtype);
  }
}

/**
 * An axis table as one vec4<u32> per position: bits of a, bits of 1 − a, then the first and second tile — or,
 * with `cells` (the tile count: 8-bit interpolation cells), the cell index: floor(t) + 1, recovered from the
 * clamped pair (t2 > t1: t1 + 1; equal at the start: 0; equal at the end: the tile count).
 */
function packedAxis(t: AxisTable, cells?: number): Uint32Array {
  const bits = new Uint32Array(t.weights.buffer, t.weights.byteOffset, t.weights.length);
  const out = new Uint32Array(2 * t.weights.length);
  for (let i = 0; i < t.weights.length / 2; i++) {
    const t1 = t.tiles[2 * i], t2 = t.tiles[2 * i + 1];
    const cell = t2 > t1 ? t1 + 1 : t1 === 0 ? 0 : cells!;
    out.set(cells === undefined ? [bits[2 * i], bits[2 * i + 1], t1, t2] : [bits[2 * i], bits[2 * i + 1], cell, 0], 4 * i);
  }
  return out;
}

/**
 * The column scheme's tile for radius r: 32 columns (r ≤ 24) or 64 (larger r, whose 2r halo columns are updated
 * every row and amortize better over a wider tile), 64 rows; narrower where the workgroup memory is smaller.
 * From the H100 search (bench/clahe-kernels.ts, docs/clahe.md): the kernel is latency-bound and the narrow
 * tile keeps the most workgroups resident (r = 10: 1.2 ms against 1.5–3.3 ms for 64 to 128 columns); at
 * r = 50 64 columns win (3.3 ms against 3.7 ms).
 * undefined: the scheme cannot run (r > 127: byte counts; or no 8-column tile fits the workgroup memory).
 */
export function columnsSchedule(ctx: GpuContext, radius: number): ColumnsSchedule | undefined {
  const budget = ctx.limits.maxComputeWorkgroupStorageSize;
  let tileW = radius <= 24 ? 32 : 64;
  while (tileW >= 8 && columnsWorkgroupBytes(radius, tileW, ctx.features.has('subgroups')) > budget) tileW -= 8;
  if (tileW < 8 || radius > 127) return undefined;
  return { tileW, tileH: 64 };
}

/** Sliding-window CLAHE (8-bit): one kernel, naive or column histograms; `scheme` says which ran. */
export class ClaheWindowGpuPlan {
  private constructor(
    private readonly ctx: GpuContext, readonly scheme: ClaheScheme, private readonly pipeline: GPUComputePipeline, private readonly schedule?: ColumnsSchedule,
  ) {}

  /** `tile` overrides the column scheme's tile (schedule search); it must fit the workgroup memory. */
  static prepare(ctx: GpuContext, g: WindowGeometry, border: ClaheBorder, wanted: ClaheScheme, tile?: ColumnsSchedule): Promise<ClaheWindowGpuPlan> {
    // Beyond the workgroup memory of the adapter the column scheme cannot hold its tile: the naive form runs.
    const schedule = wanted === 'columns' ? tile ?? columnsSchedule(ctx, g.radius) : undefined;
    const scheme: ClaheScheme = schedule ? 'columns' : 'naive';
    const k = { radius: g.radius, border, clipLimit: g.clipLimit, area: g.area, lutScale: g.lutScale };
    return ctx.plan(`claheWindow:${scheme}:${JSON.stringify(k)}:${JSON.stringify(schedule)}`, async () => {
      const pipeline = schedule
        ? await ctx.pipeline('clahe-window-columns', windowColumnsWgsl(k, schedule, ctx.features.has('subgroups')), 'window_columns')
        : await ctx.pipeline('clahe-window-naive', windowNaiveWgsl(k), 'window_naive');
      return new ClaheWindowGpuPlan(ctx, scheme, pipeline, schedule);
    });
  }

  encode(rec: Recording, input: GpuImage): GpuImage {
    const [h, w] = input.shape.length === 2 ? input.shape : [input.shape[1], input.shape[2]];
    const out = acquireStorage(this.ctx, pixelCount(input.shape), 'clahe window output');
    rec.clear(out);
    const params = rec.uniform([w, h], 'clahe window params');
    const [gx, gy] = this.schedule
      ? [Math.ceil(w / this.schedule.tileW), Math.ceil(h / this.schedule.tileH)]
      : [Math.ceil(w / 16), Math.ceil(h / 16)];
    rec.dispatch(`clahe.window.${this.scheme}`, this.pipeline, [input.buffer, out, params], gx, gy);
    return new GpuImage(this.ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
  }
}

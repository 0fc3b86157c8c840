import { reflect101Index } from '../../core/border.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { fmtBytes } from '../../core/gpu/context.js';
import { checkBinding, maxBinding, rangeBinding } from '../../core/gpu/limits.js';
import { copyUnits, recordInSlabs, unitAlignment } from '../../core/gpu/slabs.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage, deviceBytes } from '../../core/gpu/transfer.js';
import { CPU_PATH, GpuLimitError } from '../../core/errors.js';
import { pixelCount, planeSize } from '../../core/image.js';
import {
  columnsWorkgroupBytes, InterpolateParams, interpolateWgsl, tileCellsWgsl, tileHistWgsl, tileLutWgsl, TileParams, windowColumnsWgsl, windowNaiveWgsl,
  WindowParams, type ColumnsSchedule,
} from './clahe.wgsl.js';
import { axisTable, type AxisTable, type ClaheBorder, type ClaheDtype, type TiledGeometry, type WindowGeometry } from './plan.js';

export const CLAHE_SCHEMES = ['columns', 'naive'] as const;
/** GPU algorithm of sliding-window CLAHE: column histograms (cost independent of R) or a naive recount per pixel. */
export type ClaheScheme = (typeof CLAHE_SCHEMES)[number];

/** Row slices per tile for tile_hist: about 1024 workgroups in all, whatever the grid. */
export function tileSlices(g: TiledGeometry): { slices: number; sliceRows: number } {
  const slices = Math.min(g.tileH, Math.max(1, Math.ceil(1024 / (g.tilesX * g.tilesY))));
  const sliceRows = Math.ceil(g.tileH / slices);
  return { slices: Math.ceil(g.tileH / sliceRows), sliceRows };
}

/** Tiles [t0, t1) (row-major) whose histograms are taken in one go, and the image rows [in0, in1) they read. */
export interface TileBand {
  t0: number;
  t1: number;
  in0: number;
  in1: number;
}

/** The image rows the tiles of tile rows [ty0, ty1] read: their padded rows mapped back by REFLECT_101. */
function rowsRead(g: TiledGeometry, ty0: number, ty1: number): [number, number] {
  const y0 = ty0 * g.tileH, y1 = (ty1 + 1) * g.tileH;
  if (y1 <= g.height) return [y0, y1];
  // Padding rows reflect back into the image, possibly (tiny images, many tiles) more than once: take them all.
  let lo = Math.min(y0, g.height - 1), hi = Math.min(y1, g.height);
  for (let y = g.height; y < y1; y++) {
    const r = reflect101Index(y, g.height);
    lo = Math.min(lo, r);
    hi = Math.max(hi, r + 1);
  }
  return [lo, hi];
}

/**
 * How tiled CLAHE's histograms are taken on `ctx`: one band of all tiles when the image and the histograms fit
 * one binding each (the usual case), else bands of consecutive tiles whose histograms (tiles × bins × 4 bytes)
 * and source rows (copied, from a row starting on a 4-byte boundary) fit. undefined: not even one tile fits.
 */
export function tileBands(ctx: GpuContext, g: TiledGeometry, dtype: ClaheDtype): TileBand[] | undefined {
  const limit = maxBinding(ctx);
  const tiles = g.tilesX * g.tilesY;
  const rowBytes = g.width * (dtype === 'uint8' ? 1 : 2);
  const imageFits = deviceBytes(g.height * rowBytes) <= limit;
  const perBand = Math.floor(limit / (g.bins * 4));
  if (imageFits && perBand >= tiles) return [{ t0: 0, t1: tiles, in0: 0, in1: g.height }];
  const align = unitAlignment([g.height, g.width], dtype);
  const band = (t0: number, t1: number): TileBand => {
    const [lo, hi] = imageFits ? [0, g.height] : rowsRead(g, Math.floor(t0 / g.tilesX), Math.floor((t1 - 1) / g.tilesX));
    return { t0, t1, in0: Math.floor(lo / align) * align, in1: hi };
  };
  const fits = (b: TileBand) => b.t1 - b.t0 <= perBand && deviceBytes((b.in1 - b.in0) * rowBytes) <= limit;
  const bands: TileBand[] = [];
  for (let t0 = 0; t0 < tiles;) {
    // As many consecutive tiles from t0 on as fit (their histograms, and the rows their tile rows read).
    let t1 = t0 + 1;
    if (!fits(band(t0, t1))) return undefined;
    while (t1 < tiles && fits(band(t0, t1 + 1))) t1++;
    bands.push(band(t0, t1));
    t0 = t1;
  }
  return bands;
}

/**
 * Tiled CLAHE: tile_hist → tile_lut → interpolate, recorded back to back. Beyond one storage binding (a large
 * image, or 16-bit histograms of many tiles) the histograms and LUTs are made band by band (tileBands) and the
 * interpolation runs in row slabs (core/gpu/slabs.ts); the LUTs themselves always fit one binding (index.ts
 * limits the grid to what the smallest WebGPU binding holds).
 */
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

  encode(rec: Recording, input: GpuImage, g: TiledGeometry): Promise<GpuImage> {
    return this.encodeInterpolate(rec, input, g, this.encodeLuts(rec, input, g));
  }

  /** Records tile_hist, tile_lut (and tile_cells for 8-bit): what interpolate reads, in a scratch buffer. */
  encodeLuts(rec: Recording, input: GpuImage, g: TiledGeometry): GPUBuffer {
    const tiles = g.tilesX * g.tilesY;
    const bands = tileBands(this.ctx, g, this.dtype);
    if (!bands) throw new GpuLimitError(`clahe: one ${g.tileW}×${g.tileH} tile of this ${g.width}-pixel-wide image does not fit this adapter's ${fmtBytes(maxBinding(this.ctx))} binding; use ${CPU_PATH}`);
    rec.split(bands.length);
    const lutBpe = this.dtype === 'uint8' ? 1 : 2;
    const lutBytes = tiles * g.bins * lutBpe;
    checkBinding(this.ctx, lutBytes, `clahe: the LUTs of ${tiles} tiles`);
    const lut = rec.storage(lutBytes, 'clahe luts');
    const { slices, sliceRows } = tileSlices(g);
    const tileParams = (bandTiles: number, t0: number, row0: number) =>
      rec.uniform(TileParams, {
        width: g.width, height: g.height, tiles_x: g.tilesX, tile_w: g.tileW, tile_h: g.tileH, clip: g.clipLimit, scale: g.lutScale,
        tiles: bandTiles, slices, slice_rows: sliceRows, tile0: t0, row0,
      }, 'clahe tile params');
    const histBytes = Math.max(...bands.map((b) => b.t1 - b.t0)) * g.bins * 4;
    const hist = rec.storage(histBytes, 'clahe tile histograms');
    const whole = bands.length === 1;
    for (const b of bands) {
      const n = b.t1 - b.t0;
      const src = b.in0 === 0 && b.in1 === g.height ? input : copyUnits(rec, input, b.in0, b.in1, 'clahe');
      const params = tileParams(n, b.t0, b.in0);
      rec.clear(hist, n * g.bins * 4);
      const [hx, hy] = grid1d(this.ctx, n * slices);
      rec.dispatch('clahe.tileHist', this.hist, { src: src.buffer, hist, P: params }, hx, hy);
      const [tx, ty] = grid1d(this.ctx, n);
      rec.dispatch('clahe.tileLut', this.lut, { hist, lut: rangeBinding(lut, { first: b.t0 * g.bins, count: n * g.bins }, lutBpe, whole), P: params }, tx, ty);
    }
    if (!this.cells) return lut;
    const cellCount = (g.tilesX + 1) * (g.tilesY + 1);
    checkBinding(this.ctx, cellCount * 1024, `clahe: ${cellCount} interpolation cells`);
    const cells = rec.storage(cellCount * 1024, 'clahe cells');
    const [cx, cy] = grid1d(this.ctx, cellCount);
    rec.dispatch('clahe.tileCells', this.cells, { lut, cells, P: tileParams(tiles, 0, 0) }, cx, cy);
    return cells;
  }

  /** Records interpolate from the LUTs into a new pooled output image (in row slabs beyond one binding). */
  encodeInterpolate(rec: Recording, input: GpuImage, g: TiledGeometry, lut: GPUBuffer): Promise<GpuImage> {
    const xtab = rec.storageFrom(packedAxis(axisTable(g.width, g.tileW, g.tilesX), this.cells ? g.tilesX : undefined), 'clahe x table');
    const ytab = packedAxis(axisTable(g.height, g.tileH, g.tilesY), this.cells ? g.tilesY : undefined);
    const spec = { halo: 0, unitBytes: Math.max(g.width * (this.dtype === 'uint8' ? 1 : 2), 16), what: 'clahe' };
    return recordInSlabs(rec, input, spec, async (slab, at) => {
      const n = g.width * (at.in1 - at.in0);
      const words = Math.ceil(n / (this.dtype === 'uint8' ? 4 : 2));
      const out = acquireStorage(this.ctx, slab.byteLength, 'clahe output');
      const [ix, iy] = grid1d(this.ctx, Math.ceil(words / 256));
      rec.dispatch('clahe.interpolate', this.interp, {
        src: slab.buffer, dst: out, lut, xtab, ytab: rec.storageFrom(ytab.subarray(4 * at.in0, 4 * at.in1), 'clahe y table'),
        P: rec.uniform(InterpolateParams, { width: g.width, n, tiles_x: g.tilesX, words, zero: 0 }, 'clahe interpolate params'),
      }, ix, iy);
      return new GpuImage(this.ctx, out, [...slab.shape] as GpuImage['shape'], 1, this.dtype);
    });
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
    const [h, w] = planeSize(input.shape);
    const out = acquireStorage(this.ctx, pixelCount(input.shape), 'clahe window output');
    rec.clear(out);
    const params = rec.uniform(WindowParams, { width: w, height: h }, 'clahe window params');
    const [gx, gy] = this.schedule
      ? [Math.ceil(w / this.schedule.tileW), Math.ceil(h / this.schedule.tileH)]
      : [Math.ceil(w / 16), Math.ceil(h / 16)];
    rec.dispatch(`clahe.window.${this.scheme}`, this.pipeline, { src: input.buffer, dst: out, P: params }, gx, gy);
    return new GpuImage(this.ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
  }
}

import { reflect101Index } from '../../core/border.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { fmtBytes } from '../../core/gpu/context.js';
import { checkBinding, maxBinding, rangeBinding } from '../../core/gpu/limits.js';
import { copyUnits, recordInSlabs, unitAlignment } from '../../core/gpu/slabs.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage, deviceBytes } from '../../core/gpu/transfer.js';
import { CPU_PATH, GpuLimitError, InvalidArgumentError, optionRef } from '../../core/errors.js';
import { pixelCount, planeSize } from '../../core/image.js';
import {
  cellLutsWgsl, columnsWorkgroupBytes, InterpolateParams, interpolateStripsWgsl, interpolateWgsl, StripParams, tileCellsWgsl, tileHistPrivateWgsl, tileHistWgsl,
  tileLutWgsl, TileParams, windowColumnsWgsl, windowNaiveWgsl, WindowParams, type ColumnsSchedule,
} from './clahe.wgsl.js';
import { axisTable, type AxisTable, type ClaheBorder, type ClaheDtype, type TiledGeometry, type WindowGeometry } from './plan.js';

export const CLAHE_SCHEMES = ['columns', 'naive'] as const;
/** GPU algorithm of sliding-window CLAHE: column histograms (cost independent of R) or a naive recount per pixel. */
export type ClaheScheme = (typeof CLAHE_SCHEMES)[number];

/** Row slices per tile for tile_hist: about `groups` workgroups in all, whatever the grid, at most `most` per tile. */
export function tileSlices(g: TiledGeometry, most = Infinity, groups = 1024): { slices: number; sliceRows: number } {
  const slices = Math.min(g.tileH, most, Math.max(1, Math.ceil(groups / (g.tilesX * g.tilesY))));
  const sliceRows = Math.ceil(g.tileH / slices);
  return { slices: Math.ceil(g.tileH / sliceRows), sliceRows };
}

/**
 * The kernels of 8-bit tiled CLAHE (16-bit always runs tile_hist, tile_lut and the word interpolation):
 * - `luts`: 'tiles' — tile_hist into a cleared global histogram (workgroup atomics, word reads), tile_lut,
 *   tile_cells; 'partials' — tile_hist_private (16-byte reads, `copies` sub-histograms, each workgroup's
 *   histogram stored whole) then cell_luts (clip, scan and interleaved cells in one dispatch): no clear and one
 *   dispatch fewer; about `groups` workgroups (row slices of the tiles, at most 64 a tile). 'partials' needs
 *   the image in one binding; beyond, the bands of 'tiles' run.
 * - `interp`: 'words' — an invocation per output word; 'strips' — an invocation per `px` pixels of a row over
 *   `rows` rows, its column weights loaded once (needs a width that `px`, 8 or 4 divides; else 'words');
 *   `bytes`: 'cvt' (conversion instructions) or 'magic' (exact float bit tricks, full FP32 rate: clahe.wgsl.ts).
 * Every variant gives the same bytes (tests run each); the context's `variants.claheTiled` names one (bench/clahe-kernels.ts).
 */
export interface ClaheTiledVariant {
  luts: 'tiles' | 'partials';
  copies: number;
  groups: number;
  interp: 'words' | 'strips';
  px: 4 | 8 | 16;
  rows: number;
  bytes: 'cvt' | 'magic';
}

const variant = (luts: ClaheTiledVariant['luts'], interp: ClaheTiledVariant['interp'], px: 4 | 8 | 16 = 16, rows = 4, copies = 4, groups = 1024, bytes: ClaheTiledVariant['bytes'] = 'cvt'): ClaheTiledVariant =>
  ({ luts, copies, groups, interp, px, rows, bytes });
const strips = (luts: ClaheTiledVariant['luts'], px: 4 | 8 | 16, rows: number, bytes: ClaheTiledVariant['bytes'] = 'cvt', groups = 1024): ClaheTiledVariant =>
  variant(luts, 'strips', px, rows, 4, groups, bytes);

/** The variants the bench compares, by name. */
export const CLAHE_TILED_VARIANTS: Readonly<Record<string, ClaheTiledVariant>> = {
  'tiles-words': variant('tiles', 'words'),
  'tiles-strips4x4': strips('tiles', 4, 4),
  'partials-words': variant('partials', 'words'),
  'partials-strips4x4': strips('partials', 4, 4),
  'partials-strips4x8': strips('partials', 4, 8),
  'partials-strips4x16': strips('partials', 4, 16),
  'partials-strips4x4-magic': strips('partials', 4, 4, 'magic'),
  'partials-strips4x8-magic': strips('partials', 4, 8, 'magic'),
  'partials-strips4x16-magic': strips('partials', 4, 16, 'magic'),
  'partials-strips8x8-magic': strips('partials', 8, 8, 'magic'),
  'partials-strips16x8-magic': strips('partials', 16, 8, 'magic'),
  'partials-strips4x8-magic-g512': strips('partials', 4, 8, 'magic', 512),
};

/**
 * The default variant, the fastest of the H100 run (bench/results/h100-clahe-variants-2.jsonl, docs/clahe.md):
 * 8K 8×8 back to back 0.090 ms against 0.143 for tiles-words (the kernels before issue 22). 'magic' measured no
 * faster (0.092): the conversions were not what bounds interpolate; 16-pixel strips were slower (registers).
 */
export const CLAHE_TILED_DEFAULT = 'partials-strips4x8';

/** The variant `name` names (the context's `variants.claheTiled`, a measurement knob), else the default. */
export function claheTiledVariant(name = CLAHE_TILED_DEFAULT): ClaheTiledVariant {
  const v = CLAHE_TILED_VARIANTS[name];
  if (!v) throw new InvalidArgumentError(`${optionRef('variants.claheTiled')}: unknown variant ${JSON.stringify(name)}; one of ${Object.keys(CLAHE_TILED_VARIANTS).join(', ')}`);
  return v;
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
 * Tiled CLAHE: tile_hist → tile_lut → interpolate, recorded back to back (for 8-bit, by default, tile_hist_private
 * → cell_luts → interpolate_strips: ClaheTiledVariant). Beyond one storage binding (a large image, or 16-bit
 * histograms of many tiles) the histograms and LUTs are made band by band (tileBands) and the interpolation runs
 * in row slabs (core/gpu/slabs.ts); the LUTs themselves always fit one binding (index.ts limits the grid to what
 * the smallest WebGPU binding holds). Pipelines other than the variant's (the fallbacks) are made when first needed.
 */
export class ClaheTiledGpuPlan {
  private constructor(private readonly ctx: GpuContext, private readonly dtype: ClaheDtype, readonly variant: ClaheTiledVariant) {}

  static async prepare(ctx: GpuContext, dtype: ClaheDtype, variant = claheTiledVariant(ctx.variants.claheTiled)): Promise<ClaheTiledGpuPlan> {
    const plan = await ctx.plan(`claheTiled:${dtype}:${JSON.stringify(variant)}`, async () => new ClaheTiledGpuPlan(ctx, dtype, variant));
    // Compile the usual case's pipelines now (in parallel), not inside the first recording.
    const wide = dtype === 'uint8' ? variant : { ...variant, luts: 'tiles' as const, interp: 'words' as const };
    await Promise.all([
      ...(wide.luts === 'partials' ? [plan.histPrivate(), plan.cellLuts()] : [plan.pipe('hist'), plan.pipe('lut'), ...(dtype === 'uint8' ? [plan.pipe('cells')] : [])]),
      wide.interp === 'strips' ? plan.strips(variant.px) : plan.pipe('interp'),
    ]);
    return plan;
  }

  private pipe(which: 'hist' | 'lut' | 'cells' | 'interp'): Promise<GPUComputePipeline> {
    const d = this.dtype;
    switch (which) {
      case 'hist': return this.ctx.pipeline(`clahe-tile-hist-${d}`, tileHistWgsl(d), 'tile_hist');
      case 'lut': return this.ctx.pipeline(`clahe-tile-lut-${d}`, tileLutWgsl(d), 'tile_lut');
      case 'cells': return this.ctx.pipeline('clahe-tile-cells', tileCellsWgsl(), 'tile_cells');
      case 'interp': return this.ctx.pipeline(`clahe-interpolate-${d}`, interpolateWgsl(d), 'interpolate');
    }
  }

  private histPrivate(): Promise<GPUComputePipeline> {
    return this.ctx.pipeline(`clahe-tile-hist-private-${this.variant.copies}`, tileHistPrivateWgsl(this.variant.copies), 'tile_hist');
  }

  private cellLuts(): Promise<GPUComputePipeline> {
    return this.ctx.pipeline('clahe-cell-luts', cellLutsWgsl(), 'cell_luts');
  }

  private strips(px: 4 | 8 | 16): Promise<GPUComputePipeline> {
    const { rows, bytes } = this.variant;
    return this.ctx.pipeline(`clahe-interpolate-strips-${px}x${rows}-${bytes}`, interpolateStripsWgsl(px, rows, bytes), 'interpolate_strips');
  }

  async encode(rec: Recording, input: GpuImage, g: TiledGeometry): Promise<GpuImage> {
    return this.encodeInterpolate(rec, input, g, await this.encodeLuts(rec, input, g));
  }

  /** Records the kernels before interpolate: what interpolate reads (8-bit: interleaved cells), in a scratch buffer. */
  async encodeLuts(rec: Recording, input: GpuImage, g: TiledGeometry): Promise<GPUBuffer> {
    const bands = tileBands(this.ctx, g, this.dtype);
    if (!bands) throw new GpuLimitError(`clahe: one ${g.tileW}×${g.tileH} tile of this ${g.width}-pixel-wide image does not fit this adapter's ${fmtBytes(maxBinding(this.ctx))} binding; use ${CPU_PATH}`);
    if (this.dtype === 'uint8' && this.variant.luts === 'partials' && bands.length === 1) {
      const cells = await this.encodeCellsFromPartials(rec, input, g);
      if (cells) return cells;
    }
    return this.encodeTileLuts(rec, input, g, bands);
  }

  /** The 8-bit interpolation cells from tile_hist_private's partial histograms and cell_luts; undefined where the partials exceed a binding. */
  private async encodeCellsFromPartials(rec: Recording, input: GpuImage, g: TiledGeometry): Promise<GPUBuffer | undefined> {
    const tiles = g.tilesX * g.tilesY;
    // At most 64 slices a tile: cell_luts sums each tile's slices, bin by bin.
    const { slices, sliceRows } = tileSlices(g, 64, this.variant.groups);
    const partialBytes = tiles * slices * 1024;
    if (partialBytes > maxBinding(this.ctx)) return undefined;
    const [hist, cellLuts] = await Promise.all([this.histPrivate(), this.cellLuts()]);
    const P = this.tileParams(rec, g, tiles, slices, sliceRows);
    const partial = rec.storage(partialBytes, 'clahe partial histograms');
    const [hx, hy] = grid1d(this.ctx, tiles * slices);
    rec.dispatch('clahe.tileHist', hist, { src: input.buffer, partial, P }, hx, hy);
    const cells = this.cellsBuffer(rec, g);
    const [cx, cy] = grid1d(this.ctx, (g.tilesX + 1) * (g.tilesY + 1));
    rec.dispatch('clahe.cellLuts', cellLuts, { partial, cells, P }, cx, cy);
    return cells;
  }

  private tileParams(rec: Recording, g: TiledGeometry, tiles: number, slices: number, sliceRows: number, t0 = 0, row0 = 0): GPUBufferBinding {
    return rec.uniform(TileParams, {
      width: g.width, height: g.height, tiles_x: g.tilesX, tile_w: g.tileW, tile_h: g.tileH, clip: g.clipLimit, scale: g.lutScale,
      tiles, slices, slice_rows: sliceRows, tile0: t0, row0,
    });
  }

  /** The interleaved interpolation cells of 8-bit: 256 words of 4 LUT bytes per cell. */
  private cellsBuffer(rec: Recording, g: TiledGeometry): GPUBuffer {
    const cellCount = (g.tilesX + 1) * (g.tilesY + 1);
    checkBinding(this.ctx, cellCount * 1024, `clahe: ${cellCount} interpolation cells`);
    return rec.storage(cellCount * 1024, 'clahe cells');
  }

  /** tile_hist (cleared global histograms, band by band), tile_lut, and tile_cells for 8-bit. */
  private async encodeTileLuts(rec: Recording, input: GpuImage, g: TiledGeometry, bands: TileBand[]): Promise<GPUBuffer> {
    const [histPipe, lutPipe, cellsPipe] = await Promise.all([this.pipe('hist'), this.pipe('lut'), this.dtype === 'uint8' ? this.pipe('cells') : undefined]);
    const tiles = g.tilesX * g.tilesY;
    rec.split(bands.length);
    const lutBpe = this.dtype === 'uint8' ? 1 : 2;
    const lutBytes = tiles * g.bins * lutBpe;
    checkBinding(this.ctx, lutBytes, `clahe: the LUTs of ${tiles} tiles`);
    const lut = rec.storage(lutBytes, 'clahe luts');
    const { slices, sliceRows } = tileSlices(g);
    const histBytes = Math.max(...bands.map((b) => b.t1 - b.t0)) * g.bins * 4;
    const hist = rec.storage(histBytes, 'clahe tile histograms');
    const whole = bands.length === 1;
    for (const b of bands) {
      const n = b.t1 - b.t0;
      const src = b.in0 === 0 && b.in1 === g.height ? input : copyUnits(rec, input, b.in0, b.in1, 'clahe');
      const params = this.tileParams(rec, g, n, slices, sliceRows, b.t0, b.in0);
      rec.clear(hist, n * g.bins * 4);
      const [hx, hy] = grid1d(this.ctx, n * slices);
      rec.dispatch('clahe.tileHist', histPipe, { src: src.buffer, hist, P: params }, hx, hy);
      const [tx, ty] = grid1d(this.ctx, n);
      rec.dispatch('clahe.tileLut', lutPipe, { hist, lut: rangeBinding(lut, { first: b.t0 * g.bins, count: n * g.bins }, lutBpe, whole), P: params }, tx, ty);
    }
    if (!cellsPipe) return lut;
    const cells = this.cellsBuffer(rec, g);
    const [cx, cy] = grid1d(this.ctx, (g.tilesX + 1) * (g.tilesY + 1));
    rec.dispatch('clahe.tileCells', cellsPipe, { lut, cells, P: this.tileParams(rec, g, tiles, slices, sliceRows) }, cx, cy);
    return cells;
  }

  /** The strip width for this image: the variant's px, or the largest of 8, 4 that divides the width; undefined: words. */
  private stripPx(width: number): 4 | 8 | 16 | undefined {
    if (this.dtype !== 'uint8' || this.variant.interp !== 'strips') return undefined;
    return ([16, 8, 4] as const).find((px) => px <= this.variant.px && width % px === 0);
  }

  /** Records interpolate from the LUTs into a new pooled output image (in row slabs beyond one binding). */
  async encodeInterpolate(rec: Recording, input: GpuImage, g: TiledGeometry, lut: GPUBuffer): Promise<GpuImage> {
    const cellsX = this.dtype === 'uint8' ? g.tilesX : undefined;
    const xtab = rec.storageFrom(packedAxis(axisTable(g.width, g.tileW, g.tilesX), cellsX), 'clahe x table');
    const ytab = packedAxis(axisTable(g.height, g.tileH, g.tilesY), this.dtype === 'uint8' ? g.tilesY : undefined);
    const px = this.stripPx(g.width);
    const pipeline = await (px ? this.strips(px) : this.pipe('interp'));
    const spec = { halo: 0, unitBytes: Math.max(g.width * (this.dtype === 'uint8' ? 1 : 2), 16), what: 'clahe' };
    return recordInSlabs(rec, input, spec, async (slab, at) => {
      const rows = at.in1 - at.in0;
      const out = acquireStorage(this.ctx, slab.byteLength, 'clahe output');
      const bindings = { src: slab.buffer, dst: out, lut, xtab, ytab: rec.storageFrom(ytab.subarray(4 * at.in0, 4 * at.in1), 'clahe y table') };
      if (px) {
        const strips = g.width / px;
        const [ix, iy] = grid1d(this.ctx, Math.ceil((strips * Math.ceil(rows / this.variant.rows)) / 256));
        const P = rec.uniform(StripParams, { strips, height: rows, cells_x: g.tilesX + 1, zero: 0 });
        rec.dispatch('clahe.interpolate', pipeline, { ...bindings, P }, ix, iy);
      } else {
        const n = g.width * rows;
        const words = Math.ceil(n / (this.dtype === 'uint8' ? 4 : 2));
        const [ix, iy] = grid1d(this.ctx, Math.ceil(words / 256));
        const P = rec.uniform(InterpolateParams, { width: g.width, n, tiles_x: g.tilesX, words, zero: 0 });
        rec.dispatch('clahe.interpolate', pipeline, { ...bindings, P }, ix, iy);
      }
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
    const params = rec.uniform(WindowParams, { width: w, height: h });
    const [gx, gy] = this.schedule
      ? [Math.ceil(w / this.schedule.tileW), Math.ceil(h / this.schedule.tileH)]
      : [Math.ceil(w / 16), Math.ceil(h / 16)];
    rec.dispatch(`clahe.window.${this.scheme}`, this.pipeline, { src: input.buffer, dst: out, P: params }, gx, gy);
    return new GpuImage(this.ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
  }
}

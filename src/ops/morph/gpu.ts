import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage } from '../../core/gpu/transfer.js';
import { InvalidArgumentError, optionRef } from '../../core/errors.js';
import { asShape3D } from '../../core/image.js';
import { DirectParams, directRowsWgsl, directWgsl, lanes, LineParams, PackParams, packWgsl, SubtractParams, subtractWgsl, vhgwLinesWgsl, vhgwRowsWgsl, type MorphDtype } from './morph.wgsl.js';
import { boxPasses, maskOffsets, neutral, type AxisWindow, type MorphBorder, type MorphPrimitive } from './plan.js';
import { FusedParams, fusedLayout, fusedWgsl, type FusedKernel } from './fused.wgsl.js';
import { segLinesWgsl, segRowsWgsl } from './segments.wgsl.js';
import type { StructuringElement } from './se.js';

export const MORPH_METHODS = ['auto', 'vhgw', 'naive'] as const;
/** auto: vHGW for boxes, direct for other elements; naive: the direct kernel for every element (the baseline). */
export type MorphMethod = (typeof MORPH_METHODS)[number];

/** Outputs per invocation of the line kernels. */
export interface MorphSchedule {
  /** vertical / depth pass: rows per invocation */
  segLines: number;
  /** horizontal pass: pixels per invocation (a multiple of 4) */
  segRows: number;
  /** Windows along x up to this long run without vHGW, one output word per invocation (directRowsWgsl); 0: never. */
  directX: number;
  /** Vertical / depth pass: rows per invocation of the register-segment kernel (segLinesWgsl); 0: vHGW (segLines). */
  segY: number;
  /** Word columns per workgroup of the register-segment vertical kernel (a power of 2 ≤ 64; the rest of the 64 stacked segments). */
  segYCols: number;
  /** Horizontal pass beyond directX: words per invocation of the register-segment kernel (segRowsWgsl); 0: vHGW. */
  segX: number;
  /** u8: packed-byte min/max in the word kernels (laneOps). */
  swar: boolean;
  /**
   * Rectangles whose x window the register-segment x kernel takes: both passes in one kernel (fusedWgsl), tiles of
   * this many words a row; 0: two passes.
   */
  fuseTW: number;
  /** Fused kernel: x output words per invocation (divides fuseTW). */
  fuseXS: number;
  /** Fused kernel: y output rows per invocation, at most (fewer where the tile would not fit workgroup memory). */
  fuseYS: number;
  /** Fused kernel: invocations a workgroup (a multiple of fuseTW and of fuseTW / fuseXS). */
  fuseThreads: number;
  /** u8 and u16: the register-segment x pass (segX, fused) on lanes unpacked to vectors instead of packed words. */
  unpackX: boolean;
  /** u8 and u16: the register-segment y/z pass (segY) on unpacked lanes, for windows longer than 8 rows (shorter: packed words). */
  unpackY: boolean;
  /**
   * The register-segment y/z pass on strips of four words (vec4<u32> loads and stores; segYCols then counts strips)
   * where a line's word count is a multiple of 4; packed words (unpackY ignored). Elsewhere the u32 kernel.
   * Measured slower at every shape (docs/morphology.md): off.
   */
  yVec4: boolean;
  /**
   * u8 and u16, unpacked lanes (unpackX, unpackY): lane l is the word shifted so that its pixel l is on top, the
   * pixels below left in place (an unsigned min/max keeps the top pixel's; unpackWgsl), instead of masked out.
   */
  laneTop: boolean;
}
// From the H100 searches at 7680×4320 with the clock held at 1980 MHz (bench/morph.ts --hold-clocks, back to back).
// vHGW segments (bench/results/h100-morph-search-held.jsonl): 32 rows per invocation in the vertical pass and 32
// pixels in the horizontal one were best or within 3 % of the best for rect 3×3, 51×51 and 101×101. directX: the
// direct x kernel beat the vHGW walk for windows of 3, 5 and 7 (h100-morph-search-direct-held.jsonl). The
// register-segment kernels and packed-byte min/max (h100-morphbig-variants*.jsonl, each pass alone as rect:Kx1 /
// rect:1xK): vertical pass at k = 3 / 51 / 101 0.029 / 0.045 / 0.057 ms (segments of 8 rows for short windows, else 32
// rows, 32 columns a workgroup) against vHGW's 0.046 / 0.098 / 0.130; horizontal pass at k = 51 / 101 0.080 / 0.088 ms
// (6 words per invocation) against 0.190 / 0.235; packed bytes took the direct x kernel at k = 3 from 0.051 to 0.046 ms.
// unpackX (bench/results/h100-morphfuse-variants2.jsonl): the x pass on unpacked lanes took k = 51 / 101 from 0.080 /
// 0.088 ms to 0.053 / 0.063 (6 words an invocation; 4: 0.062 / 0.081, 8: 0.056 / 0.064, 12: 0.071 / 0.076). The fused
// x+y kernel (fuseTW) was slower than the two passes at every shape measured (h100-morphfuse-variants*.jsonl): off.
// yVec4 (h100-erodewide-variants.jsonl): the y pass on vec4 strips at best 0.054 / 0.076 ms at k = 51 / 101 (16 rows;
// 32 rows spill) against 0.045 / 0.057 on words: off.
// H200 (docs/morphology.md, bench/results/h200-morph101-*): lanes with their pixel on top (laneTop) took the x pass at
// k = 101 from 0.062 to 0.052 ms back to back; the y pass on such lanes with 16 rows an invocation and 32 columns a
// workgroup from 0.068 to 0.061 ms isolated (the roofline's measure; 32 rows: 0.071–0.073); 5 words an invocation
// along x (no skew) 0.057 against 0.059 for 6, isolated. Whole 8K u8 erosion, roofline isolated / back to back:
// 101×101 0.132 / 0.133 → 0.113 / 0.114 ms, 51×51 0.116 / 0.117 → 0.095 / 0.095, 3×3 unchanged (0.074–0.075 / 0.078).
export const DEFAULT_MORPH_SCHEDULE: MorphSchedule = { segLines: 32, segRows: 32, directX: 7, segY: 16, segYCols: 32, segX: 5, swar: true, fuseTW: 0, fuseXS: 4, fuseYS: 32, fuseThreads: 256, unpackX: true, unpackY: true, yVec4: false, laneTop: true };

/**
 * The default schedule, or with `json` (the context's `variants.morphSchedule`: a JSON object of MorphSchedule fields,
 * a measurement knob: the roofline runs a variant through it) those fields over it.
 */
export function morphSchedule(json?: string): MorphSchedule {
  if (!json) return DEFAULT_MORPH_SCHEDULE;
  let over: unknown;
  try {
    over = JSON.parse(json);
  } catch {
    over = undefined;
  }
  const known = Object.keys(DEFAULT_MORPH_SCHEDULE);
  const bad = !over || typeof over !== 'object' || Array.isArray(over) ? [json] : Object.entries(over).filter(([k, v]) => !known.includes(k) || typeof v !== typeof DEFAULT_MORPH_SCHEDULE[k as keyof MorphSchedule]).map(([k]) => k);
  if (bad.length > 0) throw new InvalidArgumentError(`${optionRef('variants.morphSchedule')}: not a JSON object of schedule fields (${bad.join(', ')}); fields: ${known.join(', ')}`);
  return { ...DEFAULT_MORPH_SCHEDULE, ...(over as Partial<MorphSchedule>) };
}

/** Windows up to this many rows run the register-segment vertical kernel with segments of this many rows at most. */
const SHORT_Y = 8;

/** A volume in the aligned layout (rows padded to whole words) on the device, owned by a recording or the caller. */
export interface Aligned {
  buffer: GPUBuffer;
  d: number;
  h: number;
  w: number;
  /** words per row */
  rw: number;
}

function wordFill(dtype: MorphDtype, op: MorphPrimitive): number {
  const v = neutral(op, dtype);
  if (dtype === 'float32') return new Uint32Array(new Float32Array([v]).buffer)[0];
  return v === 0 ? 0 : 0xffffffff;
}
function scalarFill(dtype: MorphDtype, op: MorphPrimitive): number {
  return dtype === 'float32' ? wordFill(dtype, op) : neutral(op, dtype);
}

/** Records morphology on one device: layout changes, vHGW passes, the direct kernel, subtraction. */
export class MorphGpu {
  constructor(readonly ctx: GpuContext, readonly dtype: MorphDtype, readonly schedule: MorphSchedule = morphSchedule(ctx.variants.morphSchedule)) {}

  private pipe(label: string, code: string, entry: string): Promise<GPUComputePipeline> {
    return this.ctx.pipeline(label, code, entry);
  }

  private words(a: Aligned): number {
    return a.d * a.h * a.rw;
  }

  private scratch(rec: Recording, like: Aligned, keep: boolean): Aligned {
    const bytes = this.words(like) * 4;
    return { ...like, buffer: keep ? acquireStorage(this.ctx, bytes, 'morph output') : rec.storage(bytes, 'morph temporary') };
  }

  /** The image's buffer as an aligned volume: itself when rows are whole words, else a repacked copy. */
  async toAligned(rec: Recording, img: GpuImage): Promise<Aligned> {
    const [d, h, w] = asShape3D(img.shape);
    const { epw } = lanes(this.dtype);
    const rw = Math.ceil(w / epw);
    if (w % epw === 0) return { buffer: img.buffer, d, h, w, rw };
    const out: Aligned = { buffer: rec.storage(d * h * rw * 4, 'morph aligned'), d, h, w, rw };
    const words = d * h * rw;
    const [x, y] = grid1d(this.ctx, Math.ceil(words / 256));
    rec.dispatch('morph.toAligned', await this.pipe('morph-pack', packWgsl(this.dtype), 'to_aligned'), { src: img.buffer, dst: out.buffer, P: rec.uniform(PackParams, { width: w, rw, rows: d * h, words }) }, x, y);
    return out;
  }

  /** An aligned result as a new pooled GpuImage in the image layout. */
  async fromAligned(rec: Recording, a: Aligned, shape: GpuImage['shape'], owned: boolean): Promise<GpuImage> {
    const { epw } = lanes(this.dtype);
    const n = a.d * a.h * a.w;
    const bytes = n * (4 / epw);
    if (a.w % epw === 0) {
      if (owned) return new GpuImage(this.ctx, a.buffer, shape, 1, this.dtype);
      const out = acquireStorage(this.ctx, bytes, 'morph output');
      rec.copy(a.buffer, out, Math.ceil(bytes / 4) * 4);
      return new GpuImage(this.ctx, out, shape, 1, this.dtype);
    }
    const out = acquireStorage(this.ctx, bytes, 'morph output');
    const words = Math.ceil(n / epw);
    const [x, y] = grid1d(this.ctx, Math.ceil(words / 256));
    rec.dispatch('morph.fromAligned', await this.pipe('morph-pack', packWgsl(this.dtype), 'from_aligned'), { src: a.buffer, dst: out, P: rec.uniform(PackParams, { width: a.w, rw: a.rw, rows: a.d * a.h, words }) }, x, y);
    return new GpuImage(this.ctx, out, shape, 1, this.dtype);
  }

  private async linePass(rec: Recording, src: Aligned, dst: Aligned, axis: 'x' | 'y' | 'z', win: AxisWindow, op: MorphPrimitive, border: MorphBorder): Promise<void> {
    const isMin = op === 'erode';
    const reflect = border === 'scipy' ? 1 : 0;
    const { swar, segX, segY } = this.schedule;
    if (axis === 'x' && win.k <= this.schedule.directX) {
      const pipe = await this.pipe('morph-direct-rows', directRowsWgsl({ dtype: this.dtype, isMin, k: win.k, swar }), 'direct_rows');
      const [x, y] = grid1d(this.ctx, Math.ceil(this.words(src) / 256));
      const params = rec.uniform(LineParams, { n: src.w, inner: src.rw, outer: 1, a: win.a, reflect, fill: scalarFill(this.dtype, op), segs: 0, lines: src.d * src.h, width: src.w });
      rec.dispatch(`morph.${op}.x`, pipe, { src: src.buffer, dst: dst.buffer, P: params }, x, y);
      return;
    }
    if (axis === 'x' && segX > 0 && win.k >= 2 * lanes(this.dtype).epw && win.k <= src.w) {
      const pipe = await this.pipe('morph-seg-rows', segRowsWgsl({ dtype: this.dtype, isMin, k: win.k, a: win.a, seg: segX, swar, unpacked: this.schedule.unpackX, top: this.schedule.laneTop }), 'seg_rows');
      // One workgroup per 64 segments of a row.
      const segs = Math.ceil(src.rw / (64 * segX)), lines = src.d * src.h;
      const [x, y] = grid1d(this.ctx, segs * lines);
      const params = rec.uniform(LineParams, { n: src.w, inner: src.rw, outer: 1, a: win.a, reflect, fill: scalarFill(this.dtype, op), segs, lines, width: src.w });
      rec.dispatch(`morph.${op}.x`, pipe, { src: src.buffer, dst: dst.buffer, P: params }, x, y);
      return;
    }
    if (axis === 'x') {
      const seg = this.schedule.segRows;
      const pipe = await this.pipe('morph-vhgw-rows', vhgwRowsWgsl({ dtype: this.dtype, isMin, k: win.k, seg, swar }), 'vhgw_rows');
      const segs = Math.ceil(src.w / seg), lines = src.d * src.h;
      const [x, y] = grid1d(this.ctx, Math.ceil((segs * lines) / 64));
      const params = rec.uniform(LineParams, { n: src.w, inner: src.rw, outer: 1, a: win.a, reflect, fill: scalarFill(this.dtype, op), segs, lines, width: src.w });
      rec.dispatch(`morph.${op}.x`, pipe, { src: src.buffer, dst: dst.buffer, P: params }, x, y);
      return;
    }
    const [n, inner, outer] = axis === 'y' ? [src.h, src.rw, src.d] : [src.d, src.h * src.rw, 1];
    // The register-segment kernel reflects once (windows no longer than the line).
    const useSeg = segY > 0 && win.k <= n;
    // Short windows gain nothing from long segments, which only cost registers (H100, k = 3: 8 rows 0.029 ms, 32 rows 0.040).
    const seg = useSeg ? (win.k <= SHORT_Y ? Math.min(segY, SHORT_Y) : segY) : this.schedule.segLines;
    const cols = this.schedule.segYCols;
    // Windows of up to SHORT_Y rows keep packed words (H200, k = 3: 0.0239 ms so, 0.0257–0.0261 on unpacked lanes,
    // bench/results/h200-morph101-tile.jsonl).
    const unpackY = this.schedule.unpackY && win.k > SHORT_Y;
    // Strips of four words need every line to start on a 16-byte boundary: a word count per line that is a multiple of 4.
    const vec4 = useSeg && this.schedule.yVec4 && inner % 4 === 0;
    const units = vec4 ? inner / 4 : inner;
    const pipe = useSeg
      ? await this.pipe('morph-seg-lines', segLinesWgsl({ dtype: this.dtype, isMin, k: win.k, seg, swar, cols, unpacked: unpackY, vec4, top: this.schedule.laneTop }), 'seg_lines')
      : await this.pipe('morph-vhgw-lines', vhgwLinesWgsl({ dtype: this.dtype, isMin, k: win.k, seg, swar }), 'vhgw_lines');
    const segs = Math.ceil(n / seg);
    const groups = useSeg ? Math.ceil(units / cols) * outer * Math.ceil(segs / (64 / cols)) : Math.ceil((inner * outer * segs) / 64);
    const [x, y] = grid1d(this.ctx, groups);
    const params = rec.uniform(LineParams, { n, inner: units, outer, a: win.a, reflect, fill: wordFill(this.dtype, op), segs, lines: 0, width: src.w });
    rec.dispatch(`morph.${op}.${axis}`, pipe, { src: src.buffer, dst: dst.buffer, P: params }, x, y);
  }

  /**
   * The fused x+y kernel for these windows, or undefined where it does not apply: the x window is one the
   * register-segment x kernel takes (2 words or more, no longer than the row), the y window reflects once (no
   * longer than the column), and a tile of at least one row an invocation fits workgroup memory.
   */
  fusedKernel(src: Aligned, wx: AxisWindow, wy: AxisWindow, op: MorphPrimitive): FusedKernel | undefined {
    const { fuseTW: tw, fuseXS: xs, fuseYS, fuseThreads: threads, unpackX: unpacked, swar, segX, directX } = this.schedule;
    if (tw === 0 || segX === 0 || wx.k <= directX || wx.k < 2 * lanes(this.dtype).epw || wx.k > src.w || wy.k > src.h) return undefined;
    const limit = this.ctx.limits.maxComputeWorkgroupStorageSize;
    for (let ys = fuseYS; ys >= 1; ys--) {
      const kn: FusedKernel = { dtype: this.dtype, isMin: op === 'erode', swar, kx: wx.k, ax: wx.a, ky: wy.k, ay: wy.a, tw, xs, ys, threads, unpacked };
      if (fusedLayout(kn).bytes <= limit) return kn;
    }
    return undefined;
  }

  private async fusedPass(rec: Recording, src: Aligned, dst: Aligned, kn: FusedKernel, op: MorphPrimitive, border: MorphBorder): Promise<void> {
    const pipe = await this.pipe('morph-fused', fusedWgsl(kn), 'fused');
    const { r } = fusedLayout(kn);
    const tilesX = Math.ceil(src.rw / kn.tw), tilesY = Math.ceil(src.h / r);
    const [x, y] = grid1d(this.ctx, tilesX * tilesY * src.d);
    const params = rec.uniform(FusedParams, { n: src.w, h: src.h, rw: src.rw, reflect: border === 'scipy' ? 1 : 0, fill: scalarFill(this.dtype, op), fillw: wordFill(this.dtype, op), tilesX, tilesY, planes: src.d });
    rec.dispatch(`morph.${op}.xy`, pipe, { src: src.buffer, dst: dst.buffer, P: params }, x, y);
  }

  private async directPass(rec: Recording, src: Aligned, dst: Aligned, offsets: Int32Array, op: MorphPrimitive, border: MorphBorder, label: string): Promise<void> {
    const pipe = await this.pipe('morph-direct', directWgsl(this.dtype, op === 'erode'), 'direct');
    const words = this.words(src);
    const [x, y] = grid1d(this.ctx, Math.ceil(words / 64));
    const params = rec.uniform(DirectParams, {
      width: src.w, height: src.h, depth: src.d, rw: src.rw, count: offsets.length / 3, reflect: border === 'scipy' ? 1 : 0, fill: scalarFill(this.dtype, op), words,
    });
    rec.dispatch(label, pipe, { src: src.buffer, dst: dst.buffer, offsets: rec.storageFrom(new Uint32Array(offsets.buffer, offsets.byteOffset, offsets.length), 'offsets'), P: params }, x, y);
  }

  /**
   * One erosion or dilation with its iterations. Returns a new aligned volume (a recording temporary unless
   * `keep`, then a pooled buffer the caller owns).
   */
  async primitive(rec: Recording, src: Aligned, op: MorphPrimitive, se: StructuringElement, border: MorphBorder, iterations: number, method: MorphMethod, keep = false): Promise<Aligned> {
    const steps: ((from: Aligned, to: Aligned) => Promise<void>)[] = [];
    if (se.kind === 'box' && method !== 'naive') {
      const { axes, repeat } = boxPasses(se, op, border, iterations, [src.d, src.h, src.w]);
      const [wx, wy] = axes;
      const fused = wx && wy ? this.fusedKernel(src, wx, wy, op) : undefined;
      for (let it = 0; it < repeat; it++) {
        if (fused) steps.push((f, t) => this.fusedPass(rec, f, t, fused, op, border));
        (['x', 'y', 'z'] as const).forEach((axis, i) => {
          const win = axes[i];
          if (win && !(fused && axis !== 'z')) steps.push((f, t) => this.linePass(rec, f, t, axis, win, op, border));
        });
      }
    } else {
      const offsets = maskOffsets(se, op, border);
      for (let it = 0; it < iterations; it++) steps.push((f, t) => this.directPass(rec, f, t, offsets, op, border, `morph.${op}.direct`));
    }
    if (steps.length === 0) {
      // A 1×1×1 element: the identity; still a buffer of its own.
      const out = this.scratch(rec, src, keep);
      rec.copy(src.buffer, out.buffer, this.words(src) * 4);
      return out;
    }
    let cur = src;
    for (let i = 0; i < steps.length; i++) {
      const next = this.scratch(rec, src, keep && i === steps.length - 1);
      await steps[i](cur, next);
      cur = next;
    }
    return cur;
  }

  /** a − b lane-wise (saturating for integers) into a new aligned volume. */
  async subtract(rec: Recording, a: Aligned, b: Aligned, keep = false): Promise<Aligned> {
    const out = this.scratch(rec, a, keep);
    const words = this.words(a);
    const [x, y] = grid1d(this.ctx, Math.ceil(words / 256));
    rec.dispatch('morph.subtract', await this.pipe('morph-subtract', subtractWgsl(this.dtype), 'subtract'), { a_in: a.buffer, b_in: b.buffer, dst: out.buffer, P: rec.uniform(SubtractParams, { words }) }, x, y);
    return out;
  }
}

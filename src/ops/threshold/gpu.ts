import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage } from '../../core/gpu/transfer.js';
import { pixelCount } from '../../core/image.js';
import { HistogramGpuPlan, type HistogramMethod } from '../histogram/gpu.js';
import { ApplyLutGpuPlan } from '../lut/gpu.js';
import { OtsuParams, otsuWgsl } from './otsu.wgsl.js';
import { gaussianKernel } from './local-kernels.js';
import { LocalParams, localThresholdWgsl, localThresholdWgslNativeFma } from './local.wgsl.js';
import { AdaptiveParams, adaptiveWgsl } from './adaptive.wgsl.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { alignedPackWgsl, PackParams } from '../../core/gpu/wgsl/aligned.js';
import { type BoxTile, FusedBoxParams, fusedBoxSharedBytes, fusedBoxWgsl } from './box-fused.wgsl.js';

/** The one-kernel Otsu pipeline of a context (compiled once, shared by every call). */
function otsuPipeline(ctx: GpuContext): Promise<GPUComputePipeline> {
  return ctx.plan('otsu', () => ctx.pipeline('otsu', otsuWgsl, 'main'));
}

const otsuCompiled = new WeakMap<GpuContext, { ready: boolean }>();

/**
 * Whether the one-kernel Otsu is compiled on `ctx`; the first call starts its compilation in the background. Its
 * software doubles make it slow to compile: 2.1–2.2 s on the H100 on a fresh machine (40 ms from the driver's disk
 * cache; docs/performance.md), where the other kernels take tens of ms. Until it is ready Otsu runs as steps —
 * the device histogram, OpenCV's threshold computed on the host in doubles, the LUT on the device — with the same
 * threshold and output, so no call waits for the compile. `start` false asks without starting it: a batch or a
 * pipeline (no extras) takes the steps unless the kernel is already there — on the H200 with a fresh driver cache,
 * a process that started the compile waited for it at exit, 2.1 s after its 200-photo batch had ended, while the
 * steps ran as fast as the kernel (docs/throughput.md).
 */
export function otsuKernelReady(ctx: GpuContext, start = true): boolean {
  let state = otsuCompiled.get(ctx);
  if (!state) {
    if (!start) return false;
    const s = { ready: false };
    otsuCompiled.set(ctx, (state = s));
    otsuPipeline(ctx).then(() => { s.ready = true; }, () => otsuCompiled.delete(ctx)); // a failed compile is tried again later
  }
  return state.ready;
}

/** Resolves once the one-kernel Otsu is compiled on `ctx` (and otsuKernelReady says so): tests, warm-ups. */
export async function otsuKernelCompiled(ctx: GpuContext): Promise<void> {
  otsuKernelReady(ctx);
  await otsuPipeline(ctx);
  otsuCompiled.get(ctx)!.ready = true;
}

/**
 * Otsu on the GPU: histogram → Otsu scan/reduction writing the binarization LUT → LUT application, recorded
 * into one command encoder with no host round trip (`inPlace`: the binary image written over the input, which is
 * returned: RunOptions.inPlace). Returns the binary image and a 16-byte buffer whose
 * first word is the threshold (read back by the caller: 4 bytes).
 */
export async function otsuGpu(input: GpuImage, rec: Recording, method: HistogramMethod, inPlace = false): Promise<{ image: GpuImage; threshold: GPUBuffer }> {
  const ctx: GpuContext = input.ctx;
  const dtype = input.dtype as 'uint8' | 'uint16';
  const bins = dtype === 'uint8' ? 256 : 65536;
  const [hist, otsu, apply] = await Promise.all([
    HistogramGpuPlan.prepare(ctx, { dtype, bins, masked: false, method }),
    otsuPipeline(ctx),
    ApplyLutGpuPlan.prepare(ctx, dtype, undefined, inPlace),
  ]);
  const n = pixelCount(input.shape);
  const histBuf = rec.storage(bins * 4, 'histogram');
  const lut = rec.storage(bins * 4, 'otsu lut');
  const threshold = acquireStorage(ctx, 16, 'otsu threshold');
  hist.encode(rec, input.buffer, n, histBuf);
  rec.dispatch('threshold.otsu', otsu, { hist: histBuf, lut, result: threshold, P: rec.uniform(OtsuParams, { total: n, bins, per_thread: bins / 256, maxv: bins - 1 }) }, 1);
  return { image: apply.image(rec, input, lut, 'otsu binary'), threshold };
}

/**
 * How the mean threshold runs on the GPU: windows up to `fusedMaxWindow` in the fused one-pass kernel
 * (box-fused.wgsl.ts) with `tile`, larger ones (or 0: all) in the separable passes through u32 buffers. Same output.
 */
export interface MeanSchedule {
  fusedMaxWindow: number;
  tile: BoxTile;
}

/** The largest window the fused kernel takes: its column sums are 16-bit lanes (255·k < 2¹⁶). */
export const FUSED_MAX_WINDOW = 63;

// From the H100 searches at 7680×4320, clock held, offset 2, each variant's image checked equal to the CPU's
// (bench/threshold-mean.ts; bench/results/h100-threshold-mean-variants.jsonl, -staged.jsonl). Back to back, windows
// 3 / 11 / 31 / 63: separable 1.54 / 1.52 / 1.51 / 1.48 ms; fused, column pass reading the input as it slides, best
// 0.157 / 0.195 / 0.267 / 0.444 ms (serial loads: shorter segments were faster); staged 128 × 16 tiles with 8-row
// column segments 0.067 / 0.086 / 0.143 / 0.245 ms: +6 / +4 / +8 / 0 % against the best tile of each window, and the
// lowest sum over the four. (The unstaged rows of -staged.jsonl ran staged kernels: fusedBoxPipeline's key lacked it.)
export const DEFAULT_MEAN_SCHEDULE: MeanSchedule = { fusedMaxWindow: FUSED_MAX_WINDOW, tile: { words: 32, rows: 16, segRows: 8, run: 2, stage: true } };

/**
 * The fused kernel's tile for a window on this device: the schedule's, with its rows halved until it fits the
 * workgroup memory, then the same unstaged (its input rows no longer held); undefined (the separable passes) where
 * the window is beyond the schedule's or no tile fits.
 */
export function fusedTile(ctx: GpuContext, window: number, s: MeanSchedule): BoxTile | undefined {
  if (window > Math.min(s.fusedMaxWindow, FUSED_MAX_WINDOW)) return undefined;
  const r = (window - 1) / 2;
  for (const stage of s.tile.stage ? [true, false] : [false]) {
    for (let rows = s.tile.rows; rows >= 1; rows >>= 1) {
      const t = { ...s.tile, rows, segRows: Math.min(s.tile.segRows, rows), stage };
      if (fusedBoxSharedBytes(r, t) <= ctx.limits.maxComputeWorkgroupStorageSize) return t;
    }
  }
  return undefined;
}

/**
 * cv2.adaptiveThreshold on the GPU. Mean, windows up to the schedule's: one fused pass (box-fused.wgsl.ts), rows
 * repacked afterwards where the width is not a multiple of 4 (its output rows are whole words). Otherwise two
 * separable window passes (box: sliding sums; gaussian: float taps), then the packed binarization; window means go
 * through a u32 buffer per pixel.
 */
export async function localThresholdGpu(
  input: GpuImage, rec: Recording, [h, w]: [number, number], method: 'mean' | 'gaussian', window: number, offset: number,
  schedule: MeanSchedule = DEFAULT_MEAN_SCHEDULE,
): Promise<GpuImage> {
  const tile = method === 'mean' ? fusedTile(input.ctx, window, schedule) : undefined;
  const image = tile ? await fusedMeanGpu(input, rec, [h, w], window, offset, tile) : await separableGpu(input, rec, [h, w], method, window, offset);
  return new GpuImage(input.ctx, image, [...input.shape] as GpuImage['shape'], 1, 'uint8');
}

/**
 * ceil(C) for the fused kernel, within [−256, 256]: src + ceil(C) ≤ 0 never passes (the mean is ≥ 0) and ≥ 256
 * always does (the mean is ≤ 255), so the clamp changes no pixel and keeps the kernel's sums from overflowing.
 */
const clampedDelta = (offset: number) => Math.max(-256, Math.min(256, Math.ceil(offset)));

/** The fused kernel for a window and tile, compiled once per context. */
export function fusedBoxPipeline(ctx: GpuContext, window: number, tile: BoxTile): Promise<GPUComputePipeline> {
  const r = (window - 1) / 2;
  // Every field of the tile: a staged and an unstaged tile of the same shape are different kernels.
  const key = `local:box_fused:${r}:${tile.words}x${tile.rows}:${tile.segRows}:${tile.run}:${tile.stage ? 'staged' : 'direct'}`;
  return ctx.plan(key, () => ctx.pipeline('threshold.mean.fused', fusedBoxWgsl(r, tile), 'box_fused'));
}

/** The fused mean threshold (one tile per workgroup); the binary image's buffer. */
async function fusedMeanGpu(input: GpuImage, rec: Recording, [h, w]: [number, number], window: number, offset: number, tile: BoxTile): Promise<GPUBuffer> {
  const ctx = input.ctx;
  const pipe = await fusedBoxPipeline(ctx, window, tile);
  const rw = Math.ceil(w / 4);
  const tilesX = Math.ceil(rw / tile.words);
  const n = w * h;
  const out = acquireStorage(ctx, n, 'local binary');
  // Rows of whole words: the output itself when they are, else a temporary repacked below.
  const aligned = w % 4 === 0 ? out : rec.storage(h * rw * 4, 'local binary aligned');
  const params = rec.uniform(FusedBoxParams, { w, h, rw, tiles_x: tilesX, idelta: clampedDelta(offset) });
  rec.dispatch('threshold.mean.fused', pipe, { src: input.buffer, P: params, dst: aligned }, ...grid1d(ctx, tilesX * Math.ceil(h / tile.rows)));
  if (aligned !== out) {
    const pack = await ctx.plan('local:from_aligned', () => ctx.pipeline('aligned-pack', alignedPackWgsl({ epw: 4, bits: 8, mask: '0xffu' }), 'from_aligned'));
    const words = Math.ceil(n / 4);
    rec.dispatch('threshold.mean.unalign', pack, { src: aligned, dst: out, P: rec.uniform(PackParams, { width: w, rw, rows: h, words }) }, ...grid1d(ctx, Math.ceil(words / 256)));
  }
  return out;
}

/** The separable passes through u32 buffers, then the binarization; the binary image's buffer. */
async function separableGpu(input: GpuImage, rec: Recording, [h, w]: [number, number], method: 'mean' | 'gaussian', window: number, offset: number): Promise<GPUBuffer> {
  const ctx = input.ctx;
  // The Gaussian's fma: WGSL's own where the adapter fuses it (probed once per context), else in software; the
  // same results either way, the dispatch names ('….fma') say which ran.
  const fma = method === 'gaussian' && (await ctx.fusedFma()) ? '.fma' : '';
  const code = fma ? localThresholdWgslNativeFma : localThresholdWgsl;
  const passes = method === 'mean' ? ['box_rows', 'box_cols'] : ['gauss_rows', 'gauss_cols'];
  const [first, second, binarize] = await Promise.all([
    ...passes.map((e) => ctx.plan(`local:${e}${fma}`, () => ctx.pipeline(`threshold.local${fma}`, code, e))),
    ctx.plan('local:binarize', () => ctx.pipeline('threshold.local', localThresholdWgsl, 'binarize')),
  ]);
  const n = w * h;
  const r = (window - 1) / 2;
  // `zero`: a value the kernels cannot know, which keeps the Gaussian's exact fma opaque (exact-float.ts).
  const params = rec.uniform(LocalParams, { w, h, r, idelta: Math.ceil(offset), n, zero: 0 });
  const means = rec.storage(n * 4, 'local means');
  const out = acquireStorage(ctx, n, 'local binary');
  const groups = (items: number) => grid1d(ctx, Math.ceil(items / 256));
  if (method === 'mean') {
    const sums = rec.storage(n * 4, 'row sums');
    rec.dispatch('threshold.mean.rows', first, { src: input.buffer, P: params, row_sums: sums }, ...groups(Math.ceil(w / 64) * h));
    rec.dispatch('threshold.mean.cols', second, { P: params, row_sums: sums, means }, ...groups(Math.ceil(h / 64) * w));
  } else {
    const taps = rec.storage(window * 4, 'gaussian taps');
    ctx.device.queue.writeBuffer(taps, 0, gaussianKernel(window) as Float32Array<ArrayBuffer>);
    const rows = rec.storage(n * 4, 'gaussian rows');
    rec.dispatch(`threshold.gaussian.rows${fma}`, first, { src: input.buffer, P: params, taps, rows }, ...groups(n));
    rec.dispatch(`threshold.gaussian.cols${fma}`, second, { P: params, means, taps, rows }, ...groups(n));
  }
  rec.dispatch('threshold.binarize', binarize, { src: input.buffer, P: params, means, dst: out }, ...groups(Math.ceil(n / 4)));
  return out;
}

/** Adaptive isodata on the GPU: per-pixel window thresholds (naive or sliding scheme), then binarize. */
export async function adaptiveGpu(
  input: GpuImage, rec: Recording, [h, w]: [number, number], window: number, contrast: number, fallback: number, scheme: 'sliding' | 'naive',
): Promise<GpuImage> {
  const ctx = input.ctx;
  const [main, binarize] = await Promise.all([
    ctx.plan(`adaptive:${scheme}`, () => ctx.pipeline('threshold.adaptive', adaptiveWgsl, `adaptive_${scheme}`)),
    ctx.plan('local:binarize', () => ctx.pipeline('threshold.local', localThresholdWgsl, 'binarize')),
  ]);
  const n = w * h;
  const r = (window - 1) / 2;
  const thresholds = rec.storage(n * 4, 'adaptive thresholds');
  const out = acquireStorage(ctx, n, 'adaptive binary');
  const items = scheme === 'naive' ? n : Math.ceil(w / 32) * h;
  rec.dispatch(`threshold.adaptive.${scheme}`, main, { src: input.buffer, P: rec.uniform(AdaptiveParams, { w, h, r, contrast, fallback, n }), thresholds },
    ...grid1d(ctx, Math.ceil(items / 64)));
  // src − t(p) > 0 ⇔ src > t(p): the local binarize kernel with C = 0.
  rec.dispatch('threshold.binarize', binarize, { src: input.buffer, P: rec.uniform(LocalParams, { w, h, r, idelta: 0, n, zero: 0 }), means: thresholds, dst: out },
    ...grid1d(ctx, Math.ceil(n / 4 / 256)));
  return new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
}

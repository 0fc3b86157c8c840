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

/**
 * Otsu on the GPU: histogram → Otsu scan/reduction writing the binarization LUT → LUT application, recorded
 * into one command encoder with no host round trip. Returns the binary image and a 16-byte buffer whose
 * first word is the threshold (read back by the caller: 4 bytes).
 */
export async function otsuGpu(input: GpuImage, rec: Recording, method: HistogramMethod): Promise<{ image: GpuImage; threshold: GPUBuffer }> {
  const ctx: GpuContext = input.ctx;
  const dtype = input.dtype as 'uint8' | 'uint16';
  const bins = dtype === 'uint8' ? 256 : 65536;
  const [hist, otsu, apply] = await Promise.all([
    HistogramGpuPlan.prepare(ctx, { dtype, bins, masked: false, method }),
    ctx.plan('otsu', () => ctx.pipeline('otsu', otsuWgsl, 'main')),
    ApplyLutGpuPlan.prepare(ctx, dtype),
  ]);
  const n = pixelCount(input.shape);
  const histBuf = rec.storage(bins * 4, 'histogram');
  const lut = rec.storage(bins * 4, 'otsu lut');
  const threshold = acquireStorage(ctx, 16, 'otsu threshold');
  const out = acquireStorage(ctx, input.byteLength, 'otsu binary');
  hist.encode(rec, input.buffer, n, histBuf);
  rec.dispatch('threshold.otsu', otsu, [histBuf, lut, threshold, rec.uniform(OtsuParams, { total: n, bins, per_thread: bins / 256, maxv: bins - 1 }, 'otsu params')], 1);
  apply.encode(rec, input.buffer, out, lut, n);
  return { image: new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], 1, input.dtype), threshold };
}

/**
 * cv2.adaptiveThreshold on the GPU: two separable window passes (box: sliding sums; gaussian: float taps),
 * then the packed binarization. Window means go through a u32 buffer per pixel.
 */
export async function localThresholdGpu(
  input: GpuImage, rec: Recording, [h, w]: [number, number], method: 'mean' | 'gaussian', window: number, offset: number,
): Promise<GpuImage> {
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
  const params = rec.uniform(LocalParams, { w, h, r, idelta: Math.ceil(offset), n, zero: 0 }, 'local params');
  const means = rec.storage(n * 4, 'local means');
  const out = acquireStorage(ctx, n, 'local binary');
  const groups = (items: number) => grid1d(ctx, Math.ceil(items / 256));
  if (method === 'mean') {
    const sums = rec.storage(n * 4, 'row sums');
    rec.dispatch('threshold.mean.rows', first, ({ 0: input.buffer, 1: params, 2: sums }), ...groups(Math.ceil(w / 64) * h));
    rec.dispatch('threshold.mean.cols', second, ({ 1: params, 2: sums, 3: means }), ...groups(Math.ceil(h / 64) * w));
  } else {
    const taps = rec.storage(window * 4, 'gaussian taps');
    ctx.device.queue.writeBuffer(taps, 0, gaussianKernel(window) as Float32Array<ArrayBuffer>);
    const rows = rec.storage(n * 4, 'gaussian rows');
    rec.dispatch(`threshold.gaussian.rows${fma}`, first, ({ 0: input.buffer, 1: params, 4: taps, 5: rows }), ...groups(n));
    rec.dispatch(`threshold.gaussian.cols${fma}`, second, ({ 1: params, 3: means, 4: taps, 5: rows }), ...groups(n));
  }
  rec.dispatch('threshold.binarize', binarize, ({ 0: input.buffer, 1: params, 3: means, 6: out }), ...groups(Math.ceil(n / 4)));
  return new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
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
  rec.dispatch(`threshold.adaptive.${scheme}`, main, { 0: input.buffer, 1: rec.uniform(AdaptiveParams, { w, h, r, contrast, fallback, n }, 'adaptive params'), 2: thresholds },
    ...grid1d(ctx, Math.ceil(items / 64)));
  // src − t(p) > 0 ⇔ src > t(p): the local binarize kernel with C = 0.
  rec.dispatch('threshold.binarize', binarize, { 0: input.buffer, 1: rec.uniform(LocalParams, { w, h, r, idelta: 0, n, zero: 0 }, 'binarize params'), 3: thresholds, 6: out },
    ...grid1d(ctx, Math.ceil(n / 4 / 256)));
  return new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], 1, 'uint8');
}

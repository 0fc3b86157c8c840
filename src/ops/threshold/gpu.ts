import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage } from '../../core/gpu/transfer.js';
import { pixelCount } from '../../core/image.js';
import { HistogramGpuPlan, type HistogramMethod } from '../histogram/gpu.js';
import { ApplyLutGpuPlan } from '../lut/gpu.js';
import { otsuWgsl } from './otsu.wgsl.js';

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
  rec.dispatch('threshold.otsu', otsu, [histBuf, lut, threshold, rec.uniform([n, bins, bins / 256, bins - 1], 'otsu params')], 1);
  apply.encode(rec, input.buffer, out, lut, n);
  return { image: new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], 1, input.dtype), threshold };
}

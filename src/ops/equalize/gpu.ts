import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { pixelCount } from '../../core/image.js';
import { HistogramGpuPlan, type HistogramMethod } from '../histogram/gpu.js';
import { ApplyLutGpuPlan } from '../lut/gpu.js';
import { equalizeLutWgsl, LutParams } from './equalize.wgsl.js';

/** Builds the equalization LUT from a histogram buffer on the device (one workgroup). */
class EqualizeLutGpuPlan {
  private constructor(private readonly pipeline: GPUComputePipeline) {}

  static prepare(ctx: GpuContext): Promise<EqualizeLutGpuPlan> {
    return ctx.plan('equalizeLut', async () => new EqualizeLutGpuPlan(await ctx.pipeline('equalize-lut', equalizeLutWgsl, 'build_lut')));
  }

  encode(rec: Recording, hist: GPUBuffer, lut: GPUBuffer, bins: number, total: number): void {
    rec.dispatch('equalize.lut', this.pipeline, { hist, lut, L: rec.uniform(LutParams, { total, bins, per_thread: bins / 256, maxv: bins - 1 }) }, 1);
  }
}

/**
 * Histogram → LUT → apply, recorded into one command encoder: no host round trip in between. `inPlace`: the output
 * is written over the input, which is returned (RunOptions.inPlace).
 */
export async function equalizeGpu(input: GpuImage, rec: Recording, method: HistogramMethod = 'atomic', inPlace = false): Promise<GpuImage> {
  const ctx = input.ctx;
  const dtype = input.dtype as 'uint8' | 'uint16';
  const [hist, lutPlan, apply] = await Promise.all([
    HistogramGpuPlan.prepare(ctx, { dtype, bins: dtype === 'uint8' ? 256 : 65536, masked: false, method }), EqualizeLutGpuPlan.prepare(ctx),
    ApplyLutGpuPlan.prepare(ctx, dtype, undefined, inPlace),
  ]);
  const n = pixelCount(input.shape);
  const histBuf = rec.storage(hist.bins * 4, 'histogram');
  const lutBuf = rec.storage(hist.bins * 4, 'lut');
  hist.encode(rec, input.buffer, n, histBuf);
  lutPlan.encode(rec, histBuf, lutBuf, hist.bins, n);
  return apply.image(rec, input, lutBuf, 'equalized');
}

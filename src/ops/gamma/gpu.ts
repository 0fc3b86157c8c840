import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { bindingRanges, rangeBinding } from '../../core/gpu/limits.js';
import type { Recording } from '../../core/gpu/recording.js';
import { acquireStorage, deviceBytes } from '../../core/gpu/transfer.js';
import { pixelCount } from '../../core/image.js';
import { ApplyLutGpuPlan } from '../lut/gpu.js';
import { GammaParams, gammaF32Wgsl } from './gamma.wgsl.js';
import { gammaLut16, gammaLut8 } from './lut.js';

const WG = 256;

/** The float32 kernel, over binding-sized ranges of the image. */
class GammaF32GpuPlan {
  private constructor(private readonly ctx: GpuContext, private readonly pipeline: GPUComputePipeline) {}

  static prepare(ctx: GpuContext): Promise<GammaF32GpuPlan> {
    return ctx.plan('gamma:f32', async () => new GammaF32GpuPlan(ctx, await ctx.pipeline('gamma-f32', gammaF32Wgsl, 'gamma_f32', { WG })));
  }

  encode(rec: Recording, src: GPUBuffer, dst: GPUBuffer, n: number, gamma: number, gain: number): void {
    const ranges = bindingRanges(this.ctx, n, 4);
    rec.split(ranges.length);
    for (const r of ranges) {
      const vecs = deviceBytes(r.count * 4) / 16;
      const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(vecs / WG)));
      const whole = ranges.length === 1;
      rec.dispatch('gamma.f32', this.pipeline, { src: rangeBinding(src, r, 4, whole), dst: rangeBinding(dst, r, 4, whole), P: rec.uniform(GammaParams, { vecs, gamma, gain }) }, x, y);
    }
  }
}

/** Gamma correction recorded for a resident image: the LUT of 8/16-bit values (made on the host), or the float kernel. */
export async function gammaGpu(input: GpuImage, rec: Recording, gamma: number, gain: number): Promise<GpuImage> {
  const ctx = input.ctx;
  if (input.dtype !== 'float32') {
    const lut = input.dtype === 'uint8' ? gammaLut8(gamma, gain) : gammaLut16(gamma, gain);
    return (await ApplyLutGpuPlan.prepare(ctx, input.dtype)).image(rec, input, rec.storageFrom(lut, 'gamma lut'), 'gamma');
  }
  const out = acquireStorage(ctx, input.byteLength, 'gamma');
  (await GammaF32GpuPlan.prepare(ctx)).encode(rec, input.buffer, out, pixelCount(input.shape) * input.channels, gamma, gain);
  return new GpuImage(ctx, out, [...input.shape] as GpuImage['shape'], input.channels, input.dtype);
}

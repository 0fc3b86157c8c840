import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import type { Recording } from '../../core/gpu/recording.js';
import { deviceBytes } from '../../core/gpu/transfer.js';
import { applyLutWgsl } from './apply-lut.wgsl.js';

const WG = 256;
const VECS_PER_INVOCATION = 4;

/** Plan for applying a u32 LUT buffer to an 8- or 16-bit image buffer on one device. */
export class ApplyLutGpuPlan {
  private constructor(private readonly ctx: GpuContext, readonly dtype: 'uint8' | 'uint16', private readonly pipeline: GPUComputePipeline) {}

  static async prepare(ctx: GpuContext, dtype: 'uint8' | 'uint16'): Promise<ApplyLutGpuPlan> {
    const key = `applyLut:${dtype}`;
    const cached = ctx.plans.get(key) as ApplyLutGpuPlan | undefined;
    if (cached) return cached;
    const pipeline = await ctx.pipeline('apply-lut', applyLutWgsl, dtype === 'uint8' ? 'apply_u8' : 'apply_u16', { WG });
    const plan = new ApplyLutGpuPlan(ctx, dtype, pipeline);
    ctx.plans.set(key, plan);
    return plan;
  }

  /** Records dst[i] = lut[src[i]] over the `n` pixels (whole 16-byte vectors). */
  encode(rec: Recording, src: GPUBuffer, dst: GPUBuffer, lut: GPUBuffer, n: number): void {
    const vecs = deviceBytes(n * (this.dtype === 'uint8' ? 1 : 2)) / 16;
    const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(vecs / (WG * VECS_PER_INVOCATION))));
    rec.dispatch(`applyLut.${this.dtype}`, this.pipeline, [src, dst, lut, rec.uniform([vecs], 'apply-lut params')], x, y);
  }
}

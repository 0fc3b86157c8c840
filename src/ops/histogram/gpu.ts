import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import type { Recording } from '../../core/gpu/recording.js';
import { deviceBytes } from '../../core/gpu/transfer.js';
import type { Dtype } from '../../core/image.js';
import { histogramWgsl } from './histogram.wgsl.js';

/** Schedule: invocations per workgroup and 16-byte vectors each invocation reads (Halide-style, kept apart). */
const WG = 256;
const VECS_PER_INVOCATION = 8;

/**
 * Plan for full-range GPU histograms of one dtype on one device: pipeline and parameter buffer are made
 * once per device (prepare), `encode` only records work.
 */
export class HistogramGpuPlan {
  private constructor(
    private readonly ctx: GpuContext,
    readonly dtype: Dtype,
    readonly bins: number,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async prepare(ctx: GpuContext, dtype: 'uint8' | 'uint16'): Promise<HistogramGpuPlan> {
    const key = `histogram:${dtype}`;
    const cached = ctx.plans.get(key) as HistogramGpuPlan | undefined;
    if (cached) return cached;
    const pipeline = await ctx.pipeline('histogram', histogramWgsl, dtype === 'uint8' ? 'hist_u8' : 'hist_u16', { WG });
    const plan = new HistogramGpuPlan(ctx, dtype, dtype === 'uint8' ? 256 : 65536, pipeline);
    ctx.plans.set(key, plan);
    return plan;
  }

  /** Records: zero `hist`, then count the `n` pixels of `src` into it. */
  encode(rec: Recording, src: GPUBuffer, n: number, hist: GPUBuffer): void {
    const bytes = n * (this.dtype === 'uint8' ? 1 : 2);
    const vecs = deviceBytes(bytes) / 16;
    rec.encoder.clearBuffer(hist, 0, this.bins * 4);
    const groups = Math.max(1, Math.ceil(vecs / (WG * VECS_PER_INVOCATION)));
    const [x, y] = grid1d(this.ctx, groups);
    rec.dispatch(`histogram.atomic.${this.dtype}`, this.pipeline, [src, hist, rec.uniform([n, vecs], 'histogram params')], x, y);
  }
}

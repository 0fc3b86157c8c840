import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import type { Recording } from '../../core/gpu/recording.js';
import { bindingRanges, rangeBinding } from '../../core/gpu/limits.js';
import { deviceBytes } from '../../core/gpu/transfer.js';
import { ApplyParams, applyLutWgsl } from './apply-lut.wgsl.js';

/** Schedule: invocations per workgroup and 16-byte vectors per invocation. */
export interface ApplyLutSchedule {
  wg: number;
  vecsPerInvocation: number;
}
// Measured on the H100, 7680×4320: 1 vector (16 pixels) per invocation, 25.8 µs (the 66 MB it moves take
// 24.5 µs at 2.7 TB/s); more work per invocation was slower.
export const DEFAULT_APPLY_LUT_SCHEDULE: ApplyLutSchedule = { wg: 256, vecsPerInvocation: 1 };

/** Plan for applying a u32 LUT buffer to an 8- or 16-bit image buffer on one device. */
export class ApplyLutGpuPlan {
  private constructor(
    private readonly ctx: GpuContext,
    readonly dtype: 'uint8' | 'uint16',
    private readonly pipeline: GPUComputePipeline,
    private readonly schedule: ApplyLutSchedule,
  ) {}

  static async prepare(ctx: GpuContext, dtype: 'uint8' | 'uint16', schedule = DEFAULT_APPLY_LUT_SCHEDULE): Promise<ApplyLutGpuPlan> {
    return ctx.plan(`applyLut:${dtype}:${JSON.stringify(schedule)}`, async () => {
      const pipeline = await ctx.pipeline('apply-lut', applyLutWgsl, dtype === 'uint8' ? 'apply_u8' : 'apply_u16', { WG: schedule.wg });
      return new ApplyLutGpuPlan(ctx, dtype, pipeline, schedule);
    });
  }

  /** Records dst[i] = lut[src[i]] over the `n` pixels (whole 16-byte vectors), range by range beyond one binding. */
  encode(rec: Recording, src: GPUBuffer, dst: GPUBuffer, lut: GPUBuffer, n: number): void {
    const bpp = this.dtype === 'uint8' ? 1 : 2;
    const ranges = bindingRanges(this.ctx, n, bpp);
    rec.split(ranges.length);
    for (const r of ranges) {
      const vecs = deviceBytes(r.count * bpp) / 16;
      const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(vecs / (this.schedule.wg * this.schedule.vecsPerInvocation))));
      const whole = ranges.length === 1;
      rec.dispatch(`applyLut.${this.dtype}`, this.pipeline, { src: rangeBinding(src, r, bpp, whole), dst: rangeBinding(dst, r, bpp, whole), table: lut, A: rec.uniform(ApplyParams, { vecs }) }, x, y);
    }
  }
}

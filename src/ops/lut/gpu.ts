import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import type { Bindings, Recording } from '../../core/gpu/recording.js';
import { bindingRanges, rangeBinding } from '../../core/gpu/limits.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { acquireStorage, deviceBytes } from '../../core/gpu/transfer.js';
import { pixelCount } from '../../core/image.js';
import { ApplyParams, applyLutWgsl } from './apply-lut.wgsl.js';

/** Schedule: invocations per workgroup and 16-byte vectors per invocation. */
export interface ApplyLutSchedule {
  wg: number;
  vecsPerInvocation: number;
}
// Measured on the H100, 7680×4320: 1 vector (16 pixels) per invocation, 25.8 µs (the 66 MB it moves take
// 24.5 µs at 2.7 TB/s); more work per invocation was slower.
export const DEFAULT_APPLY_LUT_SCHEDULE: ApplyLutSchedule = { wg: 256, vecsPerInvocation: 1 };

/**
 * Plan for applying a u32 LUT buffer to an 8- or 16-bit image buffer on one device: into another buffer, or (`inPlace`)
 * over the image itself.
 */
export class ApplyLutGpuPlan {
  private constructor(
    private readonly ctx: GpuContext,
    readonly dtype: 'uint8' | 'uint16',
    readonly inPlace: boolean,
    private readonly pipeline: GPUComputePipeline,
    private readonly schedule: ApplyLutSchedule,
  ) {}

  static async prepare(ctx: GpuContext, dtype: 'uint8' | 'uint16', schedule = DEFAULT_APPLY_LUT_SCHEDULE, inPlace = false): Promise<ApplyLutGpuPlan> {
    return ctx.plan(`applyLut:${dtype}:${inPlace ? 'inplace:' : ''}${JSON.stringify(schedule)}`, async () => {
      const entry = `${dtype === 'uint8' ? 'apply_u8' : 'apply_u16'}${inPlace ? '_inplace' : ''}`;
      const pipeline = await ctx.pipeline('apply-lut', applyLutWgsl, entry, { WG: schedule.wg });
      return new ApplyLutGpuPlan(ctx, dtype, inPlace, pipeline, schedule);
    });
  }

  /**
   * Records the LUT applied to every sample of a resident image: over the image itself where this plan is in place
   * (the input is returned as the output), else into a new pooled image (`label`) of the same shape and channels.
   */
  image(rec: Recording, input: GpuImage, lut: GPUBuffer, label: string): GpuImage {
    const n = pixelCount(input.shape) * input.channels;
    if (this.inPlace) {
      this.encode(rec, input.buffer, input.buffer, lut, n);
      return input;
    }
    const out = acquireStorage(this.ctx, input.byteLength, label);
    this.encode(rec, input.buffer, out, lut, n);
    return new GpuImage(this.ctx, out, [...input.shape] as GpuImage['shape'], input.channels, input.dtype);
  }

  /**
   * Records dst[i] = lut[src[i]] over the `n` pixels (whole 16-byte vectors), range by range beyond one binding. An
   * in-place plan takes `dst` === `src`, and only that.
   */
  encode(rec: Recording, src: GPUBuffer, dst: GPUBuffer, lut: GPUBuffer, n: number): void {
    if ((src === dst) !== this.inPlace) throw new Error(`applyLut: ${this.inPlace ? 'an in-place plan writes over its input' : 'the output must be another buffer than the input'}`);
    const bpp = this.dtype === 'uint8' ? 1 : 2;
    const ranges = bindingRanges(this.ctx, n, bpp);
    rec.split(ranges.length);
    for (const r of ranges) {
      const vecs = deviceBytes(r.count * bpp) / 16;
      const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(vecs / (this.schedule.wg * this.schedule.vecsPerInvocation))));
      const whole = ranges.length === 1;
      const A = rec.uniform(ApplyParams, { vecs });
      const buffers: Bindings = this.inPlace
        ? { data: rangeBinding(src, r, bpp, whole), table: lut, A }
        : { src: rangeBinding(src, r, bpp, whole), dst: rangeBinding(dst, r, bpp, whole), table: lut, A };
      rec.dispatch(`applyLut.${this.dtype}`, this.pipeline, buffers, x, y);
    }
  }
}

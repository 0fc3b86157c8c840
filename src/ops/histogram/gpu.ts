import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import type { Recording } from '../../core/gpu/recording.js';
import { bindingRanges, checkBinding, maxBinding, rangeBinding, type ElementRange } from '../../core/gpu/limits.js';
import { deviceBytes } from '../../core/gpu/transfer.js';
import { HistogramParams, PIXELS_PER_VEC, SUB_BINS, SumParams, atomicHistogramWgsl, subHistogramWgsl, sumPartialsWgsl } from './histogram.wgsl.js';

/** The advice where sub-histograms exceed a binding; the CLI words it as its flag (engine/flags.ts). */
export const ATOMIC_HISTOGRAM = "the 'atomic' histogram method";

/** The two GPU histogram algorithms (see histogram.wgsl.ts). */
export type HistogramMethod = 'atomic' | 'subhist';
export const HISTOGRAM_METHODS: readonly HistogramMethod[] = ['atomic', 'subhist'];

export interface HistogramGpuConfig {
  dtype: 'uint8' | 'uint16';
  bins: number;
  masked: boolean;
  method: HistogramMethod;
}

/**
 * Schedule, kept apart from the algorithm (Halide-style): invocations per workgroup, 16-byte vectors each
 * invocation reads, replicated workgroup histograms (atomic contention vs. merge cost) for "atomic".
 */
export interface HistogramSchedule {
  wg: number;
  vecsPerInvocation: number;
  copies: number;
}
// Measured on the H100, 7680×4320 (bench/kernels.ts, steady state): 1 copy and 32 vectors per invocation
// was fastest on a photograph (14.3 µs) and close to the best on noise (18.9 µs, best 17.6 µs).
export const DEFAULT_HISTOGRAM_SCHEDULE: HistogramSchedule = { wg: 256, vecsPerInvocation: 32, copies: 1 };
/**
 * "subhist": 64 invocations, 64 vectors each (1024 8-bit pixels into one private histogram). Measured on the
 * H100 at 7680×4320, steady state: 4 → 3.96 ms, 16 → 1.16 ms, 64 → 0.55 ms (photo): the per-invocation
 * histogram lives in local memory and its 256-bin reduction dominates, so each invocation must count many
 * pixels to amortize it.
 */
export const SUBHIST_SCHEDULE: HistogramSchedule = { wg: 64, vecsPerInvocation: 64, copies: 1 };
/** Upper bound for subhist's per-workgroup partial histograms (chunks grow to stay under it). */
const MAX_PARTIAL_BYTES = 64 << 20;

/** Plan for GPU histograms of one configuration on one device: pipelines made once, `encode` records work. */
export class HistogramGpuPlan {
  private constructor(
    private readonly ctx: GpuContext,
    readonly config: HistogramGpuConfig,
    private readonly schedule: HistogramSchedule,
    private readonly main: GPUComputePipeline,
    private readonly sum?: GPUComputePipeline,
  ) {}

  get bins(): number {
    return this.config.bins;
  }

  static prepare(ctx: GpuContext, config: HistogramGpuConfig, schedule?: HistogramSchedule): Promise<HistogramGpuPlan> {
    const s = schedule ?? (config.method === 'atomic' ? DEFAULT_HISTOGRAM_SCHEDULE : SUBHIST_SCHEDULE);
    return ctx.plan(`histogram:${JSON.stringify(config)}:${JSON.stringify(s)}`, async () => {
      const spec = { dtype: config.dtype, masked: config.masked };
      if (config.method === 'subhist') {
        const [main, sum] = await Promise.all([
          ctx.pipeline('histogram.subhist', subHistogramWgsl(spec), 'main', { WG: s.wg }),
          ctx.pipeline('histogram.sum-partials', sumPartialsWgsl, 'main'),
        ]);
        return new HistogramGpuPlan(ctx, config, s, main, sum);
      }
      // Privatize in workgroup memory when the bins fit (always for 8-bit), else count globally.
      const localBins = config.dtype === 'uint8' ? 256 : config.bins;
      const fits = localBins * s.copies * 4 <= ctx.limits.maxComputeWorkgroupStorageSize;
      const main = await ctx.pipeline('histogram.atomic', atomicHistogramWgsl(spec, fits ? localBins : 0, s.copies), 'main', { WG: s.wg });
      return new HistogramGpuPlan(ctx, config, s, main);
    });
  }

  /**
   * Records: zero `hist` (unless `clear` is false: accumulate; "atomic" only), then count the `n` pixels of
   * `src` (where `mask` is non-zero, if the plan is masked) into it. An image beyond one storage binding is
   * counted range by range (core/gpu/limits.ts): "atomic" accumulates, "subhist" writes each range's partials
   * after the previous ones and sums them all once.
   */
  encode(rec: Recording, src: GPUBuffer, n: number, hist: GPUBuffer, mask?: GPUBuffer, clear = true): void {
    const { dtype, bins, method } = this.config;
    const bpp = dtype === 'uint8' ? 1 : 2;
    const ranges = bindingRanges(this.ctx, n, bpp);
    const whole = ranges.length === 1;
    rec.split(ranges.length);
    const bind = (r: ElementRange) => ({ src: rangeBinding(src, r, bpp, whole), ...(this.config.masked ? { mask: rangeBinding(mask!, r, 1, whole) } : {}) });
    const vecsOf = (r: ElementRange) => deviceBytes(r.count * bpp) / 16;
    const name = `histogram.${method}.${dtype}`;
    if (method === 'atomic') {
      if (clear) rec.clear(hist, bins * 4);
      const per = this.schedule.vecsPerInvocation;
      for (const r of ranges) {
        const vecs = vecsOf(r);
        const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(vecs / (this.schedule.wg * per))));
        rec.dispatch(name, this.main, { ...bind(r), hist, P: rec.uniform(HistogramParams, { n: r.count, vecs, bins, per_invocation: per, bin_groups: 1, part_base: 0 }) }, x, y);
      }
      return;
    }
    const binGroups = Math.ceil(bins / SUB_BINS);
    let per = this.schedule.vecsPerInvocation;
    const chunksOf = (r: ElementRange) => Math.ceil(vecsOf(r) / (this.schedule.wg * per));
    const allChunks = () => ranges.reduce((a, r) => a + chunksOf(r), 0);
    const maxPartials = Math.min(MAX_PARTIAL_BYTES, maxBinding(this.ctx));
    while (allChunks() > ranges.length && allChunks() * bins * 4 > maxPartials) per *= 2;
    const total = allChunks();
    checkBinding(this.ctx, total * bins * 4, `histogram: ${total} partial histograms of ${bins} bins`, `use ${ATOMIC_HISTOGRAM}`);
    const partials = rec.storage(total * bins * 4, 'histogram partials');
    let base = 0;
    for (const r of ranges) {
      const chunks = chunksOf(r);
      const [x, y] = grid1d(this.ctx, chunks * binGroups);
      rec.dispatch(name, this.main, { ...bind(r), partials, P: rec.uniform(HistogramParams, { n: r.count, vecs: vecsOf(r), bins, per_invocation: per, bin_groups: binGroups, part_base: base }) }, x, y);
      base += chunks;
    }
    const [sx, sy] = grid1d(this.ctx, Math.ceil(bins / 256));
    rec.dispatch(`${name}.sum`, this.sum!, { partials, hist, S: rec.uniform(SumParams, { bins, chunks: total }) }, sx, sy);
  }
}

export { PIXELS_PER_VEC };

import type { GpuContext } from './context.js';
import { grid1d } from './dispatch.js';
import { checkBinding } from './limits.js';
import type { Recording } from './recording.js';
import { SCAN_GROUP, ScanParams, scanKernelsWgsl } from './wgsl/scan.js';

/**
 * A device-wide exclusive prefix sum of u32, in place (Blelloch's scan-then-propagate over workgroups): each
 * workgroup scans its SCAN_GROUP elements and leaves its total in a sums array, the sums are scanned the same way
 * (recursively: two levels cover 4.2 M elements), and each element gets its group's scanned sum added. The sums
 * wrap modulo 2^32, so callers keep their totals below it.
 */
export class PrefixSum {
  private constructor(private readonly ctx: GpuContext, private readonly groups: GPUComputePipeline, private readonly add: GPUComputePipeline) {}

  static prepare(ctx: GpuContext): Promise<PrefixSum> {
    return ctx.plan('prefix-sum', async () => {
      const code = scanKernelsWgsl();
      const [groups, add] = await Promise.all([ctx.pipeline('prefix-sum', code, 'scan_groups'), ctx.pipeline('prefix-sum', code, 'scan_add')]);
      return new PrefixSum(ctx, groups, add);
    });
  }

  /**
   * Records the exclusive prefix sum of the first `n` u32 of `data` (bound whole: it must fit one binding, checked).
   * For the sum of all n, scan n + 1 elements with a zero last: it ends there.
   */
  record(rec: Recording, data: GPUBuffer, n: number): void {
    checkBinding(this.ctx, n * 4, 'a prefix sum');
    const groups = Math.ceil(n / SCAN_GROUP);
    const sums = rec.storage(groups * 4, 'prefix-sum sums');
    const P = rec.uniform(ScanParams, { n });
    const [x, y] = grid1d(this.ctx, groups);
    rec.dispatch('prefix-sum.groups', this.groups, { data, sums, P }, x, y);
    if (groups === 1) return; // one group's sum is already exclusive within it, and the group's offset is 0
    this.record(rec, sums, groups);
    rec.dispatch('prefix-sum.add', this.add, { data, sums, P }, x, y);
  }
}

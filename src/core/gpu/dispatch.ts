import type { GpuContext } from './context.js';

/**
 * Workgroup counts for `groups` workgroups, folded into 2D when they exceed the per-dimension limit.
 * Kernels recover the linear id with `linear_group_id` (core/gpu/wgsl/grid.ts).
 */
export function grid1d(ctx: GpuContext, groups: number): [number, number] {
  const max = ctx.limits.maxComputeWorkgroupsPerDimension;
  if (groups <= max) return [Math.max(1, groups), 1];
  const y = Math.ceil(groups / max);
  return [Math.ceil(groups / y), y];
}

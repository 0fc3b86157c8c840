import type { GpuContext } from '../src/core/gpu/context.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';

/**
 * Steady-state kernel time: `record` is called `batch` times inside one compute pass with one timestamp pair,
 * and the pass time divided by `batch` — no per-pass overhead, no idle GPU between kernels. Median of 7.
 */
export async function timeBatched(ctx: GpuContext, batch: number, record: (rec: Recording) => void | Promise<unknown>): Promise<number> {
  const ts: number[] = [];
  for (let r = 0; r < 7; r++) {
    const timer = new KernelTimer(ctx, true);
    const rec = new Recording(ctx, timer, 'batch', true);
    for (let i = 0; i < batch; i++) await record(rec);
    rec.submit();
    await ctx.finish();
    ts.push((await timer.read()).reduce((a, k) => a + k.ms, 0) / batch);
    timer.destroy();
  }
  return ts.sort((a, b) => a - b)[3];
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrefixSum } from '../../src/core/gpu/prefix-sum.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { download } from '../../src/core/gpu/transfer.js';
import { gpuOrSkip } from '../helpers/gpu.js';

/** The exclusive prefix sum, modulo 2^32, on the host. */
function exclusive(xs: Uint32Array): Uint32Array {
  const out = new Uint32Array(xs.length);
  for (let i = 1; i < xs.length; i++) out[i] = (out[i - 1] + xs[i - 1]) >>> 0;
  return out;
}

test('GPU exclusive prefix sum: one, two and three levels of workgroups, partial last groups, sums past 2^32 wrapping as on the host', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const scan = await PrefixSum.prepare(ctx);
  let seed = 20;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8);
  for (const [n, max] of [[1, 100], [255, 100], [2047, 1700], [2048, 1700], [2049, 1700], [70001, 1700], [2048 * 2048, 3], [2048 * 2048 + 3001, 1700], [3000, 2 ** 24]] as const) {
    const xs = Uint32Array.from({ length: n }, () => random() % max);
    const buf = ctx.device.createBuffer({ size: Math.ceil(Math.max(16, n * 4) / 16) * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    ctx.device.queue.writeBuffer(buf, 0, xs);
    const timer = new KernelTimer(ctx, false);
    const rec = new Recording(ctx, timer, 'prefix sum test', true);
    scan.record(rec, buf, n);
    rec.submit();
    const got: Uint32Array = await download(ctx, buf, new Uint32Array(n));
    timer.destroy();
    buf.destroy();
    assert.deepEqual(got, exclusive(xs), `n = ${n}`);
  }
});

// GpuContext.prefetchPipelines / pipelineRequests (issue 40 item 5): a run's pipelines asked for at once ahead of its
// plans, which then get those compilations instead of compiling again; what was asked for is listed, for next time.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ShaderCompileError } from '../../src/core/errors.js';
import type { GpuContext, PipelineRequest } from '../../src/core/gpu/context.js';
import { countCalls, gpuOrSkip } from '../helpers/gpu.js';

/** A compute kernel of its own (a comment makes its source unlike any other test's, so nothing is cached yet). */
function request(entryPoint = 'main', body = 'a[g.x] = a[g.x] + 1u;'): PipelineRequest {
  const code = `// ${randomUUID()}
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(64) fn ${entryPoint}(@builtin(global_invocation_id) g: vec3u) { ${body} }`;
  return { label: 'prefetch-test', code, entryPoint, constants: {} };
}

/** How many pipelines the device was asked to compile while `fn` ran. */
function compilations(ctx: GpuContext, fn: () => Promise<void>): Promise<number> {
  return countCalls(ctx.device, 'createComputePipelineAsync', fn);
}

test('prefetched pipelines are compiled once, at once: pipeline() later gets them without compiling again', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const rs = [request(), request(), request('other')];
  assert.equal(await compilations(ctx, async () => ctx.prefetchPipelines(rs)), 3, 'all three asked for at once');
  const asked = await compilations(ctx, async () => {
    for (const r of rs) assert.ok(await ctx.pipeline(r.label, r.code, r.entryPoint, r.constants));
  });
  assert.equal(asked, 0, 'the plans got the prefetched compilations');
});

test('pipelineRequests lists what pipeline() was asked for, in order, once each — not what was only prefetched', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const [a, b, only] = [request(), request(), request()];
  ctx.prefetchPipelines([only]);
  for (const r of [a, b, a]) await ctx.pipeline(r.label, r.code, r.entryPoint, r.constants);
  const listed = ctx.pipelineRequests().filter((r) => [a.code, b.code, only.code].includes(r.code));
  assert.deepEqual(listed, [a, b]);
});

test('a prefetched pipeline that does not compile is no unhandled rejection, and asking for it reports the error', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const bad = request('main', 'a[g.x] = undefined_name;');
  ctx.prefetchPipelines([bad]);
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(ctx.pipeline(bad.label, bad.code, bad.entryPoint, bad.constants), ShaderCompileError);
});

import type { TestContext } from 'node:test';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';

let shared: Promise<GpuContext | Error> | undefined;

/**
 * The test suite's GPU context (the software adapter in CI). Without an adapter, GPU tests are skipped with
 * the reason printed — unless IMGPU_REQUIRE_GPU=1 (set by .ci/run), which turns the skip into a failure.
 */
export async function gpuOrSkip(t: TestContext): Promise<GpuContext | undefined> {
  shared ??= createNodeGpuContext().catch((e: Error) => e);
  const ctx = await shared;
  if (!(ctx instanceof Error)) return ctx;
  if (process.env.IMGPU_REQUIRE_GPU === '1') throw new Error(`IMGPU_REQUIRE_GPU=1 but no GPU adapter: ${ctx.message}`);
  t.skip(`no GPU adapter: ${ctx.message}`);
  return undefined;
}

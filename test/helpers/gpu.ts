import type { TestContext } from 'node:test';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { readbackCount } from '../../src/core/gpu/transfer.js';
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

const limited = new Map<number, Promise<GpuContext | Error>>();

/**
 * A context on the test adapter that binds at most `bytes` per storage binding (GpuContext's `limits` option), so
 * the splitting of work beyond the binding limit (core/gpu/limits.ts, slabs.ts) runs on small images; the real
 * limit is exercised once, on lavapipe's 128 MiB, in test/gpu/binding-limit.test.ts.
 */
export async function gpuWithBindingLimit(t: TestContext, bytes: number): Promise<GpuContext | undefined> {
  if (!(await gpuOrSkip(t))) return undefined;
  let p = limited.get(bytes);
  if (!p) limited.set(bytes, (p = createNodeGpuContext({ limits: { maxStorageBufferBindingSize: bytes } }).catch((e: Error) => e)));
  const ctx = await p;
  if (ctx instanceof Error) throw ctx;
  return ctx;
}

/** How many times `target[method]` was called while `fn` ran (an own property shadows the prototype's method meanwhile). */
export async function countCalls<T extends object>(target: T, method: keyof T & string, fn: () => Promise<void>): Promise<number> {
  // The method itself (not a bound copy), called below with `target` as `this`.
  const original = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(target), method)!.value as (...args: unknown[]) => unknown;
  let n = 0;
  Object.defineProperty(target, method, {
    configurable: true,
    value: (...args: unknown[]) => {
      n++;
      return original.apply(target, args);
    },
  });
  try {
    await fn();
  } finally {
    delete (target as Record<string, unknown>)[method];
  }
  return n;
}

/** How many times the context's queue was submitted to while `fn` ran. */
export function countSubmissions(ctx: GpuContext, fn: () => Promise<void>): Promise<number> {
  return countCalls(ctx.device.queue, 'submit', fn);
}

/**
 * What `fn` returned and how many readbacks (device → host copies, transfer.ts readbackCount) the context made while
 * it ran: 0 for work that stays on the device, so a test can tell a resident path from one through the host.
 */
export async function countReadbacks<T>(ctx: GpuContext, fn: () => Promise<T>): Promise<{ readbacks: number; result: T }> {
  const before = readbackCount(ctx);
  const result = await fn();
  return { readbacks: readbackCount(ctx) - before, result };
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GpuValidationError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { gpuOrSkip } from '../helpers/gpu.js';

/** A call WebGPU rejects (a buffer both mapped for reading and for writing): a validation error in the current scope. */
function invalidCall(ctx: GpuContext): void {
  ctx.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.MAP_WRITE, label: 'invalid on purpose' }).destroy();
}

/** A promise resolved from outside: one operation's await, held open while another runs. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

test('error scopes of interleaved operations: an error made before another operation opened fails its own operation (it was reported by the other, which returned it as good)', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const aMadeError = gate(), bOpened = gate(), aClosed = gate();
  // A makes its error, waits until B has opened, and closes first; B closes after.
  const a = ctx.scoped('A', async () => {
    invalidCall(ctx);
    aMadeError.open();
    await bOpened.wait;
    return 'a output';
  });
  await aMadeError.wait;
  const b = ctx.scoped('B', async () => {
    bOpened.open();
    await aClosed.wait;
    return 'b output';
  });
  await assert.rejects(a, (e: Error) => e instanceof GpuValidationError && /^A: /.test(e.message), 'A fails on its own error');
  aClosed.open();
  // B was open while the error was made in the same scopes: it is failed too (never an error missed).
  await assert.rejects(b, GpuValidationError);
  // The scopes are balanced: a later operation with no error succeeds, and a later error is its own.
  assert.equal(await ctx.scoped('C', async () => 'c output'), 'c output');
  await assert.rejects(ctx.scoped('D', async () => invalidCall(ctx)), (e: Error) => /^D: /.test(e.message));
  assert.equal(await ctx.scoped('E', async () => 'e output'), 'e output');
});

test('error scopes of interleaved operations: an operation opened after another\'s error was made and closed is not failed by it; nested ones share it', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // B opens after A's error and closes after A: A's error was caught in the epoch A closed, before B's.
  const bOpened = gate();
  const a = ctx.scoped('A', async () => {
    invalidCall(ctx);
    await bOpened.wait;
  });
  const bStarted = gate();
  const b = ctx.scoped('B', async () => {
    bOpened.open();
    await bStarted.wait;
    return 'b output';
  });
  await assert.rejects(a, GpuValidationError);
  // C opens after A closed, and B is still open: C's epoch holds no error.
  const c = await ctx.scoped('C', async () => 'c output');
  assert.equal(c, 'c output');
  bStarted.open();
  await assert.rejects(b, GpuValidationError, 'B was open with A\'s error');
  // Nested: the inner operation's error fails both.
  await assert.rejects(ctx.scoped('outer', async () => {
    await assert.rejects(ctx.scoped('inner', async () => invalidCall(ctx)), (e: Error) => /^inner: /.test(e.message));
  }), (e: Error) => /^outer: /.test(e.message));
});

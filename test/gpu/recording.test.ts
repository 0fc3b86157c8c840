import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { acquireStorage, download } from '../../src/core/gpu/transfer.js';
import { defineUniforms } from '../../src/core/gpu/uniforms.js';
import { imageFrom } from '../../src/core/image.js';
import { runChain, runPipeline, parsePipeline } from '../../src/ops/pipeline.js';
import { randomBytes } from '../helpers/fixtures.js';
import { countSubmissions, gpuOrSkip } from '../helpers/gpu.js';
import { otsuKernelCompiled } from '../../src/ops/threshold/gpu.js';

// Each dispatch writes its uniform's two words into its own slot: a uniform slot shared, misplaced or written
// after the submission shows as a wrong word.
const Slot = defineUniforms('Slot', { at: 'u32', value: 'u32' });
const WRITE_SLOT = /* wgsl */ `
${Slot.wgsl}
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> P: Slot;
@compute @workgroup_size(1)
fn main() { out[P.at] = P.value; }`;

test('Recording.uniform: 300 uniforms in one recording (several uniform blocks) each reach their own dispatch', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const pipeline = await ctx.pipeline('write slot', WRITE_SLOT, 'main');
  const n = 300;
  const out = acquireStorage(ctx, n * 4, 'slots');
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'uniform slots', true);
  for (let i = 0; i < n; i++) rec.dispatch('write slot', pipeline, { out, P: rec.uniform(Slot, { at: i, value: 1000 + 7 * i }) }, 1);
  rec.submit();
  const got = await download(ctx, out, new Uint32Array(n));
  ctx.buffers.release(out);
  assert.deepEqual([...got], Array.from({ length: n }, (_, i) => 1000 + 7 * i));
});

test('Recording.flush: the work so far is submitted ahead of work submitted apart, then recording goes on; after submit() it does nothing', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const pipeline = await ctx.pipeline('write slot', WRITE_SLOT, 'main');
  const out = acquireStorage(ctx, 16, 'slots');
  const copied = acquireStorage(ctx, 16, 'copied');
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'flushed', true);
  rec.dispatch('write slot', pipeline, { out, P: rec.uniform(Slot, { at: 0, value: 1 }) }, 1);
  let after = 0;
  rec.afterSubmit(() => after++);
  const n = await countSubmissions(ctx, async () => {
    rec.flush();
    // Submitted apart: it must see word 0 as the flushed work wrote it.
    const apart = new Recording(ctx, new KernelTimer(ctx, false), 'apart', true);
    apart.copyRange(out, 0, copied, 0, 4);
    apart.submit();
    rec.dispatch('write slot', pipeline, { out, P: rec.uniform(Slot, { at: 2, value: 3 }) }, 1);
    rec.submit();
    rec.flush();
  });
  assert.equal(n, 3);
  assert.equal(after, 1);
  const got = await download(ctx, out, new Uint32Array(3));
  const seen = await download(ctx, copied, new Uint32Array(1));
  ctx.buffers.release(out);
  ctx.buffers.release(copied);
  assert.deepEqual([got[0], got[2], seen[0]], [1, 3, 1]);
});

test('a pipeline on a resident image recorded into one recording (GpuRunOptions.recording): one submission, the output of the steps submitted one by one', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const img = imageFrom(randomBytes(173 * 211, 41), [211, 173]);
  const steps = parsePipeline('equalize | threshold --method otsu | morph --op erode --se rect:5x3');
  // Until its one kernel is compiled, Otsu runs as steps with a readback between them (otsuKernelReady).
  await otsuKernelCompiled(ctx);
  const src = await GpuImage.upload(ctx, img);
  const apart = await runPipeline(src, steps);
  const expected = await apart.output.toHost();
  apart.output.release();
  let output: GpuImage | undefined;
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'shared', true);
  const n = await countSubmissions(ctx, async () => {
    output = (await runChain(src, steps, { recording: rec })).output;
    rec.submit();
  });
  assert.equal(n, 1, 'the steps recorded into the caller\'s recording');
  const got = await output!.toHost();
  output!.release();
  src.release();
  assert.deepEqual(got.data, expected.data);
});

test('Recording.discard: nothing recorded runs, its scratch goes back to the pool, and a later flush does nothing', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const pipeline = await ctx.pipeline('write slot', WRITE_SLOT, 'main');
  const out = acquireStorage(ctx, 16, 'slots');
  const clear = new Recording(ctx, new KernelTimer(ctx, false), 'zeros', true);
  clear.clear(out, 16);
  clear.submit();
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'discarded', true);
  const scratch = rec.storage(64, 'scratch');
  rec.dispatch('write slot', pipeline, { out, P: rec.uniform(Slot, { at: 1, value: 7 }) }, 1);
  let after = 0;
  rec.afterSubmit(() => after++);
  const n = await countSubmissions(ctx, async () => {
    rec.discard();
    rec.flush();
  });
  assert.equal(n, 0);
  assert.equal(after, 0);
  const again = acquireStorage(ctx, 64, 'again');
  ctx.buffers.release(again);
  assert.equal(again, scratch, 'the scratch is free again');
  const got = await download(ctx, out, new Uint32Array(4));
  ctx.buffers.release(out);
  assert.deepEqual([...got], [0, 0, 0, 0]);
});

test('Recording.flush with nothing recorded runs what waited for a submission (a batch\'s input released on its error path), once', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'empty', true);
  const input = await GpuImage.upload(ctx, imageFrom(new Uint8Array(64), [8, 8]));
  let released = 0;
  rec.afterSubmit(() => {
    released++;
    input.release();
  });
  const n = await countSubmissions(ctx, async () => rec.flush());
  assert.equal(n, 0, 'nothing recorded, nothing submitted');
  assert.equal(released, 1, 'the input given back');
  assert.throws(() => input.assertLive());
  rec.flush();
  rec.submit();
  assert.equal(released, 1, 'once');
});

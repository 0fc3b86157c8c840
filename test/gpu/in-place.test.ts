import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { imageFrom } from '../../src/core/image.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { runOperation } from '../../src/core/op.js';
import { parsePipeline, runChain, runPipeline } from '../../src/ops/pipeline.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

// RunOptions.inPlace: an operation that applies a look-up table writes its output over a resident input its caller
// gives up, and returns that input; without it the input is left as it was. Odd sizes: the last 16-byte vector is partial.

test('equalize and Otsu in place on a resident image: the input itself comes back, with the pixels computed apart', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const img = imageFrom(randomBytes(173 * 211, 9), [211, 173]);
  const ops = [
    (x: GpuImage, inPlace?: boolean) => runOperation(equalize.op, x, {}, { wait: false, inPlace }),
    (x: GpuImage, inPlace?: boolean) => runOperation(threshold.op, x, { method: 'otsu' }, { wait: false, extras: false, inPlace }),
  ];
  for (const [i, op] of ops.entries()) {
    const src = await GpuImage.upload(ctx, img);
    const apart = (await op(src)).output as GpuImage;
    assert.notEqual(apart, src);
    assert.deepEqual((await src.toHost()).data, img.data, `op ${i}: without inPlace the input is unchanged`);
    const expected = await apart.toHost();
    apart.release();
    const over = (await op(src, true)).output as GpuImage;
    assert.equal(over, src, `op ${i}: the input is the output`);
    assert.deepEqual((await over.toHost()).data, expected.data, `op ${i}`);
    over.release();
  }
});

test('a pipeline in place: every step writes over the one image, the steps apart give the same pixels', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const img = imageFrom(randomBytes(97 * 61, 3), [61, 97]);
  const steps = parsePipeline('equalize | threshold --method otsu');
  const src = await GpuImage.upload(ctx, img);
  const apart = (await runPipeline(src, steps)).output;
  const expected = await apart.toHost();
  apart.release();
  assert.deepEqual((await src.toHost()).data, img.data, 'the caller\'s input is not written over without inPlace');
  const over = (await runChain(src, steps, { inPlace: true })).output;
  assert.equal(over, src);
  assert.deepEqual((await over.toHost()).data, expected.data);
  src.release();
});

test('a public call drops the engine\'s options: equalize(dev, { inPlace: true }) from untyped code returns a new image, the input untouched', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const img = imageFrom(randomBytes(37 * 29, 5), [29, 37]);
  const src = await GpuImage.upload(ctx, img);
  const engineOnly = { inPlace: true } as Record<string, unknown>; // what JavaScript could pass: not in RunOptions
  for (const r of [await equalize(src, engineOnly), await equalize.op.run(src, {}, engineOnly)]) {
    assert.notEqual(r.output, src);
    r.output.release();
  }
  assert.deepEqual((await src.toHost()).data, img.data, 'the input is not written over');
  src.release();
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError, UnsupportedDtypeError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { createImage, imageFrom, type Image } from '../../src/core/image.js';
import { applyLut } from '../../src/ops/lut/index.js';
import { randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

// applyLut declared with defineOp: out[i] = lut[in[i]] on both paths, resident in → resident out, its checks typed.
// Odd sizes: the GPU's last 16-byte vector is partial.

const lutOf = (n: number, seed: number, max: number): Uint32Array => Uint32Array.from(randomU16(n, seed, max));
const byHand = (img: Image, lut: Uint32Array): number[] => Array.from(img.data, (v) => lut[v]);
const cases = [
  { what: '8-bit', img: imageFrom(randomBytes(131 * 67, 4), [67, 131]), lut: lutOf(256, 5, 256) },
  { what: '16-bit', img: imageFrom(randomU16(53 * 29, 6), [29, 53]), lut: lutOf(65536, 7, 65536) },
];

for (const { what, img, lut } of cases) {
  test(`applyLut ${what}: CPU, GPU from the host and GPU resident all equal lut[in]`, async (t) => {
    const cpu = await applyLut(img, lut);
    assert.deepEqual(Array.from(cpu.output.data), byHand(img, lut));
    assert.equal(cpu.timings.backend, 'cpu');
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    const host = await applyLut(img, lut, { gpu });
    assert.equal(host.timings.backend, 'gpu', 'from the host, run on the GPU');
    assert.deepEqual(Array.from(host.output.data), byHand(img, lut));
    const dev = await GpuImage.upload(gpu, img);
    const resident = await applyLut(dev, lut);
    assert.ok(resident.output instanceof GpuImage, 'a GpuImage in gives a GpuImage out');
    assert.deepEqual(Array.from((await resident.output.toHost()).data), byHand(img, lut));
    resident.output.release();
    dev.release();
  });
}

test('applyLut writes into `out` where given, and is an operation declared once (applyLut.op)', async () => {
  const { img, lut } = cases[0];
  const out = createImage(img.shape, 'uint8');
  const r = await applyLut(img, lut, { out });
  assert.equal(r.output, out);
  assert.deepEqual(Array.from(out.data), byHand(img, lut));
  assert.equal(applyLut.op.name, 'applyLut');
  assert.deepEqual(applyLut.op.params.map((p) => p.name), ['lut']);
});

test('applyLut refuses colour, a table of the wrong length, a table of another type and float input (typed errors)', async () => {
  const gray = cases[0].img;
  const colour = imageFrom(randomBytes(4 * 5 * 3, 2), [4, 5], 3);
  await assert.rejects(applyLut(colour, new Uint32Array(256)), (e: Error) => e instanceof InvalidArgumentError && /one gray channel/.test(e.message));
  await assert.rejects(applyLut(gray, new Uint32Array(255)), (e: Error) => e instanceof InvalidArgumentError && /256 entries, got 255/.test(e.message));
  await assert.rejects(applyLut(gray, Array(256).fill(0) as unknown as Uint32Array), (e: Error) => e instanceof InvalidArgumentError && /Uint32Array/.test(e.message));
  await assert.rejects(applyLut(imageFrom(new Float32Array(4), [2, 2]), new Uint32Array(256)), UnsupportedDtypeError);
});

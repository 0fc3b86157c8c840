// Every sampling layout libjpeg decodes takes the GPU decode path (issue 40 item 4) and gives cv2.imread's pixels:
// 4:1:1, 4:4:0, 4:1:0, 3x1, 1x4, 2x4, chroma sampled more than luma, Cb and Cr sampled differently; restart markers,
// progressive, sizes that cut the MCUs, planes 2 samples wide or less.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { RecycledBuffers } from '../../src/node/codec-pool.js';
import type { JpegEntropyPath } from '../../src/codecs/jpeg/options.js';
import { readJpegToGpu, type GpuJpegTimes } from '../../src/node/jpeg-gpu.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';

// scripts/make_jpeg_layout_fixtures.py: cjpeg -sample files, and the SHA-256 of cv2.imread's pixels (RGB, gray).
const file = (name: string) => fixture('jpeg-layouts', name);
const REFS = JSON.parse(readFileSync(file('references.json'), 'utf8')) as Record<string, { sample: string; flags: string; shape: [number, number]; rgb: string; gray: string }>;
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

const sha256 = (img: Image) => createHash('sha256').update(new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength)).digest('hex');

/** The GPU path's decode of fixture `name`, its pixels on the host. */
async function onGpu(ctx: GpuContext, name: string, gray: boolean, entropy: JpegEntropyPath, host?: RecycledBuffers) {
  const r = await readJpegToGpu(ctx, readFileSync(file(`${name}.jpg`)), name, gray, { jpeg: 'gpu', entropy, host });
  assert.ok(r, `${name}: no native decode`);
  const pixels = await r.image.toHost();
  r.image.release();
  return { ...r, pixels };
}

/**
 * Fixture `name` decoded on the GPU path, colour and gray, with either Huffman decoder, straight into upload memory
 * and through a batch's host memory (the compact form): on the GPU each time, cv2.imread's pixels (by hash) and the
 * CPU path's (byte for byte).
 */
async function assertLayout(ctx: GpuContext, name: string, gpuHuffman: boolean) {
  const ref = REFS[name];
  for (const gray of [false, true]) {
    const cpu = await readImage(file(`${name}.jpg`), { gray });
    assert.equal(sha256(cpu), gray ? ref.gray : ref.rgb, `${name}: the CPU path gives cv2.imread's pixels`);
    for (const [entropy, host] of [['gpu', undefined], ['cpu', undefined], ['gpu', new RecycledBuffers(1)], ['cpu', new RecycledBuffers(1)]] as const) {
      const what = `${name} (${ref.sample}) ${gray ? 'gray' : 'colour'}, Huffman decoding asked on the ${entropy}${host ? ', host memory' : ''}`;
      const r = await onGpu(ctx, name, gray, entropy, host);
      assert.equal(r.jpeg, 'gpu', `${what}: decoded on the ${r.jpeg} (${r.fallback})`);
      assert.equal(r.huffman, entropy === 'gpu' && gpuHuffman ? 'gpu' : 'cpu', what);
      assert.deepEqual([...r.pixels.shape, r.pixels.channels], [...ref.shape, gray ? 1 : 3], what);
      const c = compareImages(r.pixels, cpu);
      assert.ok(c.identical, `${what}: ${c.mismatches} bytes differ from the CPU path's (max ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
      assert.equal(sha256(r.pixels), gray ? ref.gray : ref.rgb, `${what}: cv2.imread's pixels`);
    }
  }
}

for (const name of Object.keys(REFS)) {
  // Progressive files and restart markers take libjpeg's Huffman decoding (then the GPU's kernels), as at 4:2:0.
  const gpuHuffman = REFS[name].flags === '';
  test(`every sampling layout decodes on the GPU to cv2.imread's pixels: ${name} (${REFS[name].sample} ${REFS[name].flags}, ${REFS[name].shape.join('×')})`, { skip }, async (t) => {
    const ctx = await gpuOrSkip(t);
    if (ctx) await assertLayout(ctx, name, gpuHuffman);
  });
}

test('layouts beyond the binding limit decode in bands of MCU rows with the same pixels (4:1:1, 4:4:0, luma 1x2 under chroma 2x1)', { skip }, async (t) => {
  // 24 KiB: a 149×77 photo's output (34 KB) and each plane need several bands, with context rows for 1x2 triangles.
  const ctx = await gpuWithBindingLimit(t, 24 << 10);
  if (!ctx) return;
  for (const name of ['s411', 's440', 's21_12', 's22_11_21']) {
    for (const gray of [false, true]) {
      const times: GpuJpegTimes = { entropyMs: 0, submitMs: 0 };
      const r = await readJpegToGpu(ctx, readFileSync(file(`${name}.jpg`)), name, gray, { jpeg: 'gpu', times });
      assert.equal(r?.jpeg, 'gpu', `${name}: ${r?.fallback}`);
      const pixels = await r.image.toHost();
      r.image.release();
      // (A gray output, a third of the bytes, may fit one band.)
      if (!gray) assert.ok(times.bands! > 1, `${name}: ran in ${times.bands} band(s)`);
      assert.equal(sha256(pixels), gray ? REFS[name].gray : REFS[name].rgb, `${name} ${gray ? 'gray' : 'colour'} in bands`);
    }
  }
});

test('sampling factors libjpeg cannot upsample (3x1 luma, 2x1 chroma: not integral) are libjpeg\'s error, as cv2.imread refuses them', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const bytes = readFileSync(file('frac.jpg'));
  await assert.rejects(readJpegToGpu(ctx, bytes, 'frac.jpg', false, { jpeg: 'gpu' }), (e: Error) => e instanceof UnsupportedFormatError && /Fractional sampling/.test(e.message));
  // In gray the chroma is not upsampled: the data, not matching the factors, is damage libjpeg warns of (refused by default).
  await assert.rejects(readJpegToGpu(ctx, bytes, 'frac.jpg', true, { jpeg: 'gpu' }), (e: Error) => e instanceof UnsupportedFormatError && /premature end/.test(e.message));
});

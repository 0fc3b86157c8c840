import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { RecycledBuffers } from '../../src/node/codec-pool.js';
import { OUT_OF_RANGE } from '../../src/node/jpeg-gpu-decode.js';
import { readJpegToGpu } from '../../src/node/jpeg-gpu.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { fixture } from '../helpers/fixtures.js';

// Damaged JPEGs (scripts/make_jpeg_damaged_fixtures.py) and cv2.imread's pixels of each (Debian's OpenCV 4.6 /
// libjpeg-turbo 2.1.5, saved as PNG).
const file = (name: string) => fixture('jpeg-damaged', name);
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

function assertIdentical(got: Image, want: Image, what: string) {
  const c = compareImages(got, want);
  assert.ok(c.identical, `${what}: ${got.shape.join('×')}×${got.channels} vs ${want.shape.join('×')}×${want.channels}, ${c.mismatches} bytes differ (max ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

test('a JPEG whose quantization table takes the IDCT beyond where libjpeg-turbo\'s SIMD and C versions agree: the GPU path declines it and gives cv2.imread\'s pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // Bands too (64 KiB bindings): the status word is shared by every band's IDCT.
  const banded = await gpuWithBindingLimit(t, 64 << 10);
  for (const [c, where] of [[ctx, ''], [banded!, ', in bands']] as const) {
    for (const gray of [false, true]) {
      for (const [host, entropy] of [[undefined, 'gpu'], [new RecycledBuffers(1), 'gpu'], [undefined, 'cpu'], [new RecycledBuffers(1), 'cpu']] as const) {
        const what = `dqt.jpg ${gray ? 'gray' : 'colour'}, Huffman decoding on the ${entropy}${host ? ', host memory' : ''}${where}`;
        const r = await readJpegToGpu(c, readFileSync(file('dqt.jpg')), 'dqt.jpg', gray, { jpeg: 'gpu', host, entropy });
        assert.ok(r, what);
        const got = await r.image.toHost();
        r.image.release();
        assertIdentical(got, await readImage(file(`dqt_${gray ? 'gray' : 'rgb'}.png`)), what);
        assert.equal(r.jpeg, 'cpu', `${what}: declined by the GPU decoder`);
        assert.equal(r.fallback, OUT_OF_RANGE, what);
      }
    }
  }
  // The undamaged file it was made from stays on the GPU, with cv2's pixels.
  for (const gray of [false, true]) {
    const r = await readJpegToGpu(ctx, readFileSync(file('base.jpg')), 'base.jpg', gray, { jpeg: 'gpu' });
    assert.equal(r?.jpeg, 'gpu', `base.jpg: ${r?.fallback}`);
    const got = await r.image.toHost();
    r.image.release();
    assertIdentical(got, await readImage(file(`base_${gray ? 'gray' : 'rgb'}.png`)), `base.jpg ${gray ? 'gray' : 'colour'}`);
  }
});

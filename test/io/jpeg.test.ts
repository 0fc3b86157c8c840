import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { exifOrientation, nativeJpeg } from '../../src/io/jpeg.js';
import { decodeJpegToGpu, encodeJpegFromGpu } from '../../src/node/jpeg-gpu.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { fixture } from '../helpers/fixtures.js';

// References: scripts/make_jpeg_fixtures.py (cv2.imread / cv2.imwrite of Debian's OpenCV 4.6, libjpeg-turbo).
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-jpeg-'));
const jpeg = (name: string) => fixture('jpeg', name);
// CI builds the codec (IMGPU_REQUIRE_NATIVE=1); elsewhere these tests say why they skip.
const skip = nativeJpeg() ? false : process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG codec not built (scripts/build-native.mjs)';

test('the native JPEG codec is built where required', { skip: process.env.IMGPU_REQUIRE_NATIVE !== '1' }, () => {
  assert.ok(nativeJpeg(), 'dist/native/imgpu-turbo.node did not load');
});

test('JPEG decodes bit-identically to cv2.imread: colour, and gray as the file\'s luma (IMREAD_GRAYSCALE)', { skip }, async () => {
  const rgb = await readImage(jpeg('chelsea_q90.jpg'));
  assert.equal(rgb.channels, 3);
  assert.ok(compareImages(rgb, await readImage(jpeg('chelsea_q90_rgb.png'))).identical, 'colour');
  const gray = await readImage(jpeg('chelsea_q90.jpg'), { gray: true });
  assert.equal(gray.channels, 1);
  assert.ok(compareImages(gray, await readImage(jpeg('chelsea_q90_gray.png'))).identical, 'gray');
  const oneComponent = await readImage(jpeg('camera_gray.jpg'));
  assert.equal(oneComponent.channels, 1, 'a one-component JPEG reads as one channel');
});

for (let o = 1; o <= 8; o++) {
  test(`EXIF orientation ${o} is applied as cv2.imread applies it (colour and gray)`, { skip }, async () => {
    assert.equal(exifOrientation(readFileSync(jpeg(`crop_o${o}.jpg`))), o);
    const rgb = await readImage(jpeg(`crop_o${o}.jpg`));
    assert.ok(compareImages(rgb, await readImage(jpeg(`crop_o${o}_rgb.png`))).identical, 'colour');
    const gray = await readImage(jpeg(`crop_o${o}.jpg`), { gray: true });
    assert.ok(compareImages(gray, await readImage(jpeg(`crop_o${o}_gray.png`))).identical, 'gray');
  });
}

test('JPEG encodes byte for byte as cv2.imwrite at quality 95 (RGB 4:2:0 and gray)', { skip }, async () => {
  const rgb = await readImage(jpeg('chelsea_q90_rgb.png'));
  await writeImage(join(tmp, 'c.jpg'), rgb);
  assert.ok(readFileSync(join(tmp, 'c.jpg')).equals(readFileSync(jpeg('chelsea_q95_cv2.jpg'))), 'colour bytes');
  const cam = await readImage(fixture('images', 'camera.png'));
  await writeImage(join(tmp, 'g.jpeg'), cam);
  assert.ok(readFileSync(join(tmp, 'g.jpeg')).equals(readFileSync(jpeg('camera_q95_cv2.jpg'))), 'gray bytes');
});

test('a truncated or mislabelled JPEG is a typed error, not a half-gray image', async () => {
  const bytes = readFileSync(jpeg('chelsea_q90.jpg'));
  writeFileSync(join(tmp, 'cut.jpg'), bytes.subarray(0, bytes.length >> 1));
  await assert.rejects(readImage(join(tmp, 'cut.jpg')), UnsupportedFormatError);
  await assert.rejects(readImage(join(tmp, 'cut.jpg'), { gray: true }), UnsupportedFormatError);
  // A header declaring 65535×65535 pixels over a few kilobytes of data.
  const huge = Buffer.from(readFileSync(jpeg('camera_gray.jpg')));
  const sof = huge.indexOf(Buffer.from([0xff, 0xc0]));
  huge.writeUInt16BE(65535, sof + 5);
  huge.writeUInt16BE(65535, sof + 7);
  writeFileSync(join(tmp, 'huge.jpg'), huge);
  await assert.rejects(readImage(join(tmp, 'huge.jpg'), { gray: true }), UnsupportedFormatError);
  writeFileSync(join(tmp, 'text.jpg'), 'not an image');
  await assert.rejects(readImage(join(tmp, 'text.jpg')), UnsupportedFormatError);
});

test('a JPEG decodes straight into GPU upload memory (here or on libuv\'s threads), equal to the host decode', { skip }, async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const async of [false, true]) {
    for (const gray of [true, false]) {
      const dev = await decodeJpegToGpu(gpu, readFileSync(jpeg('chelsea_q90.jpg')), 'chelsea_q90.jpg', gray, { async, nice: 1 });
      assert.ok(dev, 'decoded natively');
      assert.ok(compareImages(await dev.toHost(), await readImage(jpeg('chelsea_q90.jpg'), { gray })).identical, `${gray ? 'gray' : 'colour'}, async ${async}`);
      dev.release();
    }
    assert.equal(await decodeJpegToGpu(gpu, readFileSync(jpeg('crop_o6.jpg')), 'crop_o6.jpg', true, { async }), undefined, 'rotated files go through the host');
    const bytes = readFileSync(jpeg('chelsea_q90.jpg'));
    await assert.rejects(decodeJpegToGpu(gpu, bytes.subarray(0, bytes.length >> 1), 'cut.jpg', true, { async }), UnsupportedFormatError);
  }
});

test('a resident image encodes straight from mapped readback memory: cv2.imwrite\'s bytes, here or on libuv\'s threads', { skip }, async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const [img, ref] of [[await readImage(jpeg('chelsea_q90_rgb.png')), 'chelsea_q95_cv2.jpg'], [await readImage(fixture('images', 'camera.png')), 'camera_q95_cv2.jpg']] as const) {
    const dev = await GpuImage.upload(gpu, img);
    for (const async of [false, true]) {
      const bytes = await encodeJpegFromGpu(dev, 95, { async, nice: 1 });
      assert.ok(bytes && Buffer.from(bytes).equals(readFileSync(jpeg(ref))), `${ref}, async ${async}`);
    }
    dev.release();
  }
  // Not 8-bit gray/RGB: left to the caller (download and writeImage).
  const f = await GpuImage.upload(gpu, { data: new Float32Array(16), shape: [4, 4], channels: 1, dtype: 'float32' });
  assert.equal(await encodeJpegFromGpu(f, 95), undefined);
  f.release();
});

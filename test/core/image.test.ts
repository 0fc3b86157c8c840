import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmptyImageError, InvalidArgumentError, UnsupportedDtypeError, UnsupportedFormatError } from '../../src/core/errors.js';
import { allocPixels, imageFrom, toGray, validateImage } from '../../src/core/image.js';
import { decodeNpy, encodeNpy, readImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import { compareImages } from '../../src/core/compare.js';

test('toGray is bit-identical to cv2.cvtColor(RGB2GRAY) on a real photograph', async () => {
  const rgb = await readImage(fixture('images', 'chelsea.png'));
  assert.equal(rgb.channels, 3);
  const ref = await readImage(fixture('images', 'chelsea_gray_cv2.png'));
  const c = compareImages(toGray(rgb), ref);
  assert.ok(c.identical, `${c.mismatches} pixels differ`);
});

test('toGray hand-computed: OpenCV fixed-point rounding', () => {
  const img = imageFrom(new Uint8Array([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 197, 175, 148]), [1, 5], 3);
  // (R·9798 + G·19235 + B·3735 + 2^14) >> 15; the last pixel is 178 with the 14-bit YCrCb weights, 179 in cv2.
  assert.deepEqual([...toGray(img).data], [76, 150, 29, 18, 179]);
});

test('toGray = cv2.cvtColor(RGB2GRAY) on random 8- and 16-bit pixels, RGB and RGBA (issue 24 item 13)', async () => {
  for (const bits of [8, 16]) {
    const rgb = await readImage(fixture('images', `gray-rgb${bits}.npy`));
    const want = (await readImage(fixture('images', `gray-rgb${bits}-cv2.npy`))).data;
    // The .npy holds [64, 64, 3]: a 3-D array, read as a volume of 64 slices; view it as a 64×64 RGB image.
    const img = imageFrom(rgb.data, [64, 64], 3);
    assert.deepEqual([...toGray(img).data], [...want], `${bits}-bit RGB`);
    const rgba = allocPixels(img.dtype, 64 * 64 * 4);
    for (let i = 0; i < 64 * 64; i++) rgba.set([...img.data.subarray(3 * i, 3 * i + 3), 7], 4 * i);
    assert.deepEqual([...toGray(imageFrom(rgba, [64, 64], 4)).data], [...want], `${bits}-bit RGBA`);
  }
});

test('validateImage rejects bad images with typed errors', () => {
  assert.throws(() => validateImage({ data: new Uint8Array(0), shape: [0, 5], channels: 1, dtype: 'uint8' }), EmptyImageError);
  assert.throws(() => validateImage({ data: new Uint8Array(5), shape: [2, 3], channels: 1, dtype: 'uint8' }), InvalidArgumentError);
  assert.throws(() => validateImage({ data: new Uint8Array(6), shape: [2, 3], channels: 2 as 1, dtype: 'uint8' }), UnsupportedDtypeError);
  assert.throws(() => validateImage({ data: new Uint8Array(6), shape: [6] as unknown as [number, number], channels: 1, dtype: 'uint8' }), InvalidArgumentError);
});

test('.npy round trip for uint8, uint16, float32 in 2D and 3D', () => {
  for (const data of [new Uint8Array([1, 2, 3, 4, 5, 6]), new Uint16Array([1, 65535, 3, 4, 5, 6]), new Float32Array([1.5, -2, 3, 4, 5, 6e-9])]) {
    for (const shape of [[2, 3], [1, 2, 3]] as const) {
      const img = imageFrom(data, [...shape] as [number, number]);
      const back = decodeNpy(encodeNpy(img));
      assert.deepEqual(back.shape, [...shape]);
      assert.equal(back.dtype, img.dtype);
      assert.deepEqual([...back.data], [...data]);
    }
  }
});

test('.npy written by numpy is read (16-bit moon)', async () => {
  const img = await readImage(fixture('images', 'moon16.npy'));
  assert.deepEqual(img.shape, [512, 512]);
  assert.equal(img.dtype, 'uint16');
  const png = await readImage(fixture('images', 'moon16.png'));
  assert.equal(png.dtype, 'uint16', '16-bit PNG stays 16-bit');
  assert.ok(compareImages(img, png).identical, '16-bit PNG and .npy hold the same pixels');
});

test('corrupt and unsupported files are typed errors', async () => {
  assert.throws(() => decodeNpy(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])), UnsupportedFormatError);
  const f64 = encodeNpy(imageFrom(new Float32Array(4), [2, 2]));
  const at = new TextDecoder().decode(f64).indexOf('<f4');
  f64.set(new TextEncoder().encode('<f8'), at);
  assert.throws(() => decodeNpy(f64), /dtype '<f8' is not supported/);
  const truncated = encodeNpy(imageFrom(new Uint8Array(100), [10, 10])).subarray(0, 120);
  assert.throws(() => decodeNpy(truncated), /truncated/);
});

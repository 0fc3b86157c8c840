import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { EmptyImageError, UnsupportedDtypeError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { imageFrom, toGray, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { roundHalfEven } from '../../src/core/rounding.js';
import { equalizeLut } from '../../src/ops/equalize/lut.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { countReadbacks, gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';

const PHOTOS = ['camera', 'moon', 'coins'];

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

test('roundHalfEven rounds ties to even like cvRound', () => {
  assert.deepEqual([0.5, 1.5, 2.5, 3.49, 3.5, 254.5].map(roundHalfEven), [0, 2, 2, 3, 4, 254]);
});

test('LUT hand-computed: [0,0,1,2] → OpenCV scale 255/(4-2)', () => {
  const hist = new Uint32Array(256);
  hist[0] = 2; hist[1] = 1; hist[2] = 1;
  const lut = equalizeLut(hist, 4);
  assert.deepEqual([...lut.subarray(0, 4)], [0, 128, 255, 255]); // 1·127.5 → 128 (tie to even), 2·127.5 → 255
});

test('constant image maps to its own value (OpenCV setTo(i0))', async () => {
  const img = imageFrom(new Uint8Array(37).fill(77), [1, 37]);
  const { output } = await equalize(img);
  assert.ok(output.data.every((v) => v === 77));
});

for (const name of PHOTOS) {
  test(`CPU equals cv2.equalizeHist on ${name}`, async () => {
    const img = await readImage(fixture('images', `${name}.png`));
    const ref = await readImage(fixture('equalize', `${name}.png`));
    assertSame((await equalize(img)).output, ref, name);
  });
  test(`GPU equals cv2.equalizeHist on ${name}`, async (t) => {
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    const img = await readImage(fixture('images', `${name}.png`));
    const ref = await readImage(fixture('equalize', `${name}.png`));
    assertSame((await equalize(img, { gpu })).output, ref, name);
  });
}

test('colour input is converted with OpenCV RGB→gray, then equalized like cv2 (CPU and GPU)', async (t) => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  const ref = await readImage(fixture('equalize', 'chelsea.png'));
  assertSame((await equalize(img)).output, ref, 'cpu');
  const gpu = await gpuOrSkip(t);
  if (gpu) assertSame((await equalize(img, { gpu })).output, ref, 'gpu');
});

test('16-bit: 65536-bin OpenCV formula, CPU and GPU equal the numpy reference', async (t) => {
  const img = await readImage(fixture('images', 'moon16.npy'));
  const ref = await readImage(fixture('equalize', 'moon16.npy'));
  assertSame((await equalize(img)).output, ref, 'cpu');
  const gpu = await gpuOrSkip(t);
  if (gpu) assertSame((await equalize(img, { gpu })).output, ref, 'gpu');
});

test('worker pool gives the same result as the inline path', async () => {
  const pool = new NodeWorkerPool(2);
  try {
    const img = imageFrom(randomBytes(3 << 20, 9, 200), [1536, 2048]);
    const expected = (await equalize(img)).output;
    assertSame((await equalize(img, { pool })).output, expected, 'pool vs inline');
    const out = imageFrom(new Uint8Array(img.data.length), [1536, 2048]); // not shared memory
    const r = await equalize(img, { pool, out });
    assert.equal(r.output, out, 'the caller\'s out image is returned');
    assertSame(out, expected, 'pool into a non-shared out');
  } finally {
    await pool.close();
  }
});

test('GPU equals CPU on sizes that do not divide the workgroup, 1×1 and 3D volumes', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const shapes: [number, number][] = [[1, 1], [1, 3], [7, 13], [17, 1], [31, 33], [1000, 1001]];
  for (const [i, shape] of shapes.entries()) {
    const img = imageFrom(randomBytes(shape[0] * shape[1], i + 3, 97 + i), shape);
    assertSame((await equalize(img, { gpu })).output, (await equalize(img)).output, `${shape.join('×')}`);
  }
  const vol = imageFrom(randomBytes(5 * 17 * 19, 42), [5, 17, 19] as never);
  const out = (await equalize(vol, { gpu })).output;
  assert.deepEqual(out.shape, [5, 17, 19]);
  assertSame(out, (await equalize(vol)).output, 'volume');
  const u16 = imageFrom(randomU16(321 * 123, 5, 40000), [321, 123]);
  assertSame((await equalize(u16, { gpu })).output, (await equalize(u16)).output, 'u16 random');
  const big = imageFrom(randomU16(1 << 16, 7), [256, 256]);
  assertSame((await equalize(big, { gpu })).output, (await equalize(big)).output, 'u16 full range');
});

test('GPU LUT rounding beyond 2^24 pixels matches the CPU (float32 conversion of large counts)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // 4096×4200 = 17.2 M pixels > 2^24: cumulative counts are no longer exact in float32.
  const img = imageFrom(randomBytes(4096 * 4200, 11, 256), [4096, 4200]);
  assertSame((await equalize(img, { gpu })).output, (await equalize(img)).output, '17 Mpx');
});

test('a GpuImage stays on the device; a second run allocates no new buffers', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = imageFrom(randomBytes(640 * 480, 2), [480, 640]);
  const dev = await GpuImage.upload(gpu, img);
  const first = await equalize(dev);
  assert.ok(first.output instanceof GpuImage);
  assert.equal(first.timings.upload, 0);
  assert.equal(first.timings.download, 0);
  const twice = await equalize(first.output);
  first.output.release();
  twice.output.release();
  const created = gpu.buffers.created;
  const again = await equalize(dev);
  again.output.release();
  assert.equal(gpu.buffers.created, created, 'no new GPU buffers on a repeated run');
  const out = imageFrom(new Uint8Array(640 * 480), [480, 640]);
  assert.equal((await equalize(img, { gpu, out })).output, out);
  assertSame(out, (await equalize(img)).output, 'GPU into out');
  await assert.rejects(equalize(img, { gpu, out: imageFrom(new Uint8Array(4), [2, 2]) }), /out image is 2×2/);
  const host = await (await equalize(dev)).output.toHost();
  assertSame(host, (await equalize(img)).output, 'resident result');
  dev.release();
});

test('bad input: empty image, float32, float32 colour GpuImage; an 8-bit colour GpuImage is converted on the device', async (t) => {
  await assert.rejects(equalize({ data: new Uint8Array(0), shape: [0, 0], channels: 1, dtype: 'uint8' }), EmptyImageError);
  await assert.rejects(equalize(imageFrom(new Float32Array(4), [2, 2])), UnsupportedDtypeError);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const f32 = await GpuImage.upload(gpu, imageFrom(new Float32Array(12), [2, 2], 3));
  await assert.rejects(equalize(f32), UnsupportedDtypeError);
  f32.release();
  const host = imageFrom(randomBytes(5 * 7 * 3, 3), [5, 7], 3);
  const rgb = await GpuImage.upload(gpu, host);
  const { readbacks, result: r } = await countReadbacks(gpu, () => equalize(rgb));
  assertSame(await r.output.toHost(), (await equalize(host)).output, 'colour GpuImage: OpenCV gray, equalized');
  // On the device: no more read back than equalize of the gray image already resident (a conversion through the host adds one).
  const gray = await GpuImage.upload(gpu, toGray(host));
  const { readbacks: ofGray, result: g } = await countReadbacks(gpu, () => equalize(gray));
  assert.equal(readbacks, ofGray, 'the colour GpuImage converted on the device');
  for (const x of [r.output, g.output, rgb, gray]) x.release();
});

test('images beyond one storage binding are equalized range by range: GPU equals CPU, 8/16-bit, host and resident', async (t) => {
  // Bindings of 64 KiB (8-bit) and 1 MiB (16-bit: "subhist" keeps one 256 KiB partial histogram per range): these
  // images take 3–6 ranges, their sizes not multiples of a range.
  const cases = [
    { img: imageFrom(randomBytes(333 * 517, 5, 200), [333, 517]), limit: 64 << 10 },
    { img: imageFrom(randomU16(1013 * 1301, 6, 9000), [1013, 1301]), limit: 1 << 20 },
  ];
  for (const { img, limit } of cases) {
    const gpu = await gpuWithBindingLimit(t, limit);
    if (!gpu) return;
    const cpu = (await equalize(img)).output;
    const r = await equalize(img, { gpu });
    assert.ok((r.timings.slabs ?? 1) > 2, `${img.dtype}: split (${r.timings.slabs} pieces)`);
    assertSame(r.output, cpu, `${img.dtype} host`);
    for (const hist of ['atomic', 'subhist'] as const) {
      const dev = await GpuImage.upload(gpu, img);
      const res = await equalize(dev, { hist });
      assertSame(await res.output.toHost(), cpu, `${img.dtype} resident, ${hist}`);
      res.output.release();
      dev.release();
    }
  }
});

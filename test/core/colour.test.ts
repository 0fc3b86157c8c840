import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grayCpu, lumaCpu, lumaOf, withLuma, withLumaCpu } from '../../src/core/colour.js';
import { inlinePool, type CpuPool } from '../../src/core/cpu/pool.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { compareImages } from '../../src/core/compare.js';
import { fromLumaGpu, grayGpu, lumaGpu } from '../../src/core/gpu/colour.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { runGpu } from '../../src/core/gpu/run.js';
import { allocPixels, imageFrom, toGray, type Channels, type Image } from '../../src/core/image.js';
import type { OpResult } from '../../src/core/timings.js';
import { readImage } from '../../src/io/index.js';
import { clahe } from '../../src/ops/clahe/index.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { histogram } from '../../src/ops/histogram/index.js';
import { runChain, runPipeline } from '../../src/ops/pipeline.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { countReadbacks, gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

/** The first `c` channels of an RGBA image. */
function channels(rgba: Image, c: Channels): Image {
  const n = rgba.data.length / 4;
  const out = allocPixels(rgba.dtype, n * c);
  for (let i = 0; i < n; i++) for (let k = 0; k < c; k++) out[i * c + k] = rgba.data[i * 4 + k];
  return imageFrom(out, rgba.shape as [number, number], c);
}

/** scripts/make_colour_fixtures.py's random RGBA pixels (37 × 29), Y and the conversion back of max − Y, from cv2. */
async function cv2Case(bits: 8 | 16): Promise<{ rgba: Image; y: Image; back: Image }> {
  const read = async (s: string) => readImage(fixture('colour', `ycrcb-rgb${bits}${s}.npy`));
  const [rgba, y, back] = await Promise.all([read(''), read('-y'), read('-back')]);
  return { rgba: imageFrom(rgba.data, [37, 29], 4), y: imageFrom(y.data, [37, 29]), back: imageFrom(back.data, [37, 29], 3) };
}

/** A processed lightness as the fixture makes it: max − Y. */
function inverted(y: Image): Image {
  const max = y.dtype === 'uint8' ? 255 : 65535;
  return imageFrom(y.data.map((v) => max - v), y.shape as [number, number]);
}

/** One conversion recorded on the GPU for a host image (uploaded, run, downloaded). */
async function onGpu(gpu: GpuContext, img: Image, body: (x: GpuImage, rec: Recording) => Promise<GpuImage>): Promise<Image> {
  return (await runGpu<Image, GpuImage>(gpu, img, 'colour test', {}, body)).output as Image;
}

/** The GPU's conversion back of `y` with the chroma of `colour`, both uploaded. */
async function backOnGpu(gpu: GpuContext, colour: Image, y: Image): Promise<Image> {
  const dy = await GpuImage.upload(gpu, y);
  try {
    return await onGpu(gpu, colour, (x, rec) => fromLumaGpu(x, dy, rec));
  } finally {
    dy.release();
  }
}

test('RGB ↔ YCrCb equals cv2.cvtColor both ways, 8 and 16-bit, RGB and RGBA: CPU and GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  for (const bits of [8, 16] as const) {
    const { rgba, y, back } = await cv2Case(bits);
    for (const c of [3, 4] as const) {
      const img = channels(rgba, c);
      const what = `${bits}-bit ${c === 3 ? 'RGB' : 'RGBA'}`;
      assertSame(lumaOf(img), y, `${what} CPU Y`);
      const cpuBack = withLuma(img, inverted(y));
      assertSame(channels(c === 4 ? cpuBack : channels3to4(cpuBack), 3), back, `${what} CPU back`);
      if (c === 4) assert.deepEqual([...channelOf(cpuBack, 3)], [...channelOf(img, 3)], `${what} CPU alpha kept`);
      if (!gpu) continue;
      assertSame(await onGpu(gpu, img, lumaGpu), y, `${what} GPU Y`);
      assertSame(await backOnGpu(gpu, img, inverted(y)), cpuBack, `${what} GPU back`);
    }
  }
});

function channels3to4(img: Image): Image {
  if (img.channels === 4) return img;
  const n = img.data.length / 3;
  const out = allocPixels(img.dtype, n * 4);
  for (let i = 0; i < n; i++) out.set(img.data.subarray(3 * i, 3 * i + 3), 4 * i);
  return imageFrom(out, img.shape as [number, number], 4);
}

function channelOf(img: Image, k: number): number[] {
  return Array.from({ length: img.data.length / img.channels }, (_, i) => img.data[i * img.channels + k]);
}

test('GPU RGB → gray equals cv2.cvtColor(RGB2GRAY) on a real photograph and on random 8/16-bit RGB and RGBA', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const photo = await readImage(fixture('images', 'chelsea.png'));
  assertSame(await onGpu(gpu, photo, grayGpu), await readImage(fixture('images', 'chelsea_gray_cv2.png')), 'chelsea');
  for (const bits of [8, 16]) {
    const rgb = imageFrom((await readImage(fixture('images', `gray-rgb${bits}.npy`))).data, [64, 64], 3);
    const want = imageFrom((await readImage(fixture('images', `gray-rgb${bits}-cv2.npy`))).data, [64, 64]);
    assertSame(await onGpu(gpu, rgb, grayGpu), want, `${bits}-bit RGB`);
    assertSame(await onGpu(gpu, channels3to4(rgb), grayGpu), want, `${bits}-bit RGBA`);
  }
});

/** Random colour images of sizes that are no whole number of words per row or image. */
function oddImages(): Image[] {
  const out: Image[] = [];
  for (const [h, w] of [[1, 1], [1, 3], [3, 5], [7, 13], [97, 131]]) {
    for (const c of [3, 4] as const) {
      out.push(imageFrom(randomBytes(h * w * c, h * w + c), [h, w], c));
      out.push(imageFrom(randomU16(h * w * c, h + w + c), [h, w], c));
    }
  }
  return out;
}

test('CPU colour conversions on the pool — native threads, JavaScript workers, one thread — give the same bytes as the loops, on odd sizes', async (t) => {
  const pool = new NodeWorkerPool(2);
  // CI builds the native pieces (IMGPU_REQUIRE_NATIVE=1); elsewhere their part is left out, said.
  if (!pool.native && process.env.IMGPU_REQUIRE_NATIVE === '1') assert.fail('dist/native/imgpu-native.node missing: did npm ci run scripts/build-native.mjs?');
  if (!pool.native) t.diagnostic('native kernels not built (scripts/build-native.mjs): JavaScript paths only');
  const workers = new NodeWorkerPool(2);
  workers.native = undefined;
  const pools: [string, CpuPool][] = [...(pool.native ? [['native', pool] as [string, CpuPool]] : []), ['workers', workers], ['inline', inlinePool]];
  // Sizes past one block of the workers' split (cpuTuning.pixelBlock) and of the native one (64 Ki pixels) as well.
  const large = [imageFrom(randomBytes(301 * 503 * 3, 9), [301, 503], 3), imageFrom(randomU16(263 * 509 * 4, 10), [263, 509], 4)];
  try {
    for (const img of [...oddImages(), ...large]) {
      const what = `${img.shape.join('×')}×${img.channels} ${img.dtype}`;
      const y = lumaOf(img);
      const y2 = inverted(y);
      for (const [name, p] of pools) {
        assertSame(await grayCpu(img, p), toGray(img), `${what} gray, ${name}`);
        assertSame(await lumaCpu(img, p), y, `${what} Y, ${name}`);
        assertSame(await withLumaCpu(img, y2, p), withLuma(img, y2), `${what} back, ${name}`);
      }
    }
  } finally {
    await pool.close();
    await workers.close();
  }
});

test('GPU colour conversions equal the CPU on odd sizes, 8 and 16-bit, RGB and RGBA', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const img of oddImages()) {
    const what = `${img.shape.join('×')}×${img.channels} ${img.dtype}`;
    const y = lumaOf(img);
    assertSame(await onGpu(gpu, img, grayGpu), toGray(img), `${what} gray`);
    assertSame(await onGpu(gpu, img, lumaGpu), y, `${what} Y`);
    const y2 = inverted(y);
    assertSame(await backOnGpu(gpu, img, y2), withLuma(img, y2), `${what} back`);
  }
});

test('GPU colour conversions beyond one storage binding run in ranges with the same result', async (t) => {
  const gpu = await gpuWithBindingLimit(t, 4096);
  if (!gpu) return;
  for (const img of [imageFrom(randomBytes(61 * 67 * 3, 5), [61, 67], 3), imageFrom(randomU16(41 * 53 * 4, 6), [41, 53], 4)]) {
    const luma = lumaOf(img);
    let pieces = 0;
    const y = (await runGpu<Image, GpuImage>(gpu, img, 'ranges', {}, async (x, rec) => {
      const out = await lumaGpu(x, rec);
      pieces = rec.pieces;
      return out;
    })).output as Image;
    assert.ok(pieces > 1, `${img.dtype}: split into ranges (${pieces})`);
    assertSame(y, luma, `${img.dtype} Y in ranges`);
    assertSame(await onGpu(gpu, img, grayGpu), toGray(img), `${img.dtype} gray in ranges`);
    assertSame(await backOnGpu(gpu, img, inverted(luma)), withLuma(img, inverted(luma)), `${img.dtype} back in ranges`);
  }
});

test('colour CLAHE of a resident colour GpuImage equals cv2 (YCrCb Y, back) and stays on the device', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const [input, ref] of [['chelsea.png', 'chelsea-8x8-2.png'], ['chelsea16.png', 'chelsea16-8x8-2.png']]) {
    const img = await readImage(fixture('images', input));
    const dev = await GpuImage.upload(gpu, img);
    const counted: { readbacks: number; result: OpResult<GpuImage> } = await countReadbacks(gpu, () => clahe(dev, { tiles: { width: 8, height: 8 }, clip: 2 }));
    const r = counted.result;
    assert.ok(r.output instanceof GpuImage && r.output.channels === 3, 'resident colour out');
    assert.equal(counted.readbacks, 0, `${input}: nothing read back to the host on the way`);
    assertSame(await r.output.toHost(), await readImage(fixture('clahe', ref)), input);
    r.output.release();
    dev.release();
  }
  for (const img of [imageFrom(randomBytes(7 * 5 * 3, 75), [7, 5], 3), imageFrom(randomU16(97 * 131 * 4, 97, 4096), [97, 131], 4)]) {
    const opts = { tiles: { width: 3, height: 2 }, clip: 2 };
    const dev = await GpuImage.upload(gpu, img);
    const r = await clahe(dev, opts);
    assertSame(await r.output.toHost(), (await clahe(img, opts)).output, `resident colour CLAHE ${img.shape.join('×')}×${img.channels} ${img.dtype}`);
    r.output.release();
    dev.release();
  }
});

test('operations on gray take a resident colour GpuImage through the GPU conversion: the host path\'s results', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await readImage(fixture('images', 'chelsea.png'));
  const img16 = await readImage(fixture('images', 'chelsea16.png'));
  const dev = await GpuImage.upload(gpu, img);
  const dev16 = await GpuImage.upload(gpu, img16);
  const gray = await GpuImage.upload(gpu, toGray(img));
  const gray16 = await GpuImage.upload(gpu, toGray(img16));
  /** Through the GPU conversion: no more read back than the same operation on the gray image resident (the host's way adds one). */
  const convertedOnDevice = async (what: string, run: (x: GpuImage) => Promise<{ output: unknown }>, colour: GpuImage, ofGray: GpuImage) => {
    const c = await countReadbacks(gpu, () => run(colour));
    const g = await countReadbacks(gpu, () => run(ofGray));
    for (const { result } of [c, g]) if (result.output instanceof GpuImage) result.output.release();
    assert.equal(c.readbacks, g.readbacks, `${what}: the colour GpuImage converted on the device`);
  };
  try {
    await convertedOnDevice('equalize', (x) => equalize(x), dev, gray);
    await convertedOnDevice('threshold otsu uint16', (x) => threshold(x, { method: 'otsu' }), dev16, gray16);
    await convertedOnDevice('threshold isodata', (x) => threshold(x, { method: 'isodata' }), dev, gray);
    await convertedOnDevice('histogram', (x) => histogram(x), dev, gray);
    const eq = await equalize(dev);
    assertSame(await eq.output.toHost(), (await equalize(img)).output, 'equalize');
    eq.output.release();
    // 16-bit Otsu and isodata take the GPU steps path (several recordings).
    for (const [src, host, method] of [[dev16, img16, 'otsu'], [dev, img, 'isodata']] as const) {
      const th = await threshold(src, { method });
      assertSame(await th.output.toHost(), (await threshold(host, { method })).output, `threshold ${method} ${host.dtype}`);
      th.output.release();
    }
    assert.deepEqual([...(await histogram(dev)).output], [...(await histogram(img)).output], 'histogram');
    // In a shared recording (a batch's): the conversion queued there is submitted before the steps' own submissions.
    // Noise of its own size, so that no pooled buffer already holds its gray.
    const noise = imageFrom(randomBytes(61 * 83 * 3, 61), [61, 83], 3);
    for (let i = 0; i < 3; i++) {
      const devNoise = await GpuImage.upload(gpu, noise);
      const rec = new Recording(gpu, new KernelTimer(gpu, false), 'shared');
      const shared = await runChain(devNoise, [{ op: 'threshold', params: { method: 'isodata' } }], { recording: rec });
      rec.submit();
      assertSame(await shared.output.toHost(), (await threshold(noise, { method: 'isodata' })).output, `isodata after a conversion in a shared recording (${i})`);
      shared.output.release();
      devNoise.release();
    }
    const chain = await runPipeline(img, [{ op: 'clahe', params: {} }, { op: 'threshold', params: { method: 'otsu' } }], { gpu });
    const cpuChain = await runPipeline(img, [{ op: 'clahe', params: {} }, { op: 'threshold', params: { method: 'otsu' } }], {});
    assertSame(chain.output, cpuChain.output, 'pipeline clahe | threshold on colour');
  } finally {
    for (const x of [dev, dev16, gray, gray16]) x.release();
  }
});

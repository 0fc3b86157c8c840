import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import type { GpuContext, HostCopy } from '../../src/core/gpu/context.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { jpegCoefDecoder, type CoefLayout } from '../../src/io/jpeg-coef.js';
import { encodeJpeg, exifOrientation, nativeJpeg } from '../../src/io/jpeg.js';
import { RecycledBuffers } from '../../src/node/codec-pool.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { nativeHostCopy } from '../../src/node/host-copy.js';
import { encodeJpegGpu, nativeCoefEncoder } from '../../src/node/jpeg-encode-gpu.js';
import type { JpegEntropyPath } from '../../src/codecs/jpeg/options.js';
import { prepareJpegGpu, readJpegToGpu, resolveJpegPath, type GpuJpegTimes, type JpegPathOption } from '../../src/node/jpeg-gpu.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { fixture } from '../helpers/fixtures.js';

// References: scripts/make_jpeg_gpu_fixtures.py (cv2.imread of Debian's OpenCV 4.6 / libjpeg-turbo 2.1.5, saved as
// PNG; an RGB PNG read back is cv2's BGR in RGB order, the library's).
const file = (name: string) => fixture('jpeg-gpu', name);
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

test('the GPU JPEG decoder\'s entropy stage is built where required', { skip: process.env.IMGPU_REQUIRE_NATIVE !== '1' }, () => {
  assert.ok(jpegCoefDecoder(), 'dist/native/imgpu-jpegcoef.node did not load');
});

/** A JPEG with an EXIF orientation tag inserted (APP1 after SOI; big-endian TIFF, one IFD entry), as make_jpeg_fixtures.py does. */
function withOrientation(jpeg: Uint8Array, o: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, o, 0, 0, 0, 0, 0, 0];
  const payload = [...Buffer.from('Exif\0\0', 'latin1'), ...tiff];
  const app1 = [0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 255, ...payload];
  return Uint8Array.from([...jpeg.subarray(0, 2), ...app1, ...jpeg.subarray(2)]);
}

/**
 * `memory`: through a batch's host memory (the coefficients uploaded in the compact form), else straight into upload
 * memory. `entropy`: where the Huffman decoding runs on the GPU path.
 */
async function decode(ctx: GpuContext, name: string, gray: boolean, jpeg: JpegPathOption = 'gpu', memory?: RecycledBuffers, entropy: JpegEntropyPath = 'gpu') {
  const r = await readJpegToGpu(ctx, readFileSync(file(`${name}.jpg`)), name, gray, { jpeg, host: memory, entropy });
  assert.ok(r, `${name}: no native decode`);
  const host = await r.image.toHost();
  r.image.release();
  return { ...r, host };
}

function assertIdentical(got: Image, want: Image, what: string) {
  const c = compareImages(got, want);
  assert.ok(c.identical, `${what}: ${got.shape.join('×')}×${got.channels} vs ${want.shape.join('×')}×${want.channels}, ${c.mismatches} bytes differ (max ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

/** Files whose Huffman decoding the GPU's covers (not progressive, no restart markers). */
const gpuHuffman = (name: string) => !/prog|rst|smooth/.test(name);

/** `gpuCovers`: whether the GPU's Huffman decoding takes the file (not where the coefficients need bands: it binds them whole). */
async function assertLikeCv2(ctx: GpuContext, name: string, colour: boolean, gpuCovers = gpuHuffman(name)) {
  for (const gray of colour ? [false, true] : [true]) {
    for (const [host, entropy] of [[undefined, 'gpu'], [new RecycledBuffers(1), 'gpu'], [undefined, 'cpu'], [new RecycledBuffers(1), 'cpu']] as const) {
      const r = await decode(ctx, name, gray, 'gpu', host, entropy);
      const what = `${name} ${gray ? 'gray' : 'colour'}, Huffman decoding on the ${entropy}${host ? ', host memory' : ''}`;
      assert.equal(r.jpeg, 'gpu', `${what}: decoded on the ${r.jpeg} (${r.fallback})`);
      assert.equal(r.huffman, entropy === 'gpu' && gpuCovers ? 'gpu' : 'cpu', what);
      assertIdentical(r.host, await readImage(file(`${name}_${gray ? 'gray' : 'rgb'}.png`)), what);
    }
  }
}

const COLOUR = [
  ['c420', '4:2:0, 451×300'],
  ['c420_rst', '4:2:0 with restart markers'],
  ['c420_prog', '4:2:0 progressive'],
  ['c420_smooth', '4:2:0 progressive, scans never refined (libjpeg smooths the blocks: half the bytes differ without)'],
  ['c444', '4:4:4'],
  ['c444_prog', '4:4:4 progressive'],
  ['c422', '4:2:2'],
  ['c422_prog', '4:2:2 progressive'],
  ['tiny420', '4:2:0 3×5 (box upsampling)'],
  ['tiny422', '4:2:2 4×3 (box upsampling)'],
];

for (const [name, what] of COLOUR) {
  test(`GPU JPEG decode equals cv2.imread, colour and gray: ${what}`, { skip }, async (t) => {
    const ctx = await gpuOrSkip(t);
    if (ctx) await assertLikeCv2(ctx, name, true);
  });
}

for (const [name, what] of [['gray', 'one component, 301×255'], ['gray_prog', 'one component, progressive, restart markers']]) {
  test(`GPU JPEG decode equals cv2.imread(IMREAD_GRAYSCALE): ${what}`, { skip }, async (t) => {
    const ctx = await gpuOrSkip(t);
    if (!ctx) return;
    await assertLikeCv2(ctx, name, false);
    const r = await decode(ctx, name, false);
    assert.equal(r.host.channels, 1, 'a one-component JPEG decodes to one channel');
  });
}

test('GPU JPEG decode applies the EXIF orientation (1–8) as cv2.imread does, colour and gray', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // test/fixtures/jpeg (scripts/make_jpeg_fixtures.py): a 151×100 4:2:0 crop with each orientation tag, cv2.imread's references.
  for (let o = 1; o <= 8; o++) {
    for (const gray of [false, true]) {
      const r = await readJpegToGpu(ctx, readFileSync(fixture('jpeg', `crop_o${o}.jpg`)), `crop_o${o}`, gray, { jpeg: 'gpu' });
      assert.equal(r?.jpeg, 'gpu', `orientation ${o}: ${r?.fallback}`);
      const host = await r.image.toHost();
      r.image.release();
      assertIdentical(host, await readImage(fixture('jpeg', `crop_o${o}_${gray ? 'gray' : 'rgb'}.png`)), `orientation ${o} ${gray ? 'gray' : 'colour'}`);
    }
  }
});

test('GPU JPEG decode beyond the binding limit runs in bands of MCU rows, with the same pixels', { skip }, async (t: TestContext) => {
  // 64 KiB: the 451×300 photo's output (406 KB), planes and coefficients each need several bands.
  const ctx = await gpuWithBindingLimit(t, 64 << 10);
  if (!ctx) return;
  await assertLikeCv2(ctx, 'c420', true, false);
  await assertLikeCv2(ctx, 'c444', true, false);
  await assertLikeCv2(ctx, 'gray', false, false);
  // An oriented image is not split (its output rows are not the stored rows): left to readImage, which orients.
  const oriented = withOrientation(readFileSync(file('c420.jpg')), 6);
  assert.equal(exifOrientation(oriented), 6);
  assert.equal(await readJpegToGpu(ctx, oriented, 'o6', false, { jpeg: 'gpu' }), undefined);
  const times = { entropyMs: 0, submitMs: 0 } as GpuJpegTimes;
  const r = await readJpegToGpu(ctx, readFileSync(file('c420.jpg')), 'c420', false, { jpeg: 'gpu', times });
  r?.image.release();
  assert.ok((times.bands ?? 0) > 1, `ran in ${times.bands} band(s)`);
});

test('a 4:4:0 JPEG (luma factors rewritten from 4:2:2) decodes on the GPU, no fallback, the CPU path\'s pixels (test/io/jpeg-layouts: every layout)', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const gray of [false, true]) {
    const r = await decode(ctx, 'c440', gray);
    assert.equal(r.jpeg, 'gpu', `${r.fallback}`);
    assert.equal(r.fallback, undefined);
    assertIdentical(r.host, await readImage(file('c440.jpg'), { gray }), `c440 ${gray ? 'gray' : 'colour'}`);
  }
});

test('the JPEG path option: cpu on the CPU, gpu on the GPU (no fallback reported), auto on the GPU of a hardware adapter only', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const want = await readImage(file('c420_rgb.png'));
  const auto = ctx.adapter.software ? 'cpu' : 'gpu';
  assert.equal(resolveJpegPath('auto', { ...ctx, adapter: { ...ctx.adapter, software: false } } as GpuContext), 'gpu', 'auto on a hardware adapter');
  assert.equal(resolveJpegPath('auto', { ...ctx, adapter: { ...ctx.adapter, software: true } } as GpuContext), 'cpu', 'auto on a software adapter');
  assert.equal(resolveJpegPath('auto'), 'cpu', 'auto with no context');
  for (const [opt, path] of [['cpu', 'cpu'], ['auto', auto], ['gpu', 'gpu']] as const) {
    const r = await decode(ctx, 'c420', false, opt);
    assert.equal(r.jpeg, path, opt);
    assert.equal(r.fallback, undefined);
    assertIdentical(r.host, want, opt);
  }
});

test('a truncated JPEG is a typed error on the GPU path too', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const bytes = readFileSync(file('c420.jpg'));
  await assert.rejects(readJpegToGpu(ctx, bytes.subarray(0, bytes.length >> 1), 'cut.jpg', false, { jpeg: 'gpu' }), UnsupportedFormatError);
  await assert.rejects(readJpegToGpu(ctx, bytes.subarray(0, bytes.length >> 1), 'cut.jpg', true, { jpeg: 'gpu' }), UnsupportedFormatError);
});

test('with host buffers (a batch), the coefficients reach upload memory through the off-thread copy, not the JavaScript thread\'s, in the compact form; same pixels', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const copies = { sync: 0, async: 0 };
  let bytes = 0;
  const native = nativeHostCopy();
  const sync: HostCopy = (dst, src) => {
    copies.sync++;
    dst.set(src);
  };
  sync.parallel = true;
  sync.async = async (dst, src) => {
    copies.async++;
    bytes += src.byteLength;
    await (native?.async ?? (async (d: Uint8Array, s: Uint8Array) => d.set(s)))(dst, src);
  };
  const ctx = await createNodeGpuContext({ hostCopy: sync });
  try {
    const host = new RecycledBuffers(2);
    for (const [name, gray] of [['c420', false], ['c444', true], ['gray', true]] as const) {
      const before = { ...copies };
      bytes = 0;
      const jpeg = readFileSync(file(`${name}.jpg`));
      const r = await readJpegToGpu(ctx, jpeg, name, gray, { jpeg: 'gpu', host, entropy: 'cpu' });
      assert.equal(r?.jpeg, 'gpu', `${name}: decoded on the GPU`);
      assert.deepEqual(copies, { sync: before.sync, async: before.async + 1 }, `${name}: one off-thread copy, none on the JavaScript thread`);
      const plain = (jpegCoefDecoder()!.coefLayout(jpeg, gray) as CoefLayout).bytes;
      assert.ok(bytes < plain, `${name}: ${bytes} bytes uploaded, the plain form is ${plain}`);
      assertIdentical(await r!.image.toHost(), await readImage(file(`${name}_${gray ? 'gray' : 'rgb'}.png`)), `${name} through host buffers`);
      r!.image.release();
    }
  } finally {
    ctx.destroy();
  }
});

test('prepareJpegGpu compiles every kernel a GPU decode and encode use: after it, decoding and encoding a photo compile nothing', { skip }, async (t) => {
  if (!(await gpuOrSkip(t)) || !nativeCoefEncoder()) return;
  const ctx = await createNodeGpuContext();
  try {
    await prepareJpegGpu(ctx);
    let compiled = 0;
    const create = ctx.device.createComputePipelineAsync.bind(ctx.device);
    ctx.device.createComputePipelineAsync = (d) => {
      compiled++;
      return create(d);
    };
    const host = new RecycledBuffers(1);
    for (const [name, gray] of [['c420', false], ['c444', true]] as const) {
      const r = await readJpegToGpu(ctx, readFileSync(file(`${name}.jpg`)), name, gray, { jpeg: 'gpu', host });
      assert.equal(r?.jpeg, 'gpu');
      assert.ok((await encodeJpegGpu(r!.image, { quality: 90 })).length > 0);
      r!.image.release();
    }
    assert.equal(compiled, 0, 'no kernel compiled after prepareJpegGpu');
  } finally {
    ctx.destroy();
  }
});

/** Decodes `jpeg` on the GPU path with the Huffman decoding on the GPU and on the CPU: the same pixels, or the same typed error. */
async function assertHuffmanAgree(ctx: GpuContext, jpeg: Uint8Array, what: string, gray = false): Promise<'decoded' | 'rejected'> {
  const read = async (entropy: JpegEntropyPath) => {
    try {
      const r = await readJpegToGpu(ctx, jpeg, what, gray, { jpeg: 'gpu', entropy });
      assert.ok(r, what);
      const host = await r.image.toHost();
      r.image.release();
      return { host, huffman: r.huffman };
    } catch (e) {
      assert.ok(e instanceof UnsupportedFormatError, `${what} (${entropy}): ${(e as Error).message}`);
      return undefined;
    }
  };
  const [gpu, cpu] = [await read('gpu'), await read('cpu')];
  assert.equal(gpu === undefined, cpu === undefined, `${what}: one path rejected it, the other did not`);
  if (gpu && cpu) assertIdentical(gpu.host, cpu.host, what);
  return gpu ? 'decoded' : 'rejected';
}

test('GPU Huffman decoding of a photo of many workgroups\' subsequences (2 MP, colour and gray) gives the CPU stage\'s pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // chelsea (451×300) tiled 4×6 with a per-tile shift of its colours: 1804×1800, q95 4:2:0 by libjpeg-turbo (cv2's encoder).
  const tile = await readImage(fixture('images', 'chelsea.png'));
  const [th, tw] = tile.shape, c = tile.channels;
  const W = tw * 4, H = th * 6;
  const px = new Uint8Array(W * H * c);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) for (let k = 0; k < c; k++) {
    px[(y * W + x) * c + k] = (tile.data[((y % th) * tw + (x % tw)) * c + k] + 37 * (Math.floor(y / th) + 2 * Math.floor(x / tw)) * (k + 1)) & 255;
  }
  const jpeg = encodeJpeg({ data: px, shape: [H, W], channels: c, dtype: 'uint8' } as Image, 95)!;
  for (const gray of [false, true]) {
    const r = await readJpegToGpu(ctx, jpeg, 'tiled', gray, { jpeg: 'gpu', entropy: 'gpu' });
    assert.equal(r?.huffman, 'gpu', 'Huffman decoding on the GPU');
    r!.image.release();
    assert.equal(await assertHuffmanAgree(ctx, jpeg, `tiled ${gray ? 'gray' : 'colour'}`, gray), 'decoded');
  }
});

test('damaged entropy-coded data: the GPU Huffman decoder gives the CPU stage\'s pixels or its typed error, never other pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const jpeg = readFileSync(file('c420.jpg'));
  const sos = jpeg.findIndex((b, i) => b === 0xff && jpeg[i + 1] === 0xda);
  const data = sos + 2 + ((jpeg[sos + 2] << 8) | jpeg[sos + 3]);
  const outcomes = { decoded: 0, rejected: 0 };
  for (let k = 0; k < 12; k++) {
    const bad = Uint8Array.from(jpeg);
    const at = data + Math.floor(((bad.length - 2 - data) * (k + 0.5)) / 12);
    // A changed byte that is neither 0xFF nor stuffing, so the segment's markers stay as they were.
    if (bad[at] === 0xff || bad[at - 1] === 0xff) continue;
    bad[at] = (bad[at] ^ (k % 2 ? 0x5a : 0x01)) === 0xff ? 0xfe : bad[at] ^ (k % 2 ? 0x5a : 0x01);
    outcomes[await assertHuffmanAgree(ctx, bad, `byte ${at} changed`)]++;
  }
  // Bytes between the last block and EOI: libjpeg warns of extraneous data (an error on both paths).
  const extra = Uint8Array.from([...jpeg.subarray(0, jpeg.length - 2), 0x12, 0x34, 0x56, 0xff, 0xd9]);
  outcomes[await assertHuffmanAgree(ctx, extra, 'bytes after the last block')]++;
  assert.ok(outcomes.rejected > 0, `some damage is reported: ${JSON.stringify(outcomes)}`);
});

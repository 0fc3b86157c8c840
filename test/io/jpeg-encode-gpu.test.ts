import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { GpuLimitError, InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { maxBinding } from '../../src/core/gpu/limits.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { transferTuning } from '../../src/core/gpu/transfer.js';
import { createImage, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { encodeNpy } from '../../src/io/npy.js';
import { blockLayout, encodeJpegGpu, jpegBands, nativeCoefEncoder, type JpegEncodePhases, type JpegEntropyPath, type JpegGpuEncodeOptions } from '../../src/node/jpeg-encode-gpu.js';
import { entropyBands, entropyTuning } from '../../src/codecs/jpeg/encode/huffman-encode.js';
import { otsuKernelCompiled } from '../../src/ops/threshold/gpu.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { runOperation } from '../../src/core/op.js';
import { encodeJpegFromGpu } from '../../src/node/jpeg-gpu.js';
import { fixture, mirrorTiled } from '../helpers/fixtures.js';
import { countSubmissions, gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';
import { requiredOrSkip } from '../helpers/require.js';

// References: test/io/jpeg_encode_refs.py, run here through Debian's Python: cv2.imwrite's files (4:2:0, gray) and
// Pillow's 4:4:4 / 4:2:2 on the same libjpeg, for real photographs at sizes that are and are not MCU multiples.
const required = process.env.IMGPU_REQUIRE_NATIVE === '1';
const skip = nativeCoefEncoder() || required ? false : 'the GPU encoder\'s entropy coder is not built (scripts/build-native.mjs)';
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'io', 'jpeg_encode_refs.py');

let refs: { dir: string; images: [string, number][] } | string | undefined;

/** The reference folder (made once), or undefined with the test skipped where Debian's Python cannot make it. */
function references(t: TestContext): { dir: string; images: [string, number][] } | undefined {
  if (refs === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'imgpu-jpegenc-'));
    const r = spawnSync(PYTHON, [SCRIPT, dir, fixture('images')], { encoding: 'utf8' });
    refs = r.status === 0
      ? { dir, images: r.stdout.trim().split(' ').map((s) => s.split(':')).map(([n, c]) => [n, Number(c)] as [string, number]) }
      : `${PYTHON} could not write the cv2 references: ${r.error?.message ?? r.stderr.trim().split('\n').pop()}`;
  }
  if (typeof refs !== 'string') return refs;
  if (required) throw new Error(refs);
  t.skip(refs);
  return undefined;
}

/** cv2.imencode's JPEG of `img` (RGB or gray) at `quality`, by Debian's Python: the reference file's bytes. */
function cv2Jpeg(img: Image, quality: number): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-cv2jpeg-'));
  try {
    writeFileSync(join(dir, 'in.npy'), encodeNpy(img));
    const py = [
      'import sys, numpy as np, cv2',
      'a = np.load(sys.argv[1])',
      'a = np.ascontiguousarray(a[:, :, ::-1]) if a.ndim == 3 else a',
      "open(sys.argv[2], 'wb').write(cv2.imencode('.jpg', a, [cv2.IMWRITE_JPEG_QUALITY, int(sys.argv[3])])[1].tobytes())",
    ].join('\n');
    const r = spawnSync(PYTHON, ['-c', py, join(dir, 'in.npy'), join(dir, 'out.jpg'), String(quality)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${PYTHON} cv2.imencode failed: ${r.error?.message ?? r.stderr}`);
    return readFileSync(join(dir, 'out.jpg'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The named photograph, resident on `ctx`. */
async function resident(ctx: GpuContext, dir: string, name: string): Promise<GpuImage> {
  return GpuImage.upload(ctx, await readImage(join(dir, `${name}.png`)));
}

/**
 * Names of the cases whose GPU-encoded bytes differ from the reference file `ref(name)`, with the entropy coding on
 * each of `entropy` (that path checked to be the one that ran: `coded` is where 'gpu' is expected to code).
 */
async function mismatches(ctx: GpuContext, dir: string, names: string[], cases: { opts: JpegGpuEncodeOptions; ref: (name: string) => string }[],
  entropy: JpegEntropyPath[] = ['cpu', 'gpu'], coded: JpegEntropyPath = 'gpu'): Promise<string[]> {
  const bad: string[] = [];
  for (const name of names) {
    const img = await resident(ctx, dir, name);
    for (const { opts, ref } of cases) {
      for (const path of entropy) {
        const phases = {} as JpegEncodePhases;
        const bytes = Buffer.from(await encodeJpegGpu(img, { ...opts, entropy: path, phases }));
        if (!bytes.equals(readFileSync(join(dir, ref(name))))) bad.push(`${ref(name)}, ${path} entropy (${bytes.length} bytes)`);
        const ran = path === 'gpu' ? coded : 'cpu';
        if (phases.entropyPath !== ran) bad.push(`${ref(name)}: entropy coded on ${phases.entropyPath}, not ${ran}`);
      }
    }
    img.release();
  }
  return bad;
}

/**
 * mismatches() of the GPU entropy coder, at qualities 95 and 100, on a photograph and two extremes: the check of the
 * tests that make its readback or packing take an unusual turn (tuning changed around it).
 */
function gpuCodedMismatches(ctx: GpuContext, dir: string): Promise<string[]> {
  const cases = [95, 100].map((quality) => ({ opts: { quality }, ref: (n: string) => `${n}_q${quality}.jpg` }));
  return mismatches(ctx, dir, ['chelsea', 'checker_53x37', 'noise_67x45'], cases, ['gpu']);
}

test('the GPU JPEG encoder\'s entropy coder is built where required', { skip: !required }, () => {
  assert.ok(nativeCoefEncoder(), 'dist/native/imgpu-jpegenc.node did not load');
});

test('GPU JPEG encode, entropy coding on the CPU and on the GPU: files byte-identical to cv2.imwrite, colour (4:2:0) and gray photographs and extremes, qualities 95/75/100/50/10/1, sizes not multiples of the MCU down to 1×1', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  const cases = [95, 75, 100, 50, 10, 1].map((quality) => ({ opts: { quality }, ref: (n: string) => `${n}_q${quality}.jpg` }));
  assert.deepEqual(await mismatches(ctx, r.dir, r.images.map(([n]) => n), cases), []);
  assert.ok(r.images.some(([, c]) => c === 1) && r.images.some(([, c]) => c === 3), 'gray and colour images');
});

test('GPU JPEG encode, entropy coding on the CPU and on the GPU: 4:4:4 and 4:2:2 byte-identical to libjpeg\'s own encoder (Pillow on the library cv2 uses)', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  const cases = (['4:4:4', '4:2:2'] as const).flatMap((subsampling) =>
    [95, 75].map((quality) => ({ opts: { quality, subsampling }, ref: (n: string) => `${n}_${subsampling.replaceAll(':', '')}_q${quality}.jpg` })));
  assert.deepEqual(await mismatches(ctx, r.dir, r.images.filter(([, c]) => c === 3).map(([n]) => n), cases), []);
});

test('GPU JPEG encode beyond one storage binding: bands of MCU rows give the same bytes', { skip }, async (t) => {
  const ctx = await gpuWithBindingLimit(t, 64 << 10);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  // Several bands each, starting at rows whose first byte is not binding-aligned.
  for (const [name, channels] of [['coffee_587x397', 3], ['camera_499x509', 1]] as const) {
    const img = await readImage(join(r.dir, `${name}.png`));
    const [h, w] = img.shape;
    assert.ok(jpegBands(blockLayout(w, h, channels, '4:2:0'), channels, maxBinding(ctx)).length > 3, `${name} is split`);
  }
  const cases = [{ opts: { quality: 95 }, ref: (n: string) => `${n}_q95.jpg` }, { opts: { quality: 75, subsampling: '4:4:4' as const }, ref: (n: string) => `${n}_444_q75.jpg` }];
  // Their coded bytes, stuffed, could take more than 64 KiB: the GPU coder leaves them to the CPU's (the same bytes).
  assert.deepEqual(await mismatches(ctx, r.dir, ['coffee_587x397'], cases, ['cpu', 'gpu'], 'cpu'), []);
  assert.deepEqual(await mismatches(ctx, r.dir, ['camera_499x509'], cases.slice(0, 1), ['cpu', 'gpu'], 'cpu'), []);
});

test('GPU JPEG encode with GPU entropy coding beyond one storage binding: bands of MCU rows carry the DC predictions and bit offsets across', { skip }, async (t) => {
  const ctx = await gpuWithBindingLimit(t, 256 << 10);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  for (const [name, channels, subsampling] of [['coffee_587x397', 3, '4:2:0'], ['coffee_587x397', 3, '4:4:4'], ['camera_499x509', 1, '4:2:0']] as const) {
    const img = await readImage(join(r.dir, `${name}.png`));
    const [h, w] = img.shape;
    assert.ok(entropyBands(blockLayout(w, h, channels, subsampling), maxBinding(ctx)).length > 2, `${name} ${subsampling} is coded in bands`);
  }
  const cases = [{ opts: { quality: 95 }, ref: (n: string) => `${n}_q95.jpg` }, { opts: { quality: 75, subsampling: '4:4:4' as const }, ref: (n: string) => `${n}_444_q75.jpg` }];
  assert.deepEqual(await mismatches(ctx, r.dir, ['coffee_587x397'], cases, ['gpu']), []);
  assert.deepEqual(await mismatches(ctx, r.dir, ['camera_499x509'], cases.slice(0, 1), ['gpu']), []);
});

test('GPU JPEG encode with GPU entropy coding: coded bytes past the first readback chunk (64 bytes: the count and 56 bytes) are read by a second submission', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  transferTuning.readChunk = 64;
  try {
    assert.deepEqual(await gpuCodedMismatches(ctx, r.dir), []);
  } finally {
    transferTuning.readChunk = undefined;
  }
});

test('GPU JPEG encode with GPU entropy coding: coded bytes beyond the capacity guessed are packed again at their size; the same files', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  const saved = entropyTuning.capacityScale;
  entropyTuning.capacityScale = 0; // 1 KiB: the tiny photos fit, the others are packed twice
  try {
    assert.deepEqual(await gpuCodedMismatches(ctx, r.dir), []);
  } finally {
    entropyTuning.capacityScale = saved;
  }
});

test('GPU JPEG encode with GPU entropy coding: coded bytes read back through many staging chunks (4 KiB each) give the same files, in host memory too', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  transferTuning.readChunk = 4096;
  try {
    assert.deepEqual(await gpuCodedMismatches(ctx, r.dir), []);
    const img = await GpuImage.upload(ctx, await readImage(join(r.dir, 'chelsea.png')));
    const file = await encodeJpegGpu(img, { entropy: 'gpu', host: { alloc: (n) => new SharedArrayBuffer(n), give: () => undefined } });
    assert.ok(file.byteLength > 3 * 4096, 'the coded bytes span several chunks');
    assert.ok(Buffer.from(file).equals(readFileSync(join(r.dir, 'chelsea_q95.jpg'))), 'host memory');
    img.release();
  } finally {
    transferTuning.readChunk = undefined;
  }
});

test('GPU JPEG encode recorded after the operation that computes the image (the recording option, a batch\'s photo): one submission for both, the coded bytes read back in it; the bytes of the two apart', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  const saved = entropyTuning.capacityScale;
  entropyTuning.capacityScale = 8; // one pack: the coded bytes fit the capacity whatever was coded before
  await otsuKernelCompiled(ctx); // without it Otsu runs as steps, with a readback between them (otsuKernelReady)
  const img = await GpuImage.upload(ctx, await readImage(join(r.dir, 'chelsea.png'), { gray: true }));
  try {
    const run = (recording?: Recording) => runOperation(OPERATIONS.threshold, img, { method: 'otsu' }, { wait: false, extras: false, recording });
    const apart = (await run()).output as GpuImage;
    const expected = await encodeJpegGpu(apart, { entropy: 'gpu' });
    apart.release();
    const rec = new Recording(ctx, new KernelTimer(ctx, false), 'photo', true);
    let file: Uint8Array = new Uint8Array();
    const submissions = await countSubmissions(ctx, async () => {
      const out = (await run(rec)).output as GpuImage;
      file = await encodeJpegGpu(out, { entropy: 'gpu', recording: rec });
      out.release();
    });
    assert.equal(submissions, 1);
    assert.ok(Buffer.from(file).equals(Buffer.from(expected)));
  } finally {
    img.release();
    entropyTuning.capacityScale = saved;
  }
});

test('GPU JPEG encode on libuv\'s threads, and encodeJpegFromGpu with jpeg gpu/cpu/auto: the same bytes; the image stays resident', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  const r = ctx && references(t);
  if (!ctx || !r) return;
  const host = await readImage(join(r.dir, 'chelsea.png'));
  const img = await GpuImage.upload(ctx, host);
  const ref = readFileSync(join(r.dir, 'chelsea_q95.jpg'));
  assert.ok(Buffer.from(await encodeJpegGpu(img, { async: true })).equals(ref), 'async');
  for (const jpeg of ['gpu', 'cpu', 'auto'] as const) {
    const bytes = await encodeJpegFromGpu(img, 95, { jpeg, async: true });
    assert.ok(bytes && Buffer.from(bytes).equals(ref), `encodeJpegFromGpu, jpeg: '${jpeg}'`);
  }
  assert.ok(compareImages(await img.toHost(), host).identical, 'the input is untouched');
  img.release();
});

test('GPU JPEG encode of a colour photograph beyond lavapipe\'s real 128 MiB binding: cv2.imwrite\'s bytes', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // chelsea mirror-tiled to 8000×5800 RGB: 139 MB, past the binding and not MCU multiples.
  const [h, w] = [5800, 8000];
  const host = mirrorTiled(await readImage(fixture('images', 'chelsea.png')), h, w);
  const bands = jpegBands(blockLayout(w, h, 3, '4:2:0'), 3, maxBinding(ctx)).length;
  if (host.data.byteLength > maxBinding(ctx)) assert.ok(bands > 1, 'split in bands');
  if (!references(t)) return; // Debian's Python with cv2 is there (or the test is skipped, gated as the others)
  const img = await GpuImage.upload(ctx, host);
  const want = cv2Jpeg(host, 95);
  assert.ok(Buffer.from(await encodeJpegGpu(img, { async: true, entropy: 'cpu' })).equals(want), `${bands} bands`);
  const phases = {} as JpegEncodePhases;
  assert.ok(Buffer.from(await encodeJpegGpu(img, { entropy: 'gpu', phases })).equals(want), `${bands} bands, GPU entropy coding`);
  assert.equal(phases.entropyPath, 'gpu');
  img.release();
});

test('GPU JPEG encode with GPU entropy coding and host memory (a batch): the file assembled in that memory, its coded bytes copied off the JavaScript thread; the same bytes', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx || !requiredOrSkip(t, ctx.hostCopy.async, 'no asynchronous host copy (the native module: scripts/build-native.mjs)')) return;
  const img = await GpuImage.upload(ctx, mirrorTiled(await readImage(fixture('images', 'chelsea.png')), 600, 900));
  const plain = Buffer.from(await encodeJpegGpu(img, { entropy: 'gpu' }));
  const copies = { sync: 0, async: 0 };
  const saved = ctx.hostCopy;
  const counted = Object.assign((d: Uint8Array, s: Uint8Array) => (copies.sync++, saved(d, s)), saved, { async: (d: Uint8Array, s: Uint8Array) => (copies.async++, saved.async!(d, s)) });
  Object.defineProperty(ctx, 'hostCopy', { value: counted, configurable: true });
  const allocated: SharedArrayBuffer[] = [];
  try {
    const file = await encodeJpegGpu(img, { entropy: 'gpu', host: { alloc: (n) => (allocated.push(new SharedArrayBuffer(n)), allocated.at(-1)!), give: () => undefined } });
    assert.ok(Buffer.from(file).equals(plain), 'the same bytes');
    assert.equal(allocated.length, 1);
    assert.equal(file.buffer, allocated[0], 'the file lies in the host memory');
    assert.deepEqual(copies, { sync: 0, async: 1 });
  } finally {
    Object.defineProperty(ctx, 'hostCopy', { value: saved, configurable: true });
    img.release();
  }
});

test('GPU JPEG encode refuses what it cannot encode before any work, with typed errors', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const f32 = await GpuImage.upload(ctx, createImage([8, 8], 'float32', 1));
  await assert.rejects(encodeJpegGpu(f32), UnsupportedFormatError);
  await assert.rejects(encodeJpegFromGpu(f32, 95, { jpeg: 'gpu' }), UnsupportedFormatError);
  f32.release();
  const rgba = await GpuImage.upload(ctx, createImage([8, 8], 'uint8', 4));
  await assert.rejects(encodeJpegGpu(rgba), UnsupportedFormatError);
  rgba.release();
  const gray = await GpuImage.upload(ctx, createImage([8, 8], 'uint8', 1));
  await assert.rejects(encodeJpegGpu(gray, { quality: 0 }), InvalidArgumentError);
  await assert.rejects(encodeJpegGpu(gray, { quality: 95.5 }), InvalidArgumentError);
  await assert.rejects(encodeJpegGpu(gray, { subsampling: '4:1:1' as never }), InvalidArgumentError);
  await assert.rejects(encodeJpegGpu(gray, { entropy: 'fpga' as never }), InvalidArgumentError);
  gray.release();
  // A gray image's coefficients take twice its bytes: past one buffer of the adapter, refused before any work.
  const small = await createNodeGpuContext({ limits: { maxBufferSize: 1 << 20 } });
  try {
    const big = await GpuImage.upload(small, createImage([800, 1000], 'uint8', 1));
    await assert.rejects(encodeJpegGpu(big), GpuLimitError);
    big.release();
  } finally {
    small.destroy();
  }
});

test('GPU JPEG encode equals the committed cv2.imwrite fixtures of test/io/jpeg.test.ts (gray and colour, no Python needed)', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const [input, ref] of [[fixture('images', 'camera.png'), 'camera_q95_cv2.jpg'], [fixture('jpeg', 'chelsea_q90_rgb.png'), 'chelsea_q95_cv2.jpg']]) {
    const img = await GpuImage.upload(ctx, await readImage(input));
    for (const entropy of ['cpu', 'gpu'] as const) assert.ok(Buffer.from(await encodeJpegGpu(img, { entropy })).equals(readFileSync(fixture('jpeg', ref))), `${ref}, ${entropy} entropy`);
    img.release();
  }
});

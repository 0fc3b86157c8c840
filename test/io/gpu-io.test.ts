// readImage into a resident GpuImage and writeImage from one (node/gpu-io.ts, the Node entry's readImage/writeImage):
// the user's flow read → operations on the GPU → write, on real fixtures, against cv2's pixels and files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileAccessError, ImageTooLargeError, InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import type { Image } from '../../src/core/image.js';
import { readImage as readHost, writeImage as writeHost } from '../../src/io/index.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { readImage, writeImage } from '../../src/node/gpu-io.js';
import { nativeCoefEncoder } from '../../src/node/jpeg-encode-gpu.js';
import type { JpegPathOption } from '../../src/node/jpeg-gpu.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { morph } from '../../src/ops/morph/index.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';

const native = nativeJpeg() && jpegCoefDecoder() && nativeCoefEncoder();
const skip = native || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';
const PATHS: JpegPathOption[] = ['gpu', 'cpu', 'auto'];
const dir = mkdtempSync(join(tmpdir(), 'imgpu-gpu-io-'));
const jpeg = (name: string) => fixture('jpeg', name);

/** Pixels that differ between two host images (Infinity where the shapes differ). */
function differing(a: Image, b: Image): number {
  if (a.shape.join() !== b.shape.join() || a.channels !== b.channels || a.dtype !== b.dtype) return Infinity;
  let n = 0;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) n++;
  return n;
}

/** The files in the output folder that are not outputs (a temporary file left behind). */
const strays = () => readdirSync(dir).filter((f) => f.startsWith('.'));

test('readImage with gpu: a JPEG arrives resident with cv2.imread\'s pixels on each path, colour, gray and EXIF-oriented', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const cases: [string, boolean, string][] = [
    ['chelsea_q90.jpg', false, 'chelsea_q90_rgb.png'], ['chelsea_q90.jpg', true, 'chelsea_q90_gray.png'],
    ['crop_o6.jpg', false, 'crop_o6_rgb.png'], ['crop_o3.jpg', true, 'crop_o3_gray.png'], ['camera_gray.jpg', false, 'camera_gray.jpg'],
  ];
  for (const jpegPath of PATHS) {
    for (const [file, gray, ref] of cases) {
      const img: GpuImage = await readImage(jpeg(file), { gpu: ctx, gray, jpeg: jpegPath });
      assert.ok(img instanceof GpuImage && img.ctx === ctx, `${file}: a GpuImage of the context`);
      assert.equal(differing(await img.toHost(), await readHost(jpeg(ref), { gray })), 0, `${file} gray=${gray} jpeg=${jpegPath}`);
      img.release();
    }
  }
});

/** cv2's file for `cv2.imwrite(cv2.equalizeHist(cv2.imread(src, gray)))`, made by Debian's Python. */
function cv2EqualizedJpeg(src: string, out: string): Buffer {
  const code = 'import cv2,sys; cv2.imwrite(sys.argv[2], cv2.equalizeHist(cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)))';
  const r = spawnSync(PYTHON, ['-c', code, src, out], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${PYTHON}: ${r.stderr}`);
  return readFileSync(out);
}

test('read → equalize → write, all resident: the file cv2 writes (imread → equalizeHist → imwrite), on each JPEG path', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.code}: ${w.message}`);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  for (const src of ['camera_gray.jpg', 'chelsea_q90.jpg']) {
    const ref = cv2EqualizedJpeg(jpeg(src), join(dir, `cv2-${src}`));
    for (const jpegPath of PATHS) {
      const img = await readImage(jpeg(src), { gpu: ctx, gray: true, jpeg: jpegPath });
      const eq = (await equalize(img, { gpu: ctx })).output;
      assert.ok(eq instanceof GpuImage, 'GpuImage in, GpuImage out');
      const out = join(dir, `eq-${jpegPath}-${src}`);
      await writeImage(out, eq, { jpeg: jpegPath });
      assert.ok(readFileSync(out).equals(ref), `${src}, jpeg ${jpegPath}: the bytes differ from cv2's`);
      eq.release();
      img.release();
    }
  }
  // Colour, decoded and encoded on the GPU: cv2.imwrite(cv2.imread(chelsea_q90.jpg)), byte for byte.
  const rgb = await readImage(jpeg('chelsea_q90.jpg'), { gpu: ctx, jpeg: 'gpu' });
  await writeImage(join(dir, 'rgb.jpg'), rgb, { jpeg: 'gpu', gpu: ctx });
  assert.ok(readFileSync(join(dir, 'rgb.jpg')).equals(readFileSync(jpeg('chelsea_q95_cv2.jpg'))));
  // The image stays resident and usable after its write.
  assert.equal(differing(await rgb.toHost(), await readHost(jpeg('chelsea_q90_rgb.png'))), 0);
  rgb.release();
  assert.deepEqual(strays(), [], 'no temporary file left');
  await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
  assert.deepEqual(warnings, [], 'jpeg \'gpu\' ran on the GPU: no fallback said');
});

const NODE_ENTRY = new URL('../../src/node.js', import.meta.url).href;

test('jpeg \'gpu\' where the GPU decoder is off (IMGPU_NO_GPU_JPEG=1): decoded on the CPU, the same pixels, said once per process', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const script = `
import { createNodeGpuContext, readImage } from ${JSON.stringify(NODE_ENTRY)};
const [a, b, ref] = process.argv.slice(1);
const gpu = await createNodeGpuContext();
let differing = 0;
for (const f of [a, b, a]) {
  const img = await readImage(f, { gpu, gray: true, jpeg: 'gpu' });
  const host = await img.toHost();
  if (f === a) { const r = await readImage(ref); differing += host.data.reduce((n, v, i) => n + (v !== r.data[i]), 0); }
  img.release();
}
console.log(JSON.stringify({ differing }));
gpu.destroy();
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, jpeg('chelsea_q90.jpg'), jpeg('camera_gray.jpg'), jpeg('chelsea_q90_gray.png')], {
    encoding: 'utf8', env: { ...process.env, IMGPU_NO_GPU_JPEG: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!), { differing: 0 });
  const said = r.stderr.match(/IMGPU_JPEG_GPU_FALLBACK/g) ?? [];
  assert.equal(said.length, 1, r.stderr);
  assert.match(r.stderr, /option `jpeg: 'gpu'`: the GPU decoder's entropy stage is not available .*off.*; decoded on the CPU/);
});

test('PNG round trip through a GpuImage: read on the host and uploaded once, downloaded once and written as the host writer writes', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const [name, gray] of [['camera.png', true], ['chelsea.png', false]] as const) {
    const host = await readHost(fixture('images', name), { gray });
    const img = await readImage(fixture('images', name), { gpu: ctx, gray });
    assert.ok(img instanceof GpuImage);
    const out = join(dir, `rt-${name}`);
    writeFileSync(out, 'an older file, replaced whole');
    await writeImage(out, img);
    await writeHost(join(dir, `host-${name}`), host);
    assert.ok(readFileSync(out).equals(readFileSync(join(dir, `host-${name}`))), `${name}: the same file as the host writer's`);
    assert.equal(differing(await readHost(out), host), 0);
    img.release();
  }
  assert.deepEqual(strays(), [], 'no temporary file left');
});

test('a 16-bit PNG stays 16-bit through the GPU: read, equalize (65536 bins) and write equal the host path', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const src = fixture('images', 'moon16.png');
  const img = await readImage(src, { gpu: ctx });
  assert.equal(img.dtype, 'uint16');
  const eq = (await equalize(img, { gpu: ctx })).output as GpuImage;
  const out = join(dir, 'moon16-eq.png');
  await writeImage(out, eq);
  const expected = (await equalize(await readHost(src))).output as Image;
  const written = await readHost(out);
  assert.equal(written.dtype, 'uint16');
  assert.equal(differing(written, expected), 0);
  // JPEG holds 8-bit samples: refused before any work, nothing written.
  await assert.rejects(writeImage(join(dir, 'moon16.jpg'), eq, { jpeg: 'gpu' }), UnsupportedFormatError);
  assert.ok(!existsSync(join(dir, 'moon16.jpg')));
  eq.release();
  img.release();
});

const CLOSE = { op: 'close', se: 'box:3x3x3' } as const;

test('volumes through the GPU keep their geometry: a NIfTI and a DICOM series read resident, an operation, written as NIfTI with their affine', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const src of [fixture('volumes', 'anatomical.nii'), fixture('volumes', 'ct-series')]) {
    const host = await readHost(src);
    const vol: GpuImage = await readImage(src, { gpu: ctx });
    assert.deepEqual(vol.geometry, host.geometry, 'read');
    const closed = (await morph(vol, CLOSE)).output as GpuImage;
    const out = join(dir, 'vol.nii.gz');
    await writeImage(out, closed);
    const back = await readHost(out);
    const expected = (await morph(host, CLOSE)).output as Image;
    assert.equal(differing(back, expected), 0);
    assert.deepEqual(back.geometry!.spacing.map((v) => +v.toFixed(5)), host.geometry!.spacing.map((v) => +v.toFixed(5)), 'written: spacing');
    assert.deepEqual(back.geometry!.origin.map((v) => +v.toFixed(4)), host.geometry!.origin.map((v) => +v.toFixed(4)), 'written: origin');
    closed.release();
    vol.release();
  }
});

test('a GpuImage of another context, or a released one, is refused with a typed error naming why; nothing is written', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const other = await createNodeGpuContext();
  try {
    const img = await readImage(fixture('images', 'camera.png'), { gpu: other, gray: true });
    await assert.rejects(equalize(img, { gpu: ctx }), (e: Error) => e instanceof InvalidArgumentError && /another GPU context than option `gpu`/.test(e.message));
    const out = join(dir, 'other.png');
    await assert.rejects(writeImage(out, img, { gpu: ctx }), (e: Error) => e instanceof InvalidArgumentError && /another GPU context/.test(e.message));
    assert.ok(!existsSync(out));
    await writeImage(out, img, { gpu: other }); // its own context: written
    img.release();
    await assert.rejects(writeImage(join(dir, 'released.png'), img), (e: Error) => e instanceof InvalidArgumentError && /released/.test(e.message));
    assert.ok(!existsSync(join(dir, 'released.png')));
  } finally {
    other.destroy();
  }
});

test('bad input to the resident readImage/writeImage: typed errors before any work', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  await assert.rejects(readImage(join(dir, 'missing.jpg'), { gpu: ctx }), FileAccessError);
  const cut = join(dir, 'cut.jpg');
  const bytes = readFileSync(jpeg('chelsea_q90.jpg'));
  writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
  for (const jpegPath of PATHS) await assert.rejects(readImage(cut, { gpu: ctx, jpeg: jpegPath }), UnsupportedFormatError, `truncated, jpeg ${jpegPath}`);
  for (const jpegPath of PATHS) await assert.rejects(readImage(jpeg('chelsea_q90.jpg'), { gpu: ctx, jpeg: jpegPath, maxPixels: 1000 }), ImageTooLargeError, `maxPixels, jpeg ${jpegPath}`);
  await assert.rejects(readImage(jpeg('chelsea_q90.jpg'), { gpu: ctx, jpeg: 'fast' as JpegPathOption }), InvalidArgumentError);
  const img = await readImage(jpeg('camera_gray.jpg'), { gpu: ctx });
  await assert.rejects(writeImage(join(dir, 'q.jpg'), img, { quality: 0 }), InvalidArgumentError);
  await assert.rejects(writeImage(join(dir, 'j.jpg'), img, { jpeg: 'fast' as JpegPathOption }), InvalidArgumentError);
  await assert.rejects(writeImage(join(dir, 'no-such-folder', 'a.jpg'), img, { jpeg: 'gpu' }), FileAccessError);
  await assert.rejects(writeImage(join(dir, 'a.bmp'), img), UnsupportedFormatError);
  img.release();
  assert.ok(!['q.jpg', 'j.jpg', 'a.bmp'].some((f) => existsSync(join(dir, f))));
});

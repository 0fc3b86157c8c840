import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { deflateSync, crc32 } from 'node:zlib';
import sharp from 'sharp';
import { compareImages } from '../../src/core/compare.js';
import { encodeNpy, readImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'imgpu-cli-limits-'));
const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));

/** The CLI with IMGPU_MAX_PIXELS set. */
function withMaxPixels(value: string, ...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, IMGPU_MAX_PIXELS: value } });
}

/** A PNG chunk: length, type, data, CRC. */
function chunk(type: string, data: Buffer): Buffer {
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(8 + data.length + 4);
  out.writeUInt32BE(data.length, 0);
  td.copy(out, 4);
  out.writeUInt32BE(crc32(td) >>> 0, 8 + data.length);
  return out;
}

/** A gray PNG whose header declares w×h pixels and whose data holds a few rows only (a decoder would inflate for minutes). */
function pngDeclaring(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const rows = deflateSync(Buffer.alloc(4 * (w + 1)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

/** A real 16×16 JPEG with its frame header (SOF0) rewritten to declare w×h pixels. */
async function jpegDeclaring(w: number, h: number): Promise<Buffer> {
  const jpeg = await sharp(Buffer.alloc(16 * 16, 128), { raw: { width: 16, height: 16, channels: 1 } }).jpeg().toBuffer();
  for (let p = 2; p + 9 < jpeg.length; p += 2 + jpeg.readUInt16BE(p + 2)) {
    if (jpeg[p] === 0xff && jpeg[p + 1] === 0xc0) {
      jpeg.writeUInt16BE(h, p + 5);
      jpeg.writeUInt16BE(w, p + 7);
      return jpeg;
    }
  }
  throw new Error('no SOF0 in the test JPEG');
}

test('a PNG or JPEG declaring 40000×40000 pixels is refused from its header (exit 3, one line), before decoding', async () => {
  const png = join(tmp, 'huge.png'), jpg = join(tmp, 'huge.jpg');
  writeFileSync(png, pngDeclaring(40000, 40000));
  writeFileSync(jpg, await jpegDeclaring(40000, 40000));
  for (const path of [png, jpg]) {
    assertOneLineError(cli('equalize', path, join(tmp, 'out.png'), '--device', 'cpu'), 3, /40000×40000 = 1600000000 pixels, more than the 268402689 imgpu decodes/);
  }
  // The limit is the environment's to set: lowered, a real photograph is refused; a bad value is a usage error.
  const cam = fixture('images', 'camera.png');
  assertOneLineError(withMaxPixels('100000', 'equalize', cam, join(tmp, 'o.png'), '--device', 'cpu'), 3, /512×512 = 262144 pixels, more than the 100000/);
  assertOneLineError(withMaxPixels('lots', 'equalize', cam, join(tmp, 'o.png'), '--device', 'cpu'), 2, /IMGPU_MAX_PIXELS must be a positive integer/);
  assert.equal(withMaxPixels('262144', 'equalize', cam, join(tmp, 'o.png'), '--device', 'cpu').status, 0);
});

test('morph --se rect:100000x100000 --device gpu runs (it failed to compile: exit 70) and equals the CPU', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const img = fixture('images', 'cat_29x45.png');
  for (const device of ['gpu', 'cpu']) {
    const r = cli('morph', 'erode', img, join(tmp, `huge-se-${device}.png`), '--se', 'rect:100000x100000', '--device', device);
    assert.equal(r.status, 0, r.stderr);
  }
  const [g, c] = await Promise.all(['gpu', 'cpu'].map((d) => readImage(join(tmp, `huge-se-${d}.png`))));
  assert.ok(compareImages(g, c).identical);
  assert.ok(g.data.every((v) => v === Math.min(...(c.data as Uint8Array))), 'every pixel is the image minimum');
});

test('clahe: more tiles than pixels (exit 2 before) and 16-bit 32×32 tiles on the GPU (exit 5 before) equal cv2', async (t) => {
  const device = (await gpuOrSkip(t)) ? 'gpu' : 'cpu';
  const cases = [
    [fixture('clahe', 'tiny-4x4.png'), '2x10', fixture('clahe', 'tiny-4x4-2x10-2.png')],
    [fixture('images', 'moon16.png'), '32x32', fixture('clahe', 'moon16-32x32-2.png')],
  ];
  for (const [input, tiles, ref] of cases) {
    const out = join(tmp, `clahe-${tiles}.png`);
    const r = cli('clahe', input, out, '--tiles', tiles, '--device', device);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(compareImages(await readImage(out), await readImage(ref)).identical, `${tiles} equals cv2`);
  }
  assertOneLineError(cli('clahe', fixture('images', 'moon16.png'), join(tmp, 'x.png'), '--tiles', '40x40', '--device', 'cpu'), 2, /at most 1024 tiles/);
});

test('work the GPU cannot split: --device gpu is a one-line error (exit 5) before any work, --device auto runs it on the CPU saying so', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // 140 MB (beyond lavapipe's 128 MiB binding) whose vertical element reaches every row: no slab of rows fits.
  const [h, w] = [200000, 700];
  const data = new Uint8Array(h * w);
  for (let y = 0; y < h; y++) data.fill((y * 7) % 251 + 3, y * w, (y + 1) * w);
  const input = join(tmp, 'tall.npy'), out = join(tmp, 'tall-out.npy');
  writeFileSync(input, encodeNpy({ data, shape: [h, w], channels: 1, dtype: 'uint8' }));
  const args = ['morph', 'erode', input, out, '--se', 'rect:1x400001'];
  assertOneLineError(cli(...args, '--device', 'gpu'), 5, /morph: a slab of this 200000×700 image needs .* more than this adapter binds/);
  // The adapter named, so that --device auto takes it although it is a software one (otherwise auto runs on the CPU).
  const auto = ['--device', 'auto', '--adapter', /^[\w-]+/.exec(gpu.adapter.description)![0]];
  const r = cli(...args, ...auto);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^warning: morph: a slab of this 200000×700 image .*; running on the CPU$/m);
  assert.match(r.stdout, /cpu +total/);
  const res = await readImage(out);
  assert.ok(res.data.every((v) => v === 3), 'every pixel is the minimum of its column');
  // Batch mode too (it failed the image, exit 9): the same fallback, said once.
  const outDir = join(tmp, 'tall-batch');
  const b = cli('morph', 'erode', input, outDir + '/', '--se', 'rect:1x400001', ...auto);
  assert.equal(b.status, 0, b.stderr);
  assert.equal(b.stderr.match(/running on the CPU/g)?.length, 1, b.stderr);
  assert.ok(compareImages(await readImage(join(outDir, 'tall.npy')), res).identical, 'batch output = single-image output');
});

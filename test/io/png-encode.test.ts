// PNG written as cv2.imwrite writes it (issue 40): imgpu's libpng encoder (native/png.c) gives cv2.imwrite's bytes —
// its Sub filter, zlib level 1 and Z_RLE by default — for 8/16-bit gray, RGB and RGBA of odd sizes, one pixel and one
// column, files spanning several deflate blocks and IDAT chunks; through writeImage, a batch's codec workers and the
// CLI. Each fixture (scripts/make_png_encode_fixtures.py) is cv2.imwrite's file: its pixels, read back (cv2.imread's:
// test/io/png-libpng.test.ts), written again must give the same bytes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import { nativePng } from '../../src/io/formats/png-native.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { CodecPool } from '../../src/node/codec-pool.js';
import { cli, cliWith } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const skip = nativePng() || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native PNG codec not built (scripts/build-native.mjs)';
const file = (name: string) => fixture('png-encode', `${name}.png`);
/** cv2.imwrite's files with its default settings (no IMWRITE_PNG_COMPRESSION). */
const DEFAULT_WRITES = ['rgb8', 'rgb16', 'gray8', 'gray16', 'rgba8', 'rgba16', 'gray8_1x1', 'rgb8_column'];

const scratch = () => mkdtempSync(join(tmpdir(), 'imgpu-png-encode-'));

/** The bytes `name` is written as after reading it, with `compression` as writeImage takes it. */
async function rewrite(dir: string, name: string, compression?: number): Promise<Buffer> {
  const out = join(dir, `${name}.png`);
  await writeImage(out, await readImage(file(name)), { compression });
  return readFileSync(out);
}

/** The zlib stream of a PNG's IDAT chunks, inflated: the filtered rows (each row's filter type, then its bytes). */
function filteredRows(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const n = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') parts.push(png.subarray(at + 8, at + 8 + n));
    at += 12 + n;
  }
  return inflateSync(Buffer.concat(parts));
}

test("every kind cv2.imwrite writes (8/16-bit gray, RGB, RGBA; odd sizes, 1×1, one column) is written with cv2's bytes", { skip }, async () => {
  const dir = scratch();
  try {
    for (const name of DEFAULT_WRITES) assert.ok((await rewrite(dir, name)).equals(readFileSync(file(name))), `${name}: cv2.imwrite's bytes`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a given compression is IMWRITE_PNG_COMPRESSION's: libpng's adaptive filters at that level (0: cv2's bytes; 1, 6: cv2's filtered rows)", { skip }, async () => {
  const dir = scratch();
  try {
    assert.ok((await rewrite(dir, 'rgb8_level0', 0)).equals(readFileSync(file('rgb8_level0'))), 'level 0 (stored): cv2.imwrite\'s bytes');
    const filters = (rows: Buffer) => Array.from({ length: 67 }, (_, y) => rows[y * (71 * 3 + 1)]);
    for (const level of [1, 6]) {
      const ours = filteredRows(await rewrite(dir, `rgb8_level${level}`, level));
      // The same filter on each row and the same rows; the deflate stream is Node's zlib's (docs/formats.md).
      assert.ok(ours.equals(filteredRows(readFileSync(file(`rgb8_level${level}`)))), `level ${level}: cv2's filtered rows`);
      assert.ok(new Set(filters(ours)).size > 1, `level ${level}: a filter chosen per row`);
    }
    // Without a level the same image is written with cv2's default, not as level 1 is: Sub on every row.
    assert.deepEqual(new Set(filters(filteredRows(await rewrite(dir, 'rgb8_level1')))), new Set([1]), 'by default: Sub on every row');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a row wider than libpng writes (1,000,000 pixels, as for cv2.imwrite) is an UnsupportedFormatError, and no file is left', { skip }, async () => {
  const dir = scratch();
  try {
    const wide = { data: new Uint8Array(1_000_001), shape: [1, 1_000_001] as [number, number], channels: 1 as const, dtype: 'uint8' as const };
    await assert.rejects(writeImage(join(dir, 'wide.png'), wide), (e: Error) => e instanceof UnsupportedFormatError && /libpng: Invalid IHDR/.test(e.message));
    assert.deepEqual(readdirSync(dir), [], 'nothing written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a batch's codec workers write PNG with cv2's bytes, several at once, each file atomically", { skip }, async () => {
  const dir = scratch(), pool = new CodecPool(2);
  try {
    const images = await Promise.all(DEFAULT_WRITES.map((n) => readImage(file(n))));
    await Promise.all(DEFAULT_WRITES.map((n, i) => pool.write(join(dir, `${n}.png`), images[i])));
    for (const n of DEFAULT_WRITES) assert.ok(readFileSync(join(dir, `${n}.png`)).equals(readFileSync(file(n))), `${n}: cv2.imwrite's bytes`);
    assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('.')), [], 'no temporary file left');
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the CLI writes cv2.imwrite(cv2.equalizeHist(...))\'s bytes, one image and a batch (erode 1×1 rewrites every kind unchanged)', { skip }, async () => {
  const dir = scratch();
  try {
    const one = cli('equalize', file('gray8'), join(dir, 'eq.png'), '--device', 'cpu', '--quiet');
    assert.equal(one.status, 0, one.stderr);
    assert.ok(readFileSync(join(dir, 'eq.png')).equals(readFileSync(file('gray8_equalized'))), 'equalize: cv2\'s file');
    const inputs = join(dir, 'in');
    mkdirSync(inputs);
    for (const n of DEFAULT_WRITES) writeFileSync(join(inputs, `${n}.png`), readFileSync(file(n)));
    // --keep-gray: every gray input stays one channel whatever its format (a gray JPEG would be read as cv2.imread reads it).
    const batch = cli('morph', 'erode', inputs, join(dir, 'out'), '--se', 'rect:1x1', '--keep-gray', '--device', 'cpu', '--quiet');
    assert.equal(batch.status, 0, batch.stderr);
    for (const n of DEFAULT_WRITES) assert.ok(readFileSync(join(dir, 'out', `${n}.png`)).equals(readFileSync(file(n))), `batch ${n}: cv2's bytes`);
    // Through sharp (the fallback where libpng is not built, here turned off): the same pixels in other bytes.
    const viaSharp = cliWith({ IMGPU_NO_NATIVE_PNG: '1' }, 'equalize', file('gray8'), join(dir, 'eq-sharp.png'), '--device', 'cpu', '--quiet');
    assert.equal(viaSharp.status, 0, viaSharp.stderr);
    assert.ok(!readFileSync(join(dir, 'eq-sharp.png')).equals(readFileSync(file('gray8_equalized'))), 'sharp: other bytes');
    const [a, b] = await Promise.all([readImage(join(dir, 'eq-sharp.png')), readImage(file('gray8_equalized'))]);
    assert.deepEqual(a.data, b.data, 'sharp: the same pixels');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

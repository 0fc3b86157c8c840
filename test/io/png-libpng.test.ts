// PNG read as cv2.imread reads it (issue 40): imgpu's libpng decoder (native/png.c) gives cv2's pixels for every PNG
// kind — 8/16-bit gray, gray+alpha, RGB, RGBA, palette with tRNS, 1/2/4-bit gray, tRNS colours, gAMA/sRGB, Adam7,
// eXIf orientation —
// for colour reads and gray reads: a colour PNG read gray is libpng's png_set_rgb_to_gray, as IMREAD_GRAYSCALE, not
// cvtColor's weights (they differed by one level on 44 % of a photo's pixels). In a batch's codec workers too.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { ImageTooLargeError, UnsupportedFormatError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { nodeCodec } from '../../src/io/formats/node.js';
import { libpngGray, png as pngFormat } from '../../src/io/formats/png.js';
import { nativePng } from '../../src/io/formats/png-native.js';
import { decodeImageFile, readImage } from '../../src/io/index.js';
import { bufferClass, CodecPool } from '../../src/node/codec-pool.js';
import { fixture } from '../helpers/fixtures.js';

// scripts/make_png_fixtures.py: the PNGs, and per file the layout and SHA-256 of cv2.imread's pixels, colour
// (IMREAD_UNCHANGED in RGB(A) order, EXIF-oriented; gray+alpha as gray) and gray (IMREAD_GRAYSCALE | IMREAD_ANYDEPTH).
interface Ref { shape: [number, number]; channels: number; depth: number; sha256: string }
const file = (name: string) => fixture('png', `${name}.png`);
const REFS = JSON.parse(readFileSync(fixture('png', 'references.json'), 'utf8')) as Record<string, { colour: Ref; gray: Ref }>;
const skip = nativePng() || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native PNG decoder not built (scripts/build-native.mjs)';

const sha256 = (img: Image) => createHash('sha256').update(new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength)).digest('hex');

/** The image is cv2.imread's: the same layout, depth and pixels (by hash). */
function assertCv2(img: Image, ref: Ref, what: string) {
  assert.deepEqual([...img.shape, img.channels, img.dtype], [...ref.shape, ref.channels, ref.depth === 16 ? 'uint16' : 'uint8'], `${what}: layout`);
  assert.equal(sha256(img), ref.sha256, `${what}: cv2.imread's pixels`);
}

test('every PNG kind reads as cv2.imread reads it, colour (IMREAD_UNCHANGED, EXIF-oriented) and gray (IMREAD_GRAYSCALE)', { skip }, async () => {
  for (const [name, ref] of Object.entries(REFS)) {
    assertCv2(await readImage(file(name)), ref.colour, `${name} colour`);
    assertCv2(await readImage(file(name), { gray: true }), ref.gray, `${name} gray`);
  }
});

test("a colour PNG read gray is libpng's rgb_to_gray (gAMA/sRGB files through its gamma tables), not cvtColor's weights", { skip }, async () => {
  for (const name of ['rgb8', 'rgb8_gama', 'rgb16', 'rgb16_srgb', 'palette_trns', 'rgba8_adam7']) {
    const img = await decodeImageFile(readFileSync(file(name)), `${name}.png`, { gray: true });
    assertCv2(img, REFS[name].gray, `${name} gray`);
  }
});

test("the sharp fallback's gray conversion is libpng's for colour PNGs without gamma chunks (not with gAMA/sRGB)", { skip }, async () => {
  for (const [name, ref] of Object.entries(REFS)) {
    if (ref.colour.channels < 3) continue;
    const gray = libpngGray(await readImage(file(name)));
    const gamma = /gama|srgb/.test(name);
    assert.equal(sha256(gray) === ref.gray.sha256, !gamma, `${name}: ${gamma ? 'differs from' : 'equals'} cv2's IMREAD_GRAYSCALE`);
  }
});

test("a batch's codec workers decode PNG with libpng, several at once, into recycled shared memory", { skip }, async () => {
  const pool = new CodecPool(2);
  try {
    const names = Object.keys(REFS);
    const reads = await Promise.all(names.flatMap((n) => [pool.read(file(n), {}), pool.read(file(n), { gray: true })]));
    names.forEach((n, i) => {
      assertCv2(reads[2 * i], REFS[n].colour, `${n} colour, in a worker`);
      assertCv2(reads[2 * i + 1], REFS[n].gray, `${n} gray, in a worker`);
    });
    // The workers' RecycledBuffers hand out shared buffers of a size class, not of the image's exact size (an
    // EXIF-oriented image is a new one, as JPEG's).
    const upright = reads.filter((_, i) => !names[i >> 1].includes('exif'));
    assert.ok(upright.every((r) => r.data.buffer instanceof SharedArrayBuffer && r.data.buffer.byteLength === bufferClass(r.data.byteLength)), 'pixels in the workers\' recycled buffers');
  } finally {
    await pool.close();
  }
});

test("a damaged PNG is refused by libpng as by cv2.imread: a critical chunk's CRC, damaged or cut image data, no IEND", { skip }, async () => {
  const good = readFileSync(file('rgb8'));
  const idat = good.indexOf('IDAT');
  const badCrc = Uint8Array.from(good), badData = Uint8Array.from(good);
  badCrc[good.indexOf('IEND') + 4] ^= 0x01; // the first byte of IEND's CRC (IEND has no data)
  badData[idat + 10] ^= 0x40;
  const cases: Record<string, Uint8Array> = {
    'IEND CRC': badCrc,
    'damaged IDAT': badData,
    'cut in IDAT': good.subarray(0, idat + 200),
    'no IEND': good.subarray(0, good.length - 12),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    for (const gray of [false, true]) {
      await assert.rejects(async () => nodeCodec(pngFormat).decode!(bytes, `${what}.png`, { gray }), (e: Error) => e instanceof UnsupportedFormatError && /libpng/.test(e.message), what);
    }
  }
});

test('a PNG whose header declares more than maxPixels is refused from its header, before libpng inflates it', { skip }, async () => {
  // rgb8's IDAT under a header of 60000×60000 pixels: decoded first, it would be a damaged file (too little data).
  const big = Uint8Array.from(readFileSync(file('rgb8')));
  const v = new DataView(big.buffer);
  v.setUint32(16, 60000);
  v.setUint32(20, 60000);
  v.setUint32(29, crc32(big.subarray(12, 29))); // IHDR's CRC
  await assert.rejects(async () => decodeImageFile(big, 'big.png', { maxPixels: 1e8 }), (e: Error) => e instanceof ImageTooLargeError);
});

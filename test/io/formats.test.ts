// The format registry (src/io/formats): every registered format reads back what imgpu writes, is found by its
// extension and by its content, and the portable codecs (the browser's) give Node's pixels.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { crc32, deflateSync, gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { compareImages } from '../../src/core/compare.js';
import { InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { extensionsOf, FORMATS, formatByExtension, formatNamed, isVolumeFile, sniffFormat, writableExtensions } from '../../src/io/formats/index.js';
import { decodeImage, encodeImage, readImage, READERS, writeImage, WRITERS } from '../../src/io/index.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'imgpu-formats-'));

function assertSame(got: Image, want: Image, what: string): void {
  assert.deepEqual([got.shape, got.channels, got.dtype], [want.shape, want.channels, want.dtype], `${what}: shape, channels, dtype`);
  const cmp = compareImages(got, want);
  assert.ok(cmp.identical, `${what}: ${cmp.mismatches} pixels differ (max ${cmp.maxAbsDiff})`);
}

const gray8 = imageFrom(randomBytes(37 * 23, 3), [23, 37]);
const rgb16 = imageFrom(randomU16(19 * 29 * 3, 4), [19, 29], 3);
const rgba8 = imageFrom(randomBytes(13 * 11 * 4, 5), [13, 11], 4);
const volume = imageFrom(Float32Array.from(randomBytes(4 * 9 * 7, 6), (v) => v / 7 - 3), [4, 9, 7]);

/** What each writable format is round-tripped with (lossless formats exactly; JPEG, lossy, by what libjpeg reads back). */
const SAMPLES: Record<string, Image[]> = {
  png: [gray8, rgb16, rgba8],
  tiff: [gray8, rgb16, rgba8],
  jpeg: [gray8],
  npy: [gray8, imageFrom(randomU16(19 * 29, 4), [19, 29]), volume],
  nifti: [gray8, volume],
  zarr: [imageFrom(randomU16(3 * 5 * 6, 7), [3, 5, 6])],
};

test('the registry: every format has a name, extensions, a volume rule and platforms; every extension finds it', () => {
  assert.ok(FORMATS.length >= 8);
  assert.deepEqual(new Set(FORMATS.map((f) => f.name)).size, FORMATS.length, 'names are unique');
  for (const f of FORMATS) {
    assert.ok(f.extensions.length > 0 && f.platforms.length > 0, f.name);
    for (const ext of extensionsOf(f)) {
      assert.equal(formatByExtension(`some/Dir/file${ext.toUpperCase()}`), f, `${ext} → ${f.name}`);
      assert.equal(formatNamed(ext.slice(1)), f);
    }
    assert.equal(formatNamed(f.name), f);
    if (f.writes) assert.ok(f.name === 'zarr' || WRITERS.includes(f.extensions[0]), `${f.name} written by writeImage`);
  }
  // The CLI's --format list and batch mode's readers, as they were before the registry.
  assert.deepEqual(WRITERS, ['.png', '.jpg', '.jpeg', '.tif', '.tiff', '.npy', '.nii', '.nii.gz']);
  assert.deepEqual(writableExtensions('node', true), ['.png', '.jpg', '.tif', '.npy', '.nii', '.nii.gz']);
  assert.deepEqual([...READERS].sort(), ['.avif', '.dcm', '.gif', '.jpeg', '.jpg', '.nii', '.nii.gz', '.npy', '.png', '.tif', '.tiff', '.webp']);
});

for (const f of FORMATS.filter((x) => x.writes)) {
  test(`${f.name}: every registered extension round-trips through writeImage and readImage, and its content sniffs`, async () => {
    for (const [i, img] of SAMPLES[f.name].entries()) {
      for (const ext of extensionsOf(f)) {
        const path = join(tmp, `rt-${f.name}-${i}${ext}`);
        await writeImage(path, img);
        const back = await readImage(path);
        if (f.name === 'jpeg') {
          assert.deepEqual([back.shape, back.channels, back.dtype], [img.shape, img.channels, img.dtype]);
          assert.ok(compareImages(back, await readImage(path)).identical);
        } else {
          assertSame({ ...back, geometry: undefined }, img, path);
        }
        if (f.sniff && !ext.endsWith('.gz')) assert.equal(sniffFormat(readFileSync(path)), f, `${path} sniffs as ${f.name}`);
      }
    }
  });
}

test('read-only formats: a DICOM slice sniffs and reads; .raw reads with its layout and not without', async () => {
  const dcm = fixture('volumes', 'ct-series', 'slice0.dcm');
  assert.equal(sniffFormat(readFileSync(dcm)), formatNamed('dicom'));
  const slice = await readImage(dcm);
  assert.equal(slice.shape.length, 2);
  // The same bytes without the extension: found by their content.
  const renamed = join(tmp, 'slice-without-extension');
  writeFileSync(renamed, readFileSync(dcm));
  assertSame(await readImage(renamed), slice, 'DICOM by content');
  const raw = join(tmp, 'v.raw');
  writeFileSync(raw, Buffer.from(volume.data.buffer));
  assertSame(await readImage(raw, { raw: { shape: [4, 9, 7], dtype: 'float32' } }), volume, '.raw');
  await assert.rejects(readImage(raw), InvalidArgumentError);
});

test('a file is found by its content whatever its name; an unknown extension with unknown content is a typed error', async () => {
  for (const [ext, img] of [['.png', rgb16], ['.tif', gray8], ['.npy', volume], ['.jpg', gray8]] as const) {
    const right = join(tmp, `content${ext}`);
    await writeImage(right, img);
    const wrong = join(tmp, `content-${ext.slice(1)}.bin`);
    writeFileSync(wrong, readFileSync(right));
    assertSame(await readImage(wrong), await readImage(right), `${ext} named .bin`);
  }
  const junk = join(tmp, 'junk.xyz');
  writeFileSync(junk, 'neither an extension nor a magic number imgpu knows');
  await assert.rejects(readImage(junk), (e) => e instanceof UnsupportedFormatError && /junk\.xyz is not a readable image: .*\.png .*\.nii/.test(e.message));
  await assert.rejects(writeImage(join(tmp, 'out.xyz'), gray8), (e) => e instanceof UnsupportedFormatError && /cannot write '\.xyz': use one of \.png/.test(e.message));
  await assert.rejects(decodeImage(new TextEncoder().encode('nothing'), { name: 'x.bmp' }), UnsupportedFormatError);
  assert.throws(() => formatNamed('bmp'), InvalidArgumentError);
  // What a format cannot hold, before any work.
  await assert.rejects(writeImage(join(tmp, 'v.png'), volume), InvalidArgumentError);
  await assert.rejects(writeImage(join(tmp, 'f.tif'), { ...gray8, dtype: 'float32', data: Float32Array.from(gray8.data) }), UnsupportedFormatError);
  await assert.rejects(writeImage(join(tmp, 'w.jpg'), rgb16), /JPEG holds 8-bit samples only/);
  await assert.rejects(writeImage(join(tmp, 'slice.dcm'), gray8), UnsupportedFormatError);
});

test("scale-out's volume rule: NIfTI, DICOM and OME-Zarr are volumes, .npy by shape, rasters never", () => {
  for (const p of ['a.nii', 'B.NII.GZ', 'c.dcm', 'd.zarr', 'd.zarr/']) assert.equal(isVolumeFile(p), true, p);
  for (const p of ['a.png', 'b.jpg', 'c.tiff', 'd.npy', 'e.raw', 'f.xyz']) assert.equal(isVolumeFile(p), false, p);
});

/** A PNG of 1-bit gray samples, written chunk by chunk (neither sharp nor fast-png writes below 8 bits unpaletted). */
function onebitPng(w: number, h: number, bit: (x: number, y: number) => number): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 1; // bit depth; colour type 0 (gray), no interlace
  const stride = Math.ceil(w / 8) + 1, rows = Buffer.alloc(stride * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (bit(x, y)) rows[y * stride + 1 + (x >> 3)] |= 0x80 >> (x & 7);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

test("decodeImage (the portable codecs, the browser's) gives readImage's (sharp's) pixels: PNG of every kind, TIFF, .npy, NIfTI", async () => {
  const cases: [string, Uint8Array][] = [
    ['moon16.png', readFileSync(fixture('images', 'moon16.png'))],
    ['chelsea16.png', readFileSync(fixture('images', 'chelsea16.png'))],
    ['camera.png', readFileSync(fixture('images', 'camera.png'))],
    ['palette.png', await sharp(readFileSync(fixture('images', 'chelsea.png'))).png({ palette: true, colours: 16 }).toBuffer()],
    ['palette2bit.png', await sharp(readFileSync(fixture('images', 'coins.png'))).png({ palette: true, colours: 4 }).toBuffer()],
    ['gray-alpha.png', await sharp(Buffer.from(randomBytes(21 * 17 * 2, 8)), { raw: { width: 21, height: 17, channels: 2 } }).png().toBuffer()],
    ['rgba.png', await sharp(Buffer.from(rgba8.data), { raw: { width: 11, height: 13, channels: 4 } }).png().toBuffer()],
    ['onebit.png', onebitPng(19, 7, (x, y) => (x * 3 + y) % 5 & 1)],
    ['rgb16.tif', await sharp(new Uint16Array(rgb16.data), { raw: { width: 29, height: 19, channels: 3 } }).toColourspace('rgb16').tiff({ compression: 'lzw' }).toBuffer()],
    ['gray8.tif', await sharp(Buffer.from(gray8.data), { raw: { width: 37, height: 23, channels: 1 } }).toColourspace('b-w').tiff({ compression: 'deflate' }).toBuffer()],
    ['volume.npy', readFileSync(fixture('images', 'volume_u8.npy'))],
    ['anatomical.nii.gz', gzipSync(readFileSync(fixture('volumes', 'anatomical.nii')))],
    ['anatomical.nii', readFileSync(fixture('volumes', 'anatomical.nii'))],
  ];
  for (const [name, bytes] of cases) {
    const path = join(tmp, name);
    writeFileSync(path, bytes);
    const node = await readImage(path);
    const portable = await decodeImage(bytes, { name });
    assertSame({ ...portable, geometry: undefined }, { ...node, geometry: undefined }, name);
    assertSame(await decodeImage(bytes, { name, gray: true }), await readImage(path, { gray: true }), `${name}, gray`);
  }
});

test('encodeImage (portable) writes files Node reads back exactly: PNG 8/16-bit, .npy, NIfTI (gzipped for nii.gz)', async () => {
  for (const [format, img] of [['png', gray8], ['.png', rgb16], ['png', rgba8], ['npy', volume], ['nii.gz', volume], ['nifti', gray8]] as const) {
    const bytes = await encodeImage(img, format);
    const ext = format === 'nifti' ? '.nii' : format.startsWith('.') ? format : `.${format}`;
    const path = join(tmp, `portable-${format}-${img.channels}${ext}`);
    writeFileSync(path, bytes);
    assertSame({ ...(await readImage(path)), geometry: undefined }, img, `${format} via encodeImage`);
    if (format === 'nii.gz') assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b], 'gzip');
  }
  await assert.rejects(encodeImage(rgb16, 'jpeg'), /JPEG holds 8-bit samples only/);
  await assert.rejects(encodeImage(gray8, 'tiff'), /written by Node's writeImage only/);
});

test("docs/formats.md's table has a row for every registered format, with its extensions", () => {
  const doc = readFileSync(fixture('..', '..', 'docs', 'formats.md'), 'utf8');
  for (const f of FORMATS) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${f.name}\` |`));
    assert.ok(row, `docs/formats.md has no row for ${f.name}`);
    for (const ext of extensionsOf(f)) assert.ok(row.includes(ext), `${f.name}'s row names ${ext}`);
  }
});

test('WebP, GIF and AVIF photos read in Node through libvips, as before the registry (sharp decoded what imgpu did not know); never written', async () => {
  const rgb = imageFrom(randomBytes(21 * 17 * 3, 9), [17, 21], 3);
  const raw = { raw: { width: 21, height: 17, channels: 3 as const } };
  const files: [string, Buffer][] = [
    ['photo.webp', await sharp(Buffer.from(rgb.data), raw).webp({ lossless: true }).toBuffer()],
    ['photo.gif', await sharp(Buffer.from(rgb.data), raw).gif().toBuffer()],
    ['photo.avif', await sharp(Buffer.from(rgb.data), raw).avif({ quality: 60 }).toBuffer()],
  ];
  for (const [name, bytes] of files) {
    const path = join(tmp, name);
    writeFileSync(path, bytes);
    const expected = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
    const img = await readImage(path);
    assert.deepEqual([...img.shape, img.channels], [expected.info.height, expected.info.width, expected.info.channels], name);
    assert.ok(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength).equals(expected.data), `${name}: sharp's pixels`);
    assert.equal(sniffFormat(bytes)?.name, name.split('.')[1], `${name} sniffs`);
    const misnamed = join(tmp, `${name}.bin`);
    writeFileSync(misnamed, bytes);
    assert.equal((await readImage(misnamed)).shape[1], 21, `${name} named .bin reads by its content`);
    await assert.rejects(writeImage(join(tmp, `out-${name}`), rgb), UnsupportedFormatError);
  }
  assert.deepEqual(rgb.shape, [17, 21]);
});

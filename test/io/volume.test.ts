import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as nifti from 'nifti-reader-js';
import { gunzipSync } from 'node:zlib';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import { InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import { affineOf, decodeRaw, readImage, writeImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

const EXPECTED = JSON.parse(readFileSync(fixture('volumes', 'expected.json'), 'utf8')) as Record<string, { shape: number[]; affine: number[][] }>;
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-vol-'));
const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));

function assertAffine(got: number[][], want: number[][], what: string): void {
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) assert.ok(Math.abs(got[r][c] - want[r][c]) < 1e-4, `${what}: affine[${r}][${c}] ${got[r][c]} vs ${want[r][c]}`);
}

// Sources and what pydicom / nibabel read from them: scripts/make_volume_fixtures.py.
for (const [name, src] of [['ct-series', 'ct-series'], ['mr-series', 'mr-series'], ['anatomical', 'anatomical.nii'], ['reoriented_anat_moved', 'reoriented_anat_moved.nii'], ['standard', 'standard.nii.gz']]) {
  test(`${src} loads with the voxels, orientation and spacing pydicom/nibabel give`, async () => {
    const img = await readImage(fixture('volumes', src));
    const ref = await readImage(fixture('volumes', `${name}.npy`));
    assert.deepEqual(img.shape, EXPECTED[name].shape);
    assert.ok(compareImages({ ...img, dtype: 'float32', data: Float32Array.from(img.data) }, ref).identical, 'voxel values (HU for CT)');
    assertAffine(affineOf(img.geometry!), EXPECTED[name].affine, name);
  });
}

test('a filtered NIfTI reloads with the same affine and voxels (independent reader: nifti-reader-js header, raw bytes)', async () => {
  const ct = await readImage(fixture('volumes', 'ct-series'));
  for (const ext of ['.nii', '.nii.gz']) {
    const path = join(tmp, `ct${ext}`);
    await writeImage(path, ct);
    let bytes = readFileSync(path);
    if (ext === '.nii.gz') bytes = gunzipSync(bytes);
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const h = nifti.readHeader(buf);
    assert.deepEqual(h.dims.slice(0, 4), [3, 128, 128, 6]);
    assert.equal(h.sform_code, 1);
    assertAffine(h.affine, EXPECTED['ct-series'].affine, ext);
    const back = await readImage(path);
    assert.ok(compareImages(back, ct).identical);
    assert.deepEqual(back.geometry!.spacing.map((s) => +s.toFixed(5)), ct.geometry!.spacing.map((s) => +s.toFixed(5)));
  }
});

test('bad volumes are typed errors: 4D NIfTI, truncated NIfTI, missing slice, mixed sizes, two series, wrong raw size', async () => {
  await assert.rejects(readImage(fixture('volumes', 'example_nifti2.nii.gz')), (e) => e instanceof UnsupportedFormatError && /series of volumes/.test(e.message));
  const nii = readFileSync(fixture('volumes', 'anatomical.nii'));
  writeFileSync(join(tmp, 'cut.nii'), nii.subarray(0, nii.length - 1000));
  await assert.rejects(readImage(join(tmp, 'cut.nii')), /truncated/);
  writeFileSync(join(tmp, 'junk.nii.gz'), Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]));
  await assert.rejects(readImage(join(tmp, 'junk.nii.gz')), UnsupportedFormatError);
  const series = fixture('volumes', 'ct-series');
  const files = readdirSync(series).sort();
  const missing = join(tmp, 'missing');
  mkdirSync(missing);
  // Keep the slices at positions 0, 1, 3, 4, 5 (file slice{order[2]}: slice5 holds position 2).
  for (const f of files) if (f !== 'slice5.dcm') copyFileSync(join(series, f), join(missing, f));
  await assert.rejects(readImage(missing), (e) => e instanceof InvalidArgumentError && /a slice is missing/.test(e.message));
  const mixed = join(tmp, 'mixed');
  mkdirSync(mixed);
  for (const f of files) copyFileSync(join(series, f), join(mixed, f));
  copyFileSync(fixture('volumes', 'mr-series', '0.dcm'), join(mixed, 'mr.dcm'));
  await assert.rejects(readImage(mixed), /2 DICOM series/);
  const dup = join(tmp, 'dup');
  mkdirSync(dup);
  for (const f of files) copyFileSync(join(series, f), join(dup, f));
  copyFileSync(join(series, files[0]), join(dup, 'again.dcm'));
  await assert.rejects(readImage(dup), /same position/);
  assert.throws(() => decodeRaw(new Uint8Array(100), { shape: [5, 5, 5], dtype: 'uint8' }, 'x.raw'), /holds 100 bytes; shape 5x5x5 of uint8 needs 125/);
  writeFileSync(join(tmp, 'bad.dcm'), Buffer.alloc(300));
  await assert.rejects(readImage(join(tmp, 'bad.dcm')), UnsupportedFormatError);
});

test('imgpu filter: DICOM series in, NIfTI out, CPU and GPU agree; raw input with --shape/--dtype; bad kernel file exit 2', async (t) => {
  const gpu = await gpuOrSkip(t);
  const out = join(tmp, 'sobel.nii.gz');
  const r = spawnSync(process.execPath, [BIN, 'filter', fixture('volumes', 'ct-series'), out, '--filter', 'sobel', '--device', gpu ? 'both' : 'cpu', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  if (gpu) assert.equal(j.identical, true);
  const back = await readImage(out);
  assertAffine(affineOf(back.geometry!), EXPECTED['ct-series'].affine, 'written NIfTI');
  const ct = await readImage(fixture('volumes', 'ct-series'));
  const raw = join(tmp, 'ct.raw');
  writeFileSync(raw, new Uint8Array(ct.data.buffer, ct.data.byteOffset, ct.data.byteLength));
  const out2 = join(tmp, 'sobel.npy');
  const r2 = spawnSync(process.execPath, [BIN, 'filter', raw, out2, '--filter', 'sobel', '--shape', '128x128x6', '--dtype', 'float32', '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(r2.status, 0, r2.stderr);
  assert.ok(compareWithin(await readImage(out2), { ...back, geometry: undefined }, 1e-6).identical);
  const k = join(tmp, 'k.json');
  writeFileSync(k, JSON.stringify([[1, 2], [3, 4]]));
  const r3 = spawnSync(process.execPath, [BIN, 'filter', fixture('images', 'camera.png'), out2, '--filter', `kernel:${k}`, '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(r3.status, 2);
  assert.match(r3.stderr, /^imgpu: error: .*even kernel size/m);
  writeFileSync(k, JSON.stringify({ weights: [[1, 2], [3, 4]], anchor: [0, 0] }));
  const r4 = spawnSync(process.execPath, [BIN, 'filter', fixture('images', 'camera.png'), out2, '--filter', `kernel:${k}`, '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(r4.status, 0, r4.stderr);
  const r5 = spawnSync(process.execPath, [BIN, 'filter', raw, out2, '--shape', '128x128x5', '--dtype', 'float32', '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(r5.status, 3);
  assert.match(r5.stderr, /needs 327680/);
});

// The geometry of a series does not depend on which file is read first: the z axis runs from the lowest slice to
// the highest (a folder whose first file was the top slice gave a NaN direction: the first file read, not the lowest
// slice, was taken as the start; found by the playground's folder picker, which lists files in any order).
test('a DICOM series has the same geometry whichever of its files is read first', async () => {
  const series = fixture('volumes', 'ct-series');
  for (const first of readdirSync(series)) {
    const dir = join(tmp, `first-${first}`);
    mkdirSync(dir);
    for (const f of readdirSync(series)) copyFileSync(join(series, f), join(dir, f === first ? '0-first.dcm' : f));
    const img = await readImage(dir);
    assertAffine(affineOf(img.geometry!), EXPECTED['ct-series'].affine, `${first} read first`);
  }
});

// An operation that keeps the shape keeps the volume's geometry: `imgpu morph` (and gamma, equalize, threshold) on a
// NIfTI wrote an identity affine with 1 mm voxels (only the filters set their output's geometry themselves).
test('imgpu morph / equalize on a NIfTI volume write the input\'s affine', async () => {
  for (const [name, args] of [['anatomical.nii', ['morph', 'close', '@in', '@out', '--se', 'box:3x3x3']], ['standard.nii.gz', ['equalize', '@in', '@out']]] as const) {
    const src = fixture('volumes', name);
    const out = join(tmp, `${args[0]}-${name}`);
    const r = spawnSync(process.execPath, [BIN, ...args.map((a) => (a === '@in' ? src : a === '@out' ? out : a)), '--device', 'cpu'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assertAffine(affineOf((await readImage(out)).geometry!), affineOf((await readImage(src)).geometry!), `${args[0]} ${name}`);
  }
});

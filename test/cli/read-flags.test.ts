// Read options on the CLI (issue 39's leftovers): --max-volume-bytes (ReadOptions.maxVolumeBytes, the NIfTI
// decompression limit) and --fail-on honoured by the image a command's flag names (histogram's --mask), not only by <in>.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Image } from '../../src/core/image.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { encodeNiftiFile } from '../../src/io/nifti.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

test('--max-volume-bytes: a .nii.gz declaring more voxel data is refused from its header (exit 3), the default reads it, a value not a positive integer is exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-max-volume-'));
  try {
    // 8³ uint8 voxels after a 352-byte header: 864 bytes declared.
    const cube: Image = { data: new Uint8Array(512).fill(7), shape: [8, 8, 8], channels: 1, dtype: 'uint8' };
    const input = join(dir, 'cube.nii.gz');
    writeFileSync(input, gzipSync(encodeNiftiFile(cube)));
    const out = join(dir, 'out.nii.gz');
    assertOneLineError(cli('gamma', input, out, '--device', 'cpu', '--max-volume-bytes', '863'), 3, /declares 864 bytes of voxel data, more than the 863/);
    for (const limit of [[], ['--max-volume-bytes', '864']]) {
      const r = cli('gamma', input, out, '--device', 'cpu', ...limit);
      assert.equal(r.status, 0, r.stderr);
    }
    for (const bad of ['0', '-5', '1e9', 'lots']) assertOneLineError(cli('gamma', input, out, '--device', 'cpu', '--max-volume-bytes', bad), 2, /--max-volume-bytes must be a positive integer/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

test('--fail-on applies to a --mask image as to the input: a truncated JPEG mask is refused by default (exit 3) and read with --fail-on none', { skip }, () => {
  const input = fixture('jpeg-damaged', 'base.jpg'), mask = fixture('jpeg-damaged', 'truncated.jpg');
  assertOneLineError(cli('histogram', input, '--mask', mask, '--device', 'cpu'), 3, /truncated\.jpg is corrupt or truncated/);
  const r = cli('histogram', input, '--mask', mask, '--device', 'cpu', '--fail-on', 'none', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).op === 'histogram');
});

test('detect --fail-on: a truncated JPEG is refused by default (exit 3) and detected on with --fail-on none', { skip }, () => {
  const damaged = fixture('jpeg-damaged', 'truncated.jpg'), face = fixture('detect', 'lbpcascade_frontalface.xml');
  assertOneLineError(cli('detect', damaged, '--classifier', face, '--device', 'cpu'), 3, /truncated\.jpg is corrupt or truncated/);
  const r = cli('detect', damaged, '--classifier', face, '--device', 'cpu', '--fail-on', 'none', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Array.isArray(JSON.parse(r.stdout.split('\n')[0]).detections), r.stdout);
});

test('train --fail-on: a truncated JPEG positive is refused by default (exit 3) and read with --fail-on none', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-train-failon-'));
  try {
    const positives = join(dir, 'pos'), out = join(dir, 'out');
    mkdirSync(positives);
    copyFileSync(fixture('jpeg-damaged', 'truncated.jpg'), join(positives, 'a.jpg'));
    const args = ['train', '--positives', positives, '--negatives', positives, '--out', out, '--device', 'cpu'];
    assertOneLineError(cli(...args), 3, /a\.jpg is corrupt or truncated/);
    // Read through: the sample trains (the backgrounds are the same file) and the cascade is written.
    const r = cli(...args, '--fail-on', 'none', '--quiet');
    assert.equal(r.status, 0, r.stderr);
    assert.ok(existsSync(join(out, 'cascade.xml')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 39 item 5: a .nii.gz is inflated within the size its header declares — checked before inflating, stopped past it.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { constants as zlib, gunzipSync, gzipSync } from 'node:zlib';
import { ImageTooLargeError, UnsupportedFormatError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { decodeNifti, encodeNiftiFile, type Inflater } from '../../src/io/nifti.js';
import { decodeNifti as decodeNiftiZlib } from '../../src/io/volume.js';
import { assertOneLineError, cli } from '../helpers/cli.js';

const cube: Image = { data: new Uint8Array(8 * 8 * 8).fill(7), shape: [8, 8, 8], channels: 1, dtype: 'uint8' };

/** A NIfTI-1 file of `cube` whose header then declares `dims` (x, y, z) voxels of `datatype`, with `extra` zero bytes appended. */
function crafted(dims: [number, number, number], datatype: number, extra = 0): Uint8Array {
  const raw = encodeNiftiFile(cube);
  const v = new DataView(raw.buffer);
  dims.forEach((d, i) => v.setInt16(42 + 2 * i, d, true)); // dim[1..3]
  v.setInt16(70, datatype, true);
  v.setInt16(72, { 2: 8, 4: 16, 16: 32 }[datatype]!, true); // bitpix
  const out = new Uint8Array(raw.length + extra);
  out.set(raw);
  return gzipSync(out);
}

/** An inflater that inflates the head (zlib, flushed early) and counts it, and fails the test if asked for the whole stream. */
function counting(): { inflater: Inflater; allCalls: number; inflated: number } {
  const c = { inflater: undefined as unknown as Inflater, allCalls: 0, inflated: 0 };
  c.inflater = {
    head: (gz, n) => {
      let out = new Uint8Array(0);
      for (let p = 1024; out.length < n; p *= 4) {
        out = gunzipSync(gz.subarray(0, p), { finishFlush: zlib.Z_SYNC_FLUSH });
        if (p >= gz.length) break;
      }
      c.inflated += out.length;
      return out;
    },
    all: () => {
      c.allCalls++;
      throw new Error('inflated the whole stream');
    },
  };
  return c;
}

test('a .nii.gz whose header declares more voxel data than the limit is refused from its header, before the stream is inflated (typed error, CLI exit 3)', async () => {
  // 30000³ float32 voxels (1.08e14 bytes) declared by a file of a few hundred bytes.
  const gz = crafted([30000, 30000, 30000], 16);
  assert.ok(gz.length < 2000);
  const c = counting();
  assert.throws(() => decodeNifti(gz, 'bomb.nii.gz', c.inflater), (e: Error) => e instanceof ImageTooLargeError && /declares 108000000000352 bytes/.test(e.message));
  assert.equal(c.allCalls, 0, 'the whole stream was never inflated');
  assert.ok(c.inflated <= 4 << 20, `inflated ${c.inflated} bytes for the header`);
  // Both inflaters (zlib in Node, fflate elsewhere) refuse it; a lower limit refuses a modest volume too.
  assert.throws(() => decodeNiftiZlib(gz, 'bomb.nii.gz'), ImageTooLargeError);
  assert.throws(() => decodeNifti(gz, 'bomb.nii.gz'), ImageTooLargeError);
  assert.throws(() => decodeNiftiZlib(gzipSync(encodeNiftiFile(cube)), 'cube.nii.gz', 500), ImageTooLargeError);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-nii-'));
  writeFileSync(join(dir, 'bomb.nii.gz'), gz);
  await assert.rejects(readImage(join(dir, 'bomb.nii.gz')), ImageTooLargeError);
  assertOneLineError(cli('filter', join(dir, 'bomb.nii.gz'), join(dir, 'out.nii.gz'), '--device', 'cpu'), 3, /declares 108000000000352 bytes of voxel data/);
});

test('a .nii.gz that inflates far beyond what its header declares is refused, its inflation stopped (zlib and fflate); honest files still read', async () => {
  // 8³ uint8 voxels declared, 16 MiB of zeros behind them: ~16 KB of gzip.
  const gz = crafted([8, 8, 8], 2, 16 << 20);
  assert.ok(gz.length < 50_000);
  for (const [name, decode] of [['zlib', decodeNiftiZlib], ['fflate', decodeNifti]] as const) {
    assert.throws(() => decode(gz, 'bomb.nii.gz'), (e: Error) => e instanceof UnsupportedFormatError && /inflates to more than the 864 bytes its header declares/.test(e.message), name);
  }
  // A few padding bytes after the voxels are tolerated; the honest file reads as before.
  for (const decode of [decodeNiftiZlib, decodeNifti]) {
    assert.deepEqual(decode(crafted([8, 8, 8], 2, 100), 'padded.nii.gz').data, cube.data);
    assert.deepEqual(decode(gzipSync(encodeNiftiFile(cube)), 'cube.nii.gz').data, cube.data);
  }
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import { decodeImageFile } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';

// Damaged files the format fuzzer (test/fuzz/format-fuzz.test.ts) found imgpu decoding where the reference (numpy,
// nibabel, pydicom, cv2's libpng) refuses them or reads other values, or failing with an untyped error: each is now a
// typed refusal (UnsupportedFormatError, CLI exit 3) — or, for a rescale slope of 0, pydicom's values.

const bytesOf = (name: string) => Uint8Array.from(readFileSync(fixture('fuzz', name)));
const latin1 = (b: Uint8Array) => Buffer.from(b).toString('latin1');
const fromLatin1 = (s: string) => Uint8Array.from(Buffer.from(s, 'latin1'));
const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

async function refused(bytes: Uint8Array, name: string, why: RegExp): Promise<void> {
  await assert.rejects(decodeImageFile(bytes, name), (e: Error) => {
    assert.ok(e instanceof UnsupportedFormatError, `${e.constructor.name}: ${e.message}`);
    assert.match(e.message, why);
    return true;
  });
}

/** A .npy's header text replaced (its length field kept: the edits keep the length). */
const npyWith = (edit: (h: string) => string) => fromLatin1(latin1(bytesOf('u8.npy')).replace(/\{.*\}/, (h) => edit(h)));

test('.npy: a header numpy.load refuses (a missing brace, an extra key, a float or negative dimension, version 0) is refused, not decoded or a RangeError', async () => {
  const ok = await decodeImageFile(bytesOf('u8.npy'), 'u8.npy');
  assert.deepEqual(ok.shape, [20, 28]);
  await refused(npyWith((h) => h.replace('}', ' ')), 'brace.npy', /unreadable \.npy header/);
  await refused(npyWith((h) => h.replace("'fortran_order': False", "'fortran_order': False, 'x': 1").replace(/ +$/, '')), 'extra.npy', /unreadable \.npy header/);
  await refused(npyWith((h) => h.replace('(20, 28)', '(20.0, 28)')), 'float.npy', /unreadable \.npy header/);
  await refused(npyWith((h) => h.replace('(20, 28)', '(-1, 28)')), 'negative.npy', /unreadable \.npy header/);
  const v0 = bytesOf('u8.npy');
  v0[6] = 0;
  await refused(v0, 'v0.npy', /format version 0\.0/);
});

/** A NIfTI-1 fixture with float32 field `at` set. */
function niftiWith(name: string, edits: [number, 'f32' | 'i16', number][]): Uint8Array {
  const b = bytesOf(name);
  for (const [at, kind, x] of edits) {
    if (kind === 'f32') view(b).setFloat32(at, x, true);
    else view(b).setInt16(at, x, true);
  }
  return b;
}

test('NIfTI: vox_offset NaN or inside the header, a dimension of 0 or less, and an intercept not finite beside a slope are refused as nibabel refuses them', async () => {
  assert.equal((await decodeImageFile(bytesOf('u8.nii'), 'u8.nii')).data.length, 20 * 16 * 3);
  await refused(niftiWith('u8.nii', [[108, 'f32', NaN]]), 'nan-offset.nii', /vox_offset NaN/);
  await refused(niftiWith('u8.nii', [[108, 'f32', 348]]), 'low-offset.nii', /vox_offset 348/);
  await refused(niftiWith('u8.nii', [[42, 'i16', 0]]), 'zero-dim.nii', /NIfTI dimensions/);
  await refused(niftiWith('u8.nii', [[44, 'i16', -1]]), 'negative-dim.nii', /NIfTI dimensions/);
  await refused(niftiWith('i16_scaled.nii', [[116, 'f32', NaN]]), 'nan-inter.nii', /scl_inter NaN/);
});

/** The offset of a DICOM element's value: the tag's bytes (little-endian group, element) then VR and a 2-byte length. */
function dicomValueAt(b: Uint8Array, group: number, element: number): number {
  const s = latin1(b);
  const tag = String.fromCharCode(group & 255, group >> 8, element & 255, element >> 8);
  const at = s.indexOf(tag, 132);
  assert.ok(at > 0, `tag (${group.toString(16)},${element.toString(16)})`);
  return at;
}

test('DICOM: an unknown VR, bits stored 0, a pixel representation not 0/1, a missing bits stored, a rescale slope that is no number, a US tag of another VR and a space-padded transfer syntax are refused; a slope of 0 is applied as pydicom applies it', async () => {
  const name = 'u8_explicit.dcm';
  const plain = await decodeImageFile(bytesOf(name), name);
  const vr = bytesOf(name);
  vr.set([0x58, 0x58], dicomValueAt(vr, 0x28, 0x103) + 4);
  await refused(vr, name, /unknown value representation 'XX'/);
  const bits = bytesOf(name);
  view(bits).setUint16(dicomValueAt(bits, 0x28, 0x101) + 8, 0, true);
  await refused(bits, name, /0 bits stored of 8/);
  const rep = bytesOf(name);
  view(rep).setUint16(dicomValueAt(rep, 0x28, 0x103) + 8, 1024, true);
  await refused(rep, name, /pixel representation 1024/);
  const missing = bytesOf(name);
  missing.set([0x28, 0x00, 0x99, 0x01], dicomValueAt(missing, 0x28, 0x101)); // (0028,0199): bits stored gone
  await refused(missing, name, /no bits stored tag/);
  const other = bytesOf(name);
  other.set([0x53, 0x53], dicomValueAt(other, 0x28, 0x100) + 4); // bits allocated as SS
  await refused(other, name, /tag x00280100 is SS/);
  // ct_explicit.dcm: slope '1', intercept '-1024' (DS values of even length; a same-length edit keeps the file sound).
  const ct = 'ct_explicit.dcm';
  const slope = bytesOf(ct);
  const at = dicomValueAt(slope, 0x28, 0x1053) + 8;
  slope.set([0x30, 0x20], at); // '0 '
  const zero = await decodeImageFile(slope, ct);
  assert.ok(zero.data.every((v) => v === -1024), 'slope 0: every pixel the intercept');
  slope.set([0x78, 0x20], at); // 'x '
  await refused(slope, ct, /rescale slope 'x' is not a number/);
  assert.equal(plain.data.length, 20 * 28);
  // A little-endian file whose syntax says '1.2.840.10008.1.2.2 ' (big-endian, padded with a space, not NUL): dicom-parser
  // parsed it little-endian (the UID with its space is none it knows), and the pixels were read big-endian.
  const be = bytesOf(ct);
  const uid = latin1(be).indexOf('1.2.840.10008.1.2.1\0');
  assert.ok(uid > 0);
  be.set(fromLatin1('1.2.840.10008.1.2.2 '), uid);
  await refused(be, ct, /padded with spaces/);
});

// The format fuzzer's last open DICOM cases (seed 7: cases 320, 380, 396, 693, 1091, 1405, 1687, 1972; seed 39: 1774, 1971), each a file
// pydicom refuses that imgpu decoded: the same one-field damage here, on the fixture the fuzzer mutated.
test('DICOM: a file meta UID of another VR, pixel data of undefined length, no photometric interpretation, a NUL in a rescale value and a rescale value of another VR are refused as pydicom refuses them', async () => {
  const explicit = 'u8_explicit.dcm', implicit = 'u16_implicit.dcm';
  assert.equal((await decodeImageFile(bytesOf(implicit), implicit)).data.length, 20 * 28);
  const syntax = bytesOf(explicit);
  syntax.set([0x55, 0x4c], dicomValueAt(syntax, 0x2, 0x10) + 4); // transfer syntax as UL (cases 320, 1405, 1687; US: 1091)
  await refused(syntax, explicit, /tag x00020010 is UL, not a UID/);
  const sop = bytesOf(explicit);
  sop.set([0x44, 0x53], dicomValueAt(sop, 0x2, 0x2) + 4); // media storage SOP class as DS (case 396)
  await refused(sop, explicit, /tag x00020002 is DS, not a UID/);
  const undefinedLength = bytesOf(implicit);
  view(undefinedLength).setUint32(dicomValueAt(undefinedLength, 0x7fe0, 0x10) + 4, 0xffffffff, true); // case 380
  await refused(undefinedLength, implicit, /pixel data of undefined length/);
  const noPhotometric = bytesOf(explicit);
  const at = dicomValueAt(noPhotometric, 0x28, 0x4);
  const end = at + 8 + view(noPhotometric).getUint16(at + 6, true);
  await refused(Uint8Array.from([...noPhotometric.subarray(0, at), ...noPhotometric.subarray(end)]), explicit, /no photometric interpretation tag/); // case 693
  const nul = bytesOf(implicit);
  nul.set([0x00, 0x4c], dicomValueAt(nul, 0x28, 0x1052) + 8); // rescale intercept '\0L' (case 1972)
  await refused(nul, implicit, /rescale intercept holds a NUL byte before its end/);
  const ct = 'ct_explicit.dcm', binary = bytesOf(ct);
  binary.set([0x55, 0x53], dicomValueAt(binary, 0x28, 0x1052) + 4); // rescale intercept as US (seed 39: cases 1774, 1971)
  await refused(binary, ct, /rescale intercept is US, not a decimal string/);
});

/** A PNG fixture with the chunk of type `type` edited by `edit` (its CRC left as it was unless `fix`). */
function pngChunk(name: string, type: string): { b: Uint8Array; at: number; len: number } {
  const b = bytesOf(name);
  const at = latin1(b).indexOf(type) - 4;
  return { b, at, len: view(b).getUint32(at) };
}

test('PNG: a critical chunk failing its CRC, a missing IEND and a second IHDR are refused as libpng (cv2.imread) refuses them, where libspng decoded them', async () => {
  const name = 'rgb16.png';
  assert.equal((await decodeImageFile(bytesOf(name), name)).dtype, 'uint16');
  const iend = pngChunk(name, 'IEND');
  iend.b[iend.at + 8] ^= 1; // IEND's CRC
  // Messages: libpng's own (native/png.c), or io/png.ts's check before sharp where the libpng decoder is not built.
  await refused(iend.b, name, /IEND chunk at byte \d+ fails its CRC|libpng: IEND: CRC error/);
  await refused(iend.b.subarray(0, iend.at), name, /ends before its IEND|libpng: PNG input buffer is incomplete/);
  const ihdr = pngChunk(name, 'IHDR');
  const again = Uint8Array.from([...ihdr.b.subarray(0, iend.at), ...ihdr.b.subarray(ihdr.at, ihdr.at + 25), ...ihdr.b.subarray(iend.at)]);
  await refused(again, name, /a second IHDR|libpng: IHDR: out of place/);
  // An ancillary chunk's CRC is libpng's warning, not its error: still decoded.
  const text = Uint8Array.from([...ihdr.b.subarray(0, ihdr.at + 25), 0, 0, 0, 1, 0x74, 0x45, 0x58, 0x74, 0x41, 1, 2, 3, 4, ...ihdr.b.subarray(ihdr.at + 25)]);
  assert.notEqual(crc32(text.subarray(ihdr.at + 29, ihdr.at + 34)), 0x01020304);
  assert.deepEqual((await decodeImageFile(text, name)).data, (await decodeImageFile(bytesOf(name), name)).data);
});

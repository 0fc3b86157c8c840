import { Gunzip } from 'fflate';
import * as nifti from 'nifti-reader-js';
import { ImageTooLargeError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Geometry, type Image, type Shape } from '../core/image.js';

/**
 * NIfTI-1/2 volumes in memory, for Node and the browser alike (no Node module here; io/volume.ts adds the files
 * and zlib): read with nifti-reader-js, written by hand (a 352-byte NIfTI-1 header). Voxels come out as [z, y, x]
 * with x fastest — NIfTI's i, j, k — and their geometry in NIfTI's RAS+ world (core/image.ts Geometry).
 */

/**
 * Inflates gzip streams with a bound, so that a small file cannot expand into gigabytes (a decompression bomb):
 * `head` the first `n` bytes (fewer where the stream is shorter; stops there), `all` the whole stream, or undefined
 * as soon as it would exceed `max` bytes (stops there).
 */
export interface Inflater {
  head(gz: Uint8Array, n: number): Uint8Array;
  all(gz: Uint8Array, max: number): Uint8Array | undefined;
}

/**
 * fflate's streaming inflater (what nifti-reader-js ships; a page without zlib uses it): fed 64 KiB at a time,
 * stopped once `enough` says so. Returns the output and whether it stopped early.
 */
function inflateUntil(gz: Uint8Array, enough: (total: number) => boolean): { out: Uint8Array; stopped: boolean } {
  const chunks: Uint8Array[] = [];
  let total = 0, stopped = false;
  const g = new Gunzip((chunk) => {
    chunks.push(chunk);
    total += chunk.length;
    stopped ||= enough(total);
  });
  for (let i = 0; i < gz.length && !stopped; i += 1 << 16) g.push(gz.subarray(i, i + (1 << 16)), i + (1 << 16) >= gz.length);
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) out.set(c, (o += c.length) - c.length);
  return { out, stopped };
}

/** The reader's own inflater (fflate), bounded. */
const readerInflater: Inflater = {
  head: (gz, n) => inflateUntil(gz, (t) => t >= n).out,
  all: (gz, max) => {
    const r = inflateUntil(gz, (t) => t > max);
    return r.stopped ? undefined : r.out;
  },
};

/** The largest NIfTI header: NIfTI-2's 540 bytes (NIfTI-1's is 348). */
const HEADER_BYTES = 540;
/**
 * Bytes a stream may inflate to beyond its header's voxel data (vox_offset + voxels · bytes) before it is refused:
 * writers pad a little; far more is a decompression bomb.
 */
const TRAILING_BYTES = 1 << 20;
/**
 * The most bytes a NIfTI file's header may declare (4 GiB: a 1024×1024×309 float CT is 1.3 GB), checked before
 * its gzip stream is inflated (ReadOptions.maxVolumeBytes sets another).
 */
export const DEFAULT_MAX_VOLUME_BYTES = 2 ** 32;

/** The bytes of a view as an ArrayBuffer of their own (a copy only where the view is part of a larger buffer). */
function arrayBufferOf(b: Uint8Array): ArrayBuffer {
  return (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)) as ArrayBuffer;
}

/** The 4×4 affine (row-major rows of 4) of a geometry: world = direction · diag(spacing) · ijk + origin. */
export function affineOf(g: Geometry): number[][] {
  const rows: number[][] = [];
  for (let r = 0; r < 3; r++) rows.push([0, 1, 2].map((c) => g.direction[r * 3 + c] * g.spacing[c]).concat(g.origin[r]));
  rows.push([0, 0, 0, 1]);
  return rows;
}

/** A geometry from a 4×4 affine: spacing = column norms, direction = normalized columns. */
export function geometryOf(a: number[][]): Geometry {
  const spacing = [0, 1, 2].map((c) => Math.hypot(a[0][c], a[1][c], a[2][c]) || 1) as Geometry['spacing'];
  const direction: number[] = [];
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) direction.push(a[r][c] / spacing[c]);
  return { spacing, origin: [a[0][3], a[1][3], a[2][3]], direction };
}

const NIFTI_TYPES: Record<number, { bytes: number; get: (v: DataView, o: number, le: boolean) => number; native?: Dtype }> = {
  2: { bytes: 1, get: (v, o) => v.getUint8(o), native: 'uint8' },
  4: { bytes: 2, get: (v, o, le) => v.getInt16(o, le) },
  8: { bytes: 4, get: (v, o, le) => v.getInt32(o, le) },
  16: { bytes: 4, get: (v, o, le) => v.getFloat32(o, le) },
  64: { bytes: 8, get: (v, o, le) => v.getFloat64(o, le) },
  256: { bytes: 1, get: (v, o) => v.getInt8(o) },
  512: { bytes: 2, get: (v, o, le) => v.getUint16(o, le), native: 'uint16' },
  768: { bytes: 4, get: (v, o, le) => v.getUint32(o, le) },
};

/** Where a header puts its voxels: dimensions, type, count, offset — or a typed error for what imgpu does not read. */
function voxelLayout(h: ReturnType<typeof nifti.readHeader>, name: string) {
  const dims = h.dims;
  const rank = dims[0];
  if (rank < 2 || rank > 7) throw new UnsupportedFormatError(`${name}: NIfTI dim[0] = ${rank}`);
  const extra = dims.slice(4, rank + 1).reduce((a: number, b: number) => a * Math.max(1, b), 1);
  if (extra > 1) throw new UnsupportedFormatError(`${name} is a ${dims.slice(1, rank + 1).join('×')} series of volumes; imgpu reads one 3D volume (split it first, e.g. fslsplit)`);
  // Every dimension within the rank counts (nibabel's shape): one of 0 or less is an empty or damaged volume, where
  // reading it as 1 gave voxels nibabel does not have, and a negative one an untyped RangeError.
  const used = dims.slice(1, Math.min(rank, 3) + 1);
  if (used.some((d: number) => !Number.isSafeInteger(d) || d < 1)) throw new UnsupportedFormatError(`${name}: NIfTI dimensions ${dims.slice(1, rank + 1).join('×')} (each must be at least 1)`);
  const [nx, ny, nz] = [used[0], used[1], used[2] ?? 1];
  const t = NIFTI_TYPES[h.datatypeCode];
  if (!t) throw new UnsupportedFormatError(`${name}: NIfTI datatype ${h.datatypeCode} is not supported (integer or real scalars)`);
  const n = nx * ny * nz;
  // nibabel takes int(vox_offset) and refuses, in a single file (n+1, n+2), one inside the header (below 352 or 544):
  // reading from there gave the header's bytes as voxels, and a NaN offset read from 0.
  const least = h instanceof nifti.NIFTI2 ? 544 : h.isHDR ? 0 : 352;
  if (!Number.isFinite(h.vox_offset) || h.vox_offset < least) throw new UnsupportedFormatError(`${name}: NIfTI vox_offset ${h.vox_offset} (the voxels of a single file start at ${least} or after)`);
  const off = Math.floor(h.vox_offset);
  return { nx, ny, nz, t, n, off, end: off + n * t.bytes };
}

/**
 * The header's scaling as nibabel reads it: a slope of 0 or not finite means none (1, 0); a valid slope with an
 * intercept not finite is refused (nibabel's HeaderDataError), where taking 0 for it gave values nibabel never gives.
 */
function scaling(h: ReturnType<typeof nifti.readHeader>, name: string): { slope: number; inter: number } {
  if (!Number.isFinite(h.scl_slope) || h.scl_slope === 0) return { slope: 1, inter: 0 };
  if (!Number.isFinite(h.scl_inter)) throw new UnsupportedFormatError(`${name}: NIfTI scl_slope ${h.scl_slope} with scl_inter ${h.scl_inter} (an intercept must be finite)`);
  return { slope: h.scl_slope, inter: h.scl_inter };
}

/** A header read from its own bytes (extensions, which lie after it, not followed). */
function readHeader(data: ArrayBuffer, name: string): ReturnType<typeof nifti.readHeader> {
  try {
    return nifti.readHeader(data);
  } catch (e) {
    throw new UnsupportedFormatError(`${name}: unreadable NIfTI header (${(e as Error).message})`);
  }
}

/** Runs an inflater, its failures as the typed error of a corrupt stream. */
function inflating<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw new UnsupportedFormatError(`${name}: corrupt gzip stream (${(e as Error).message})`);
  }
}

/**
 * A .nii.gz inflated within what its header declares: the header first (the stream's first 540 bytes), its voxel
 * data's size checked against `maxBytes` before the rest is inflated, and the inflation stopped — the file refused
 * — once it passes that size by more than TRAILING_BYTES (a small file that inflates to gigabytes).
 */
function inflateDeclared(gz: Uint8Array, name: string, inflater: Inflater, maxBytes: number): ArrayBuffer {
  const head = arrayBufferOf(inflating(name, () => inflater.head(gz, HEADER_BYTES)));
  if (!nifti.isNIFTI(head)) throw new UnsupportedFormatError(`${name} is not a NIfTI file (no n+1/ni1/n+2 magic)`);
  const { end } = voxelLayout(readHeader(head.slice(0, nifti.isNIFTI1(head) ? 348 : HEADER_BYTES), name), name);
  if (!Number.isSafeInteger(end) || end > maxBytes) {
    throw new ImageTooLargeError(`${name}: its header declares ${end} bytes of voxel data, more than the ${maxBytes} imgpu inflates (ReadOptions.maxVolumeBytes)`);
  }
  const all = inflating(name, () => inflater.all(gz, end + TRAILING_BYTES));
  if (!all) throw new UnsupportedFormatError(`${name}: the gzip stream inflates to more than the ${end} bytes its header declares (stopped there: a decompression bomb or a corrupt header)`);
  return arrayBufferOf(all);
}

/**
 * Reads a NIfTI-1 or NIfTI-2 volume (gzipped or not). uint8/uint16 data without scaling keep their type;
 * everything else becomes float32 with scl_slope/scl_inter applied (nibabel's get_fdata, in float32). The
 * affine is nibabel's best affine: the sform when sform_code > 0, else the qform, else the voxel sizes. A gzipped
 * file is inflated by `inflater` (default: the reader's own, fflate; Node passes zlib's) within the size its
 * header declares, at most `maxBytes` (inflateDeclared).
 */
export function decodeNifti(bytes: Uint8Array, name: string, inflater: Inflater = readerInflater, maxBytes = DEFAULT_MAX_VOLUME_BYTES): Image {
  // An empty file is said as such (the gzip check below cannot read its two magic bytes).
  if (bytes.byteLength === 0) throw new UnsupportedFormatError(`${name} is empty (0 bytes): not a NIfTI file`);
  let data: ArrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  if (bytes.byteLength >= 2 && nifti.isCompressed(data)) data = inflateDeclared(bytes, name, inflater, maxBytes);
  if (!nifti.isNIFTI(data)) throw new UnsupportedFormatError(`${name} is not a NIfTI file (no n+1/ni1/n+2 magic)`);
  const h = readHeader(data, name);
  const { nx, ny, nz, t, n, off } = voxelLayout(h, name);
  if (off + n * t.bytes > data.byteLength) throw new UnsupportedFormatError(`${name} is truncated: ${data.byteLength - off} bytes of voxel data, the header needs ${n * t.bytes}`);
  const { slope, inter } = scaling(h, name);
  const keep = t.native && slope === 1 && inter === 0;
  const dtype: Dtype = keep ? t.native! : 'float32';
  const out = allocPixels(dtype, n);
  const view = new DataView(data, off, n * t.bytes);
  const le = h.littleEndian;
  for (let i = 0; i < n; i++) out[i] = t.get(view, i * t.bytes, le) * slope + inter;
  const affine = h.sform_code > 0 || h.qform_code > 0 ? (h.sform_code > 0 ? h.affine : h.getQformMat()) : [
    [h.pixDims[1] || 1, 0, 0, 0], [0, h.pixDims[2] || 1, 0, 0], [0, 0, h.pixDims[3] || 1, 0], [0, 0, 0, 1],
  ];
  const shape: Shape = nz > 1 ? [nz, ny, nx] : [ny, nx];
  return { data: out, shape, channels: 1, dtype, geometry: geometryOf(affine) };
}

/**
 * A NIfTI-1 single file (.nii, not compressed: the caller gzips it for .nii.gz) holding the image's voxels (uint8,
 * uint16 or float32) and its geometry as the sform (code 1, scanner) — identity with unit voxels when the image has none.
 */
export function encodeNiftiFile(img: Image): Uint8Array<ArrayBuffer> {
  if (img.channels !== 1) throw new UnsupportedFormatError('NIfTI output holds one channel: convert to gray first');
  const [nz, ny, nx] = img.shape.length === 3 ? img.shape : [1, img.shape[0], img.shape[1]];
  const code = { uint8: 2, uint16: 512, float32: 16 }[img.dtype];
  const bitpix = { uint8: 8, uint16: 16, float32: 32 }[img.dtype];
  const g = img.geometry ?? { spacing: [1, 1, 1], origin: [0, 0, 0], direction: [1, 0, 0, 0, 1, 0, 0, 0, 1] };
  const a = affineOf(g);
  const head = new ArrayBuffer(352);
  const v = new DataView(head);
  v.setInt32(0, 348, true);
  v.setUint8(38, 'r'.charCodeAt(0));
  const dims = [img.shape.length === 3 ? 3 : 2, nx, ny, nz, 1, 1, 1, 1];
  dims.forEach((d, i) => v.setInt16(40 + 2 * i, d, true));
  v.setInt16(70, code, true);
  v.setInt16(72, bitpix, true);
  const det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  [det < 0 ? -1 : 1, g.spacing[0], g.spacing[1], g.spacing[2], 1, 1, 1, 1].forEach((p, i) => v.setFloat32(76 + 4 * i, p, true));
  v.setFloat32(108, 352, true);
  v.setFloat32(112, 1, true); // scl_slope 1, scl_inter 0: the values as stored
  v.setUint8(123, 2); // xyzt_units: millimetres
  new TextEncoder().encodeInto('imgpu', new Uint8Array(head, 148, 80));
  v.setInt16(254, 1, true); // sform_code scanner; qform left 0 (unknown): readers use the sform
  for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) v.setFloat32(280 + 16 * r + 4 * c, a[r][c], true);
  new Uint8Array(head, 344, 4).set([0x6e, 0x2b, 0x31, 0]); // "n+1\0"
  const out = new Uint8Array(352 + img.data.byteLength);
  out.set(new Uint8Array(head));
  // Little-endian hosts only (every platform Node and browsers run on): the typed array's bytes are the file's.
  out.set(new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength), 352);
  return out;
}

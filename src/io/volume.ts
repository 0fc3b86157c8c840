import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import dicomParser from 'dicom-parser';
import * as nifti from 'nifti-reader-js';
import { FileAccessError, InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, pixelCount, type Dtype, type Geometry, type Image, type Shape } from '../core/image.js';

/**
 * Medical volumes: NIfTI-1/2 (.nii, .nii.gz; read with nifti-reader-js, written by hand: a 352-byte NIfTI-1
 * header), DICOM files and series (dicom-parser; uncompressed transfer syntaxes), and raw arrays. Voxels come
 * out as [z, y, x] with x fastest — NIfTI's i, j, k and DICOM's columns, rows, slices — and their geometry in
 * NIfTI's RAS+ world (core/image.ts Geometry).
 */

// ---------- geometry helpers ----------

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

// ---------- NIfTI ----------

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

/**
 * Reads a NIfTI-1 or NIfTI-2 volume (gzipped or not). uint8/uint16 data without scaling keep their type;
 * everything else becomes float32 with scl_slope/scl_inter applied (nibabel's get_fdata, in float32). The
 * affine is nibabel's best affine: the sform when sform_code > 0, else the qform, else the voxel sizes.
 */
export function decodeNifti(bytes: Uint8Array, name: string): Image {
  // An empty file is said as such (the gzip check below cannot read its two magic bytes).
  if (bytes.byteLength === 0) throw new UnsupportedFormatError(`${name} is empty (0 bytes): not a NIfTI file`);
  let data: ArrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  try {
    if (bytes.byteLength >= 2 && nifti.isCompressed(data)) data = gunzipSync(new Uint8Array(data)).buffer as ArrayBuffer;
  } catch (e) {
    throw new UnsupportedFormatError(`${name}: corrupt gzip stream (${(e as Error).message})`);
  }
  if (!nifti.isNIFTI(data)) throw new UnsupportedFormatError(`${name} is not a NIfTI file (no n+1/ni1/n+2 magic)`);
  let h: ReturnType<typeof nifti.readHeader>;
  try {
    h = nifti.readHeader(data);
  } catch (e) {
    throw new UnsupportedFormatError(`${name}: unreadable NIfTI header (${(e as Error).message})`);
  }
  const dims = h.dims;
  const rank = dims[0];
  if (rank < 2 || rank > 7) throw new UnsupportedFormatError(`${name}: NIfTI dim[0] = ${rank}`);
  const extra = dims.slice(4, rank + 1).reduce((a: number, b: number) => a * Math.max(1, b), 1);
  if (extra > 1) throw new UnsupportedFormatError(`${name} is a ${dims.slice(1, rank + 1).join('×')} series of volumes; imgpu reads one 3D volume (split it first, e.g. fslsplit)`);
  const [nx, ny, nz] = [dims[1], Math.max(1, dims[2]), rank >= 3 ? Math.max(1, dims[3]) : 1];
  const t = NIFTI_TYPES[h.datatypeCode];
  if (!t) throw new UnsupportedFormatError(`${name}: NIfTI datatype ${h.datatypeCode} is not supported (integer or real scalars)`);
  const n = nx * ny * nz;
  const off = Math.floor(h.vox_offset);
  if (off + n * t.bytes > data.byteLength) throw new UnsupportedFormatError(`${name} is truncated: ${data.byteLength - off} bytes of voxel data, the header needs ${n * t.bytes}`);
  const slope = Number.isFinite(h.scl_slope) && h.scl_slope !== 0 ? h.scl_slope : 1;
  const inter = Number.isFinite(h.scl_inter) && h.scl_slope !== 0 ? h.scl_inter : 0;
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
 * A NIfTI-1 single file (.nii; gzipped for .nii.gz) holding the image's voxels (uint8, uint16 or float32) and
 * its geometry as the sform (code 1, scanner) — identity with unit voxels when the image has none.
 */
export function encodeNifti(img: Image, gzip: boolean): Uint8Array {
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
  return gzip ? gzipSync(out, { level: 1 }) : out;
}

// ---------- DICOM ----------

const UNCOMPRESSED = new Set(['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.1.99', '1.2.840.10008.1.2.2']);

interface DicomSlice {
  name: string;
  rows: number;
  cols: number;
  position: number[];
  orientation: number[];
  spacing: [number, number];
  series: string;
  hu: Float32Array;
}

function numbers(ds: dicomParser.DataSet, tag: string): number[] | undefined {
  const s = ds.string(tag);
  if (!s) return undefined;
  const v = s.split('\\').map(Number);
  return v.every(Number.isFinite) ? v : undefined;
}

/** One DICOM file's pixels as float32 (rescale slope/intercept applied: HU for CT) and its position tags. */
export function decodeDicomSlice(bytes: Uint8Array, name: string): DicomSlice {
  let ds: dicomParser.DataSet;
  try {
    ds = dicomParser.parseDicom(bytes);
  } catch (e) {
    const msg = typeof e === 'string' ? e : (e as { exception?: string; message?: string }).exception ?? (e as Error).message;
    throw new UnsupportedFormatError(`${name} is not a readable DICOM file (${msg})`);
  }
  const syntax = ds.string('x00020010')?.trim() ?? '1.2.840.10008.1.2';
  if (!UNCOMPRESSED.has(syntax)) throw new UnsupportedFormatError(`${name}: compressed DICOM (transfer syntax ${syntax}) is not supported; decompress it first (e.g. gdcmconv --raw)`);
  const rows = ds.uint16('x00280010'), cols = ds.uint16('x00280011');
  const bits = ds.uint16('x00280100'), stored = ds.uint16('x00280101') ?? bits, signed = ds.uint16('x00280103') === 1;
  const samples = ds.uint16('x00280002') ?? 1, frames = Number(ds.string('x00280008') ?? 1);
  const pixel = ds.elements.x7fe00010;
  if (!rows || !cols || !bits || !pixel) throw new UnsupportedFormatError(`${name}: a DICOM file without image pixels`);
  if (samples !== 1) throw new UnsupportedFormatError(`${name}: ${samples} samples per pixel; imgpu reads gray (MONOCHROME) DICOM`);
  if (frames !== 1) throw new UnsupportedFormatError(`${name}: a multi-frame DICOM (${frames} frames) is not supported`);
  if (bits !== 8 && bits !== 16) throw new UnsupportedFormatError(`${name}: ${bits} bits allocated (8 or 16 supported)`);
  const n = rows * cols;
  if (pixel.length < n * (bits / 8) || pixel.dataOffset + n * (bits / 8) > bytes.length) throw new UnsupportedFormatError(`${name}: truncated pixel data`);
  const slope = Number(ds.string('x00281053') ?? 1) || 1, inter = Number(ds.string('x00281052') ?? 0) || 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset + pixel.dataOffset, n * (bits / 8));
  const le = syntax !== '1.2.840.10008.1.2.2';
  const hu = new Float32Array(n);
  const nbits = stored ?? bits;
  const shift = 32 - nbits;
  for (let i = 0; i < n; i++) {
    let raw = bits === 8 ? view.getUint8(i) : view.getUint16(2 * i, le);
    // Bits above BitsStored are not part of the value; signed values are sign-extended from BitsStored.
    raw = signed ? (raw << shift) >> shift : nbits < bits ? raw & ((1 << nbits) - 1) : raw;
    hu[i] = raw * slope + inter;
  }
  const spacing = numbers(ds, 'x00280030') ?? [1, 1];
  return {
    name, rows, cols, hu,
    position: numbers(ds, 'x00200032') ?? [0, 0, 0],
    orientation: numbers(ds, 'x00200037') ?? [1, 0, 0, 0, 1, 0],
    spacing: [spacing[0], spacing[1]],
    series: ds.string('x0020000e') ?? '',
  };
}

const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
/** DICOM's patient coordinates (LPS) to NIfTI's RAS: x and y flip. */
const lpsToRas = (v: number[]) => [-v[0], -v[1], v[2]];

function sliceGeometry(s: DicomSlice, dz: number, zdir: number[]): Geometry {
  const rowDir = lpsToRas(s.orientation.slice(0, 3)), colDir = lpsToRas(s.orientation.slice(3, 6));
  const z = lpsToRas(zdir);
  // PixelSpacing is (between rows, between columns) = (y, x).
  return { spacing: [s.spacing[1], s.spacing[0], dz], origin: lpsToRas(s.position) as Geometry['origin'], direction: [0, 1, 2].flatMap((r) => [rowDir[r], colDir[r], z[r]]) };
}

/** A single DICOM file as a 2D float32 image with its geometry. */
export function decodeDicom(bytes: Uint8Array, name: string): Image {
  const s = decodeDicomSlice(bytes, name);
  const n = cross(s.orientation.slice(0, 3), s.orientation.slice(3, 6));
  const data = allocPixels('float32', s.hu.length);
  data.set(s.hu);
  return { data, shape: [s.rows, s.cols], channels: 1, dtype: 'float32', geometry: sliceGeometry(s, 1, n) };
}

/**
 * A folder of DICOM slices as one float32 volume: slices sorted by their position along the slice normal (not
 * by file name or instance number), checked to form one regular series — one series UID, one size and
 * orientation, evenly spaced (a gap means a missing slice). Files that are not DICOM are ignored.
 */
export async function readDicomSeries(dir: string): Promise<Image> {
  const names = (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();
  const slices: DicomSlice[] = [];
  for (const f of names) {
    const path = join(dir, f);
    if (!(await stat(path)).isFile()) continue;
    const bytes = await readFile(path);
    // The DICOM preamble: 128 bytes, then "DICM" (files without it are accepted when they parse).
    const tagged = bytes.length > 132 && bytes.toString('latin1', 128, 132) === 'DICM';
    try {
      slices.push(decodeDicomSlice(bytes, path));
    } catch (e) {
      if (tagged || /\.dcm$/i.test(f)) throw e;
    }
  }
  if (slices.length === 0) throw new FileAccessError(`${dir} holds no DICOM files`);
  const series = new Set(slices.map((s) => s.series));
  if (series.size > 1) throw new InvalidArgumentError(`${dir} holds ${series.size} DICOM series (${[...series].join(', ')}); put each series in a folder of its own`);
  const first = slices[0];
  for (const s of slices) {
    if (s.rows !== first.rows || s.cols !== first.cols) throw new InvalidArgumentError(`DICOM slices of mixed sizes: ${first.name} is ${first.cols}×${first.rows}, ${s.name} is ${s.cols}×${s.rows}`);
    if (s.orientation.some((v, i) => Math.abs(v - first.orientation[i]) > 1e-4)) throw new InvalidArgumentError(`DICOM slices of mixed orientation: ${first.name} and ${s.name}`);
  }
  const normal = cross(first.orientation.slice(0, 3), first.orientation.slice(3, 6));
  const along = (s: DicomSlice) => dot(s.position, normal);
  slices.sort((a, b) => along(a) - along(b));
  let dz = 1;
  let zdir = normal;
  if (slices.length > 1) {
    const gaps = slices.slice(1).map((s, i) => along(s) - along(slices[i]));
    const sorted = [...gaps].sort((a, b) => a - b);
    dz = sorted[Math.floor(sorted.length / 2)];
    const same = gaps.findIndex((g) => g < 1e-3 * Math.max(dz, 1e-3));
    if (same >= 0) throw new InvalidArgumentError(`${dir}: two slices at the same position (${slices[same].name}, ${slices[same + 1].name}): a duplicate, or two acquisitions in one folder`);
    gaps.forEach((g, i) => {
      if (Math.abs(g - dz) > 0.05 * dz + 1e-3) throw new InvalidArgumentError(`${dir}: slices are ${dz.toFixed(3)} mm apart but ${g.toFixed(3)} mm between ${slices[i].name} and ${slices[i + 1].name}: a slice is missing or the series is irregular`);
    });
    // The z axis runs from the first slice to the last (the normal, up to gantry tilt).
    const last = slices[slices.length - 1];
    const d = last.position.map((p, i) => (p - first.position[i]) / ((slices.length - 1) * dz));
    const len = Math.hypot(d[0], d[1], d[2]);
    zdir = d.map((x) => x / len);
  }
  const plane = first.rows * first.cols;
  const data = allocPixels('float32', plane * slices.length);
  slices.forEach((s, i) => data.set(s.hu, i * plane));
  return { data, shape: [slices.length, first.rows, first.cols], channels: 1, dtype: 'float32', geometry: sliceGeometry(slices[0], dz, zdir) };
}

// ---------- raw ----------

export interface RawLayout {
  /** [d, h, w] or [h, w] */
  shape: number[];
  dtype: Dtype;
}

/** Headerless little-endian voxels with a caller-given shape and dtype; the size must match exactly. */
export function decodeRaw(bytes: Uint8Array, layout: RawLayout, name: string): Image {
  const { shape, dtype } = layout;
  if ((shape.length !== 2 && shape.length !== 3) || shape.some((n) => !Number.isInteger(n) || n < 1)) throw new InvalidArgumentError('a raw layout\'s shape must be [H, W] or [D, H, W] of positive integers');
  const n = pixelCount(shape as Shape);
  const need = n * { uint8: 1, uint16: 2, float32: 4 }[dtype];
  if (bytes.length !== need) throw new UnsupportedFormatError(`${name} holds ${bytes.length} bytes; shape ${[...shape].reverse().join('x')} of ${dtype} needs ${need}`);
  const data = allocPixels(dtype, n);
  new Uint8Array(data.buffer).set(bytes);
  return { data, shape: [...shape] as Shape, channels: 1, dtype };
}

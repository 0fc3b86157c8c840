import dicomParser from 'dicom-parser';
import { FileAccessError, InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Geometry, type Image } from '../core/image.js';

/**
 * DICOM files and series in memory, for Node and the browser alike (io/volume.ts reads a folder): dicom-parser,
 * uncompressed transfer syntaxes. Voxels come out as [z, y, x] with x fastest — columns, rows, slices — and their
 * geometry in NIfTI's RAS+ world (core/image.ts Geometry).
 */

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

/** A file as it was read: its name (a path in Node, a file name in the page) and its bytes. */
export interface NamedBytes { name: string; bytes: Uint8Array }

/** The DICOM preamble: 128 bytes, then "DICM" (files without it are accepted when they parse). */
function hasDicomMagic(b: Uint8Array): boolean {
  return b.length > 132 && b[128] === 0x44 && b[129] === 0x49 && b[130] === 0x43 && b[131] === 0x4d;
}

/**
 * Files of one DICOM series (a folder's files, or files dropped on a page) as one float32 volume: slices sorted
 * by their position along the slice normal (not by file name or instance number), checked to form one regular
 * series — one series UID, one size and orientation, evenly spaced (a gap means a missing slice). Files that are
 * not DICOM (no DICM magic, no .dcm name, not parsed) are ignored. `where` names the set in messages.
 */
export function dicomSeries(files: readonly NamedBytes[], where: string): Image {
  const slices: DicomSlice[] = [];
  for (const { name, bytes } of files) {
    try {
      slices.push(decodeDicomSlice(bytes, name));
    } catch (e) {
      if (hasDicomMagic(bytes) || /\.dcm$/i.test(name)) throw e;
    }
  }
  if (slices.length === 0) throw new FileAccessError(`${where} holds no DICOM files`);
  const series = new Set(slices.map((s) => s.series));
  if (series.size > 1) throw new InvalidArgumentError(`${where} holds ${series.size} DICOM series (${[...series].join(', ')}); put each series in a folder of its own`);
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
    if (same >= 0) throw new InvalidArgumentError(`${where}: two slices at the same position (${slices[same].name}, ${slices[same + 1].name}): a duplicate, or two acquisitions in one folder`);
    gaps.forEach((g, i) => {
      if (Math.abs(g - dz) > 0.05 * dz + 1e-3) throw new InvalidArgumentError(`${where}: slices are ${dz.toFixed(3)} mm apart but ${g.toFixed(3)} mm between ${slices[i].name} and ${slices[i + 1].name}: a slice is missing or the series is irregular`);
    });
    // The z axis runs from the lowest slice to the highest (the normal, up to gantry tilt): ends of the sorted
    // slices, not the file read first (a top slice read first gave a zero axis, a NaN direction).
    const [lowest, highest] = [slices[0], slices[slices.length - 1]];
    const d = highest.position.map((p, i) => (p - lowest.position[i]) / ((slices.length - 1) * dz));
    const len = Math.hypot(d[0], d[1], d[2]);
    zdir = d.map((x) => x / len);
  }
  const plane = first.rows * first.cols;
  const data = allocPixels('float32', plane * slices.length);
  slices.forEach((s, i) => data.set(s.hu, i * plane));
  return { data, shape: [slices.length, first.rows, first.cols], channels: 1, dtype: 'float32', geometry: sliceGeometry(slices[0], dz, zdir) };
}

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

/** The value representations of DICOM PS3.5 (6.2): an explicit VR outside them is damage (pydicom refuses it). */
const VRS = new Set('AE AS AT CS DA DS DT FD FL IS LO LT OB OD OF OL OV OW PN SH SL SQ SS ST SV TM UC UI UL UN UR US UT UV'.split(' '));

/** A parse or read error of dicom-parser (it throws strings and plain objects) as the typed error of an unreadable file. */
function unreadable(e: unknown, name: string): UnsupportedFormatError {
  const msg = typeof e === 'string' ? e : (e as { exception?: string; message?: string }).exception ?? (e as Error).message;
  return new UnsupportedFormatError(`${name} is not a readable DICOM file (${msg})`);
}

/**
 * A decimal string (DS) tag's one number, `fallback` where the tag is absent or empty; a value that is not one finite
 * number (text, NaN, several values) is refused, where reading it as the fallback gave pixels pydicom never gives.
 */
function decimal(ds: dicomParser.DataSet, tag: string, what: string, fallback: number, name: string): number {
  // dicom-parser's string ends at a NUL, so '\0L' read as empty (the fallback); pydicom drops trailing NULs only and
  // refuses one before other characters.
  const el = ds.elements[tag];
  // Another VR (US, UL) makes the value binary to pydicom, which then fails or reads another number.
  if (el?.vr !== undefined && el.vr !== 'DS') throw new UnsupportedFormatError(`${name}: ${what} is ${el.vr}, not a decimal string (DS): a damaged file`);
  const raw = el ? ds.byteArray.subarray(el.dataOffset, el.dataOffset + el.length) : undefined;
  if (raw && raw.findLastIndex((b) => b !== 0) > raw.indexOf(0) && raw.includes(0)) throw new UnsupportedFormatError(`${name}: ${what} holds a NUL byte before its end (a DS value is padded with spaces): a damaged file`);
  const s = ds.string(tag)?.trim();
  if (!s) return fallback;
  const v = Number(s);
  if (!Number.isFinite(v)) throw new UnsupportedFormatError(`${name}: ${what} '${s}' is not a number`);
  return v;
}

/** The pixel layout tags, checked to describe one frame of gray 8- or 16-bit samples imgpu reads. */
function pixelLayout(ds: dicomParser.DataSet, name: string) {
  const rows = us(ds, 'x00280010', name), cols = us(ds, 'x00280011', name);
  const bits = us(ds, 'x00280100', name), stored = us(ds, 'x00280101', name), rep = us(ds, 'x00280103', name);
  const samples = us(ds, 'x00280002', name), frames = Number(ds.string('x00280008') ?? 1);
  const pixel = ds.elements.x7fe00010;
  if (!rows || !cols || !bits || !pixel) throw new UnsupportedFormatError(`${name}: a DICOM file without image pixels`);
  // Uncompressed pixel data has a defined length (PS3.5 A.4): pydicom reads an undefined one as no pixel data at all.
  if (pixel.hadUndefinedLength) throw new UnsupportedFormatError(`${name}: pixel data of undefined length in an uncompressed DICOM (a damaged length)`);
  if (!ds.elements.x00280004) throw new UnsupportedFormatError(`${name}: no photometric interpretation tag (a DICOM image must have one)`);
  // Type 1 tags of the Image Pixel module, required by pydicom too: a default taken for them read damaged files.
  if (samples === undefined || stored === undefined || rep === undefined) {
    throw new UnsupportedFormatError(`${name}: no ${samples === undefined ? 'samples per pixel' : stored === undefined ? 'bits stored' : 'pixel representation'} tag (a DICOM image must have one)`);
  }
  if (samples !== 1) throw new UnsupportedFormatError(`${name}: ${samples} samples per pixel; imgpu reads gray (MONOCHROME) DICOM`);
  if (frames !== 1) throw new UnsupportedFormatError(`${name}: a multi-frame DICOM (${frames} frames) is not supported`);
  if (bits !== 8 && bits !== 16) throw new UnsupportedFormatError(`${name}: ${bits} bits allocated (8 or 16 supported)`);
  // Bits stored outside 1..bits allocated masked every value to 0; a pixel representation other than 0 (unsigned)
  // or 1 (signed) was read as unsigned: both are damage pydicom refuses or reads otherwise.
  if (!stored || stored > bits) throw new UnsupportedFormatError(`${name}: ${stored} bits stored of ${bits} allocated`);
  if (rep !== 0 && rep !== 1) throw new UnsupportedFormatError(`${name}: pixel representation ${rep} (0 unsigned, 1 signed)`);
  return { rows, cols, bits, stored, signed: rep === 1, pixel };
}

/** The UIDs of the file meta group pydicom uses: the media storage SOP class and the transfer syntax. */
const META_UIDS = ['x00020002', 'x00020010'];

/**
 * The transfer syntax dicom-parser parsed the data set by: its UID as stored (up to a NUL), which must be the UID
 * pydicom reads (trimmed). A UID padded with a space was parsed as little-endian while its trimmed value said
 * big-endian: the pixels were then read in the other byte order than the tags.
 */
function transferSyntax(ds: dicomParser.DataSet, bytes: Uint8Array, name: string): string {
  // The file meta group's UIDs read as another VR (UL, US, DS) are numbers or text to pydicom, which then fails on them.
  for (const tag of META_UIDS) {
    const uid = ds.elements[tag];
    if (uid?.vr !== undefined && uid.vr !== 'UI') throw new UnsupportedFormatError(`${name}: tag ${tag} is ${uid.vr}, not a UID (UI): a damaged file`);
  }
  const el = ds.elements.x00020010;
  if (!el) return '1.2.840.10008.1.2';
  const stored = dicomParser.readFixedString(bytes, el.dataOffset, el.length);
  if (stored !== stored.trim()) throw new UnsupportedFormatError(`${name}: transfer syntax '${stored}' padded with spaces (a UID is padded with NUL): a damaged file`);
  return stored;
}

/** The value of a US tag of the pixel layout (undefined where absent); one of another VR or length is damage. */
function us(ds: dicomParser.DataSet, tag: string, name: string): number | undefined {
  const el = ds.elements[tag];
  if (!el) return undefined;
  if ((el.vr !== undefined && el.vr !== 'US') || el.length !== 2) throw new UnsupportedFormatError(`${name}: tag ${tag} is ${el.vr ?? 'implicit'} of ${el.length} bytes, not one US value`);
  return ds.uint16(tag);
}

/** One DICOM file's pixels as float32 (rescale slope/intercept applied: HU for CT) and its position tags. */
export function decodeDicomSlice(bytes: Uint8Array, name: string): DicomSlice {
  let ds: dicomParser.DataSet;
  try {
    ds = dicomParser.parseDicom(bytes);
  } catch (e) {
    throw unreadable(e, name);
  }
  for (const el of Object.values(ds.elements)) if (el.vr !== undefined && !VRS.has(el.vr)) throw new UnsupportedFormatError(`${name}: tag ${el.tag} has the unknown value representation '${el.vr}' (a damaged file)`);
  const syntax = transferSyntax(ds, bytes, name);
  if (!UNCOMPRESSED.has(syntax)) throw new UnsupportedFormatError(`${name}: compressed DICOM (transfer syntax ${syntax}) is not supported; decompress it first (e.g. gdcmconv --raw)`);
  // The tags are read where dicom-parser may throw (a value past the end of the file): as an unreadable file.
  let layout: ReturnType<typeof pixelLayout>;
  try {
    layout = pixelLayout(ds, name);
  } catch (e) {
    throw e instanceof UnsupportedFormatError ? e : unreadable(e, name);
  }
  const { rows, cols, bits, stored, signed, pixel } = layout;
  const n = rows * cols;
  if (pixel.length < n * (bits / 8) || pixel.dataOffset + n * (bits / 8) > bytes.length) throw new UnsupportedFormatError(`${name}: truncated pixel data`);
  // A slope of 0 is one (every pixel the intercept), as pydicom applies it.
  const slope = decimal(ds, 'x00281053', 'rescale slope', 1, name), inter = decimal(ds, 'x00281052', 'rescale intercept', 0, name);
  const view = new DataView(bytes.buffer, bytes.byteOffset + pixel.dataOffset, n * (bits / 8));
  const le = syntax !== '1.2.840.10008.1.2.2';
  const hu = new Float32Array(n);
  const shift = 32 - stored;
  for (let i = 0; i < n; i++) {
    let raw = bits === 8 ? view.getUint8(i) : view.getUint16(2 * i, le);
    // Bits above BitsStored are not part of the value; signed values are sign-extended from BitsStored.
    raw = signed ? (raw << shift) >> shift : stored < bits ? raw & ((1 << stored) - 1) : raw;
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

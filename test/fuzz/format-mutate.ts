// Seeded mutations of real PNG, TIFF, NIfTI, DICOM and .npy files for the format fuzzer (format-differential.ts): the
// damage of disks, transfers and hostile writers, each aimed at what a reader trusts — PNG chunk lengths, CRCs and
// IHDR fields; TIFF IFD offsets, counts and the fields of its entries (sizes, bits per sample, compression, strip
// offsets); NIfTI dims, datatype, vox_offset and scaling; DICOM tags' values, VRs, lengths and the transfer syntax;
// the .npy header's dict, shape, dtype and fortran_order — and truncation. Each is named and reproducible from the
// seed and case index (jpeg-mutate.ts's generator).
import { crc32, gunzipSync, gzipSync } from 'node:zlib';
import { mutate, type Mutation } from './jpeg-mutate.js';

type Rand = () => number;

const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];
const splice = (b: Uint8Array, at: number, remove: number, insert: ArrayLike<number>) => Uint8Array.from([...b.subarray(0, at), ...Array.from(insert), ...b.subarray(at + remove)]);
const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Values that sit on a reader's edges: zero, one, sign and width boundaries, and one drawn at random. */
const edges32 = (r: Rand) => pick(r, [0, 1, 2, 3, 7, 8, 16, 255, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff, int(r, 2 ** 32)]);
const edges16 = (r: Rand) => pick(r, [0, 1, 2, 3, 4, 7, 8, 12, 16, 17, 32, 255, 0x7fff, 0x8000, 0xffff, int(r, 0x10000)]);

const truncate: Mutation = (b, r) => b.subarray(0, int(r, b.length));
const flipByte: Mutation = (b, r) => {
  b[int(r, b.length)] ^= 1 << int(r, 8);
  return b;
};

// ---------- PNG: signature, then chunks of length (4, big-endian), type (4), data, CRC (4) over type and data ----------

interface Chunk { at: number; type: string; len: number }

function pngChunks(b: Uint8Array): Chunk[] {
  const chunks: Chunk[] = [];
  for (let at = 8; at + 12 <= b.length;) {
    const len = view(b).getUint32(at);
    chunks.push({ at, type: String.fromCharCode(...b.subarray(at + 4, at + 8)), len });
    if (len > b.length) break;
    at += 12 + len;
  }
  return chunks;
}

/** The CRC of a chunk made right again, so that a reader goes past it to the damaged field (most of the time). */
function fixCrc(b: Uint8Array, c: Chunk, r: Rand): Uint8Array {
  if (r() < 0.8 && c.at + 12 + c.len <= b.length) view(b).setUint32(c.at + 8 + c.len, crc32(b.subarray(c.at + 4, c.at + 8 + c.len)));
  return b;
}

/** A chunk drawn from the file's, undefined where none is left (a cut file). */
function anyChunk(b: Uint8Array, r: Rand): Chunk | undefined {
  const cs = pngChunks(b);
  return cs.length ? pick(r, cs) : undefined;
}

function inChunk(b: Uint8Array, r: Rand, type: string | undefined, edit: (c: Chunk) => void): Uint8Array | undefined {
  const cs = pngChunks(b).filter((c) => !type || c.type === type);
  if (!cs.length) return undefined;
  const c = pick(r, cs);
  edit(c);
  return fixCrc(b, c, r);
}

const PNG: Record<string, Mutation> = {
  'png-ihdr-size': (b, r) => inChunk(b, r, 'IHDR', (c) => view(b).setUint32(c.at + 8 + 4 * int(r, 2), pick(r, [0, 1, 2, 0x7fffffff, 0x80000000, 100000, edges32(r)]))),
  'png-ihdr-depth': (b, r) => inChunk(b, r, 'IHDR', (c) => (b[c.at + 16] = pick(r, [0, 1, 2, 3, 4, 8, 16, 32, int(r, 256)]))),
  'png-ihdr-colour': (b, r) => inChunk(b, r, 'IHDR', (c) => (b[c.at + 17] = pick(r, [0, 1, 2, 3, 4, 5, 6, 7, int(r, 256)]))),
  'png-ihdr-methods': (b, r) => inChunk(b, r, 'IHDR', (c) => (b[c.at + 18 + int(r, 3)] = pick(r, [0, 1, 2, 255]))),
  'png-chunk-length': (b, r) => {
    const c = anyChunk(b, r);
    if (!c) return undefined;
    view(b).setUint32(c.at, pick(r, [c.len + 1, c.len - 1, 0, c.len * 2, 0x7fffffff, 0xffffffff, edges32(r)]) >>> 0);
    return b;
  },
  'png-chunk-crc': (b, r) => {
    const c = anyChunk(b, r);
    if (!c || c.at + 12 + c.len > b.length) return undefined;
    b[c.at + 8 + c.len + int(r, 4)] ^= 1 << int(r, 8);
    return b;
  },
  'png-idat-byte': (b, r) => inChunk(b, r, 'IDAT', (c) => {
    if (c.len) b[c.at + 8 + int(r, c.len)] ^= 1 << int(r, 8);
  }),
  'png-plte': (b, r) => inChunk(b, r, 'PLTE', (c) => {
    if (c.len) b[c.at + 8 + int(r, c.len)] = int(r, 256);
  }),
  'png-drop-chunk': (b, r) => {
    const c = anyChunk(b, r);
    return c && splice(b, c.at, 12 + c.len, []);
  },
  'png-repeat-chunk': (b, r) => {
    const cs = pngChunks(b);
    if (!cs.length) return undefined;
    const c = pick(r, cs);
    const to = pick(r, cs).at;
    return splice(b, to, 0, b.slice(c.at, c.at + 12 + c.len));
  },
  'png-signature': (b, r) => {
    b[int(r, 8)] ^= 1 << int(r, 8);
    return b;
  },
  truncate,
};

// ---------- TIFF: header (byte order, 42, first IFD offset), IFDs of 12-byte entries (tag, type, count, value) ----------

interface Entry { at: number; tag: number }

function tiffEntries(b: Uint8Array): { le: boolean; ifd: number; entries: Entry[] } | undefined {
  if (b.length < 8) return undefined;
  const le = b[0] === 0x49;
  const v = view(b);
  const ifd = v.getUint32(4, le);
  if (ifd + 2 > b.length) return { le, ifd, entries: [] };
  const n = v.getUint16(ifd, le);
  const entries: Entry[] = [];
  for (let i = 0; i < n && ifd + 2 + 12 * i + 12 <= b.length; i++) entries.push({ at: ifd + 2 + 12 * i, tag: v.getUint16(ifd + 2 + 12 * i, le) });
  return { le, ifd, entries };
}

/** The tags a TIFF reader sizes and locates its pixels by: width, length, bits per sample, compression, photometric, strip offsets, samples per pixel, rows per strip, strip byte counts, planar configuration, predictor, tile width/length/offsets/byte counts, sample format. */
const TIFF_TAGS = [256, 257, 258, 259, 262, 273, 277, 278, 279, 284, 317, 322, 323, 324, 325, 339];

/** An entry whose tag is one a reader sizes or locates its pixels by (any entry, a time in four). */
function tiffEntry(b: Uint8Array, r: Rand): { le: boolean; e: Entry } | undefined {
  const t = tiffEntries(b);
  if (!t?.entries.length) return undefined;
  const key = t.entries.filter((e) => TIFF_TAGS.includes(e.tag));
  return { le: t.le, e: pick(r, key.length && r() < 0.75 ? key : t.entries) };
}

const TIFF: Record<string, Mutation> = {
  'tiff-ifd-offset': (b, r) => {
    if (b.length < 8) return undefined;
    view(b).setUint32(4, pick(r, [0, 1, 8, b.length, b.length - 2, 0xffffffff, int(r, b.length)]), b[0] === 0x49);
    return b;
  },
  'tiff-entry-count': (b, r) => {
    const t = tiffEntries(b);
    if (!t || t.ifd + 2 > b.length) return undefined;
    view(b).setUint16(t.ifd, pick(r, [0, 1, t.entries.length - 1, t.entries.length + 1, 0xffff, int(r, 0x10000)]) & 0xffff, t.le);
    return b;
  },
  'tiff-entry-value': (b, r) => {
    const x = tiffEntry(b, r);
    if (!x) return undefined;
    const v = view(b);
    // A SHORT's value sits in the first two bytes of the field; a LONG fills it.
    if (v.getUint16(x.e.at + 2, x.le) === 3 && r() < 0.7) v.setUint16(x.e.at + 8, edges16(r), x.le);
    else v.setUint32(x.e.at + 8, edges32(r), x.le);
    return b;
  },
  'tiff-entry-count-field': (b, r) => {
    const x = tiffEntry(b, r);
    if (!x) return undefined;
    view(b).setUint32(x.e.at + 4, pick(r, [0, 2, 3, 4, 0xffff, 0x7fffffff, 0xffffffff, edges32(r)]), x.le);
    return b;
  },
  'tiff-entry-type': (b, r) => {
    const x = tiffEntry(b, r);
    if (!x) return undefined;
    view(b).setUint16(x.e.at + 2, pick(r, [0, 1, 2, 3, 4, 5, 7, 11, 12, 13, 16, 99]), x.le);
    return b;
  },
  'tiff-entry-tag': (b, r) => {
    const x = tiffEntry(b, r);
    if (!x) return undefined;
    view(b).setUint16(x.e.at, pick(r, TIFF_TAGS), x.le);
    return b;
  },
  'tiff-data-byte': (b, r) => {
    const t = tiffEntries(b);
    const end = t ? Math.min(t.ifd, b.length) : b.length;
    if (end <= 8) return undefined;
    b[8 + int(r, end - 8)] ^= 1 << int(r, 8);
    return b;
  },
  truncate,
};

// ---------- NIfTI: the header's fields (NIfTI-1: 348 bytes; NIfTI-2: 540), the voxels after vox_offset; gzip around it ----------

/** Offsets of a header's fields: NIfTI-1 (int16 dims, float32 scaling) or NIfTI-2 (int64 dims, float64). */
const N1 = { dim: 40, dimBytes: 2, datatype: 70, bitpix: 72, pixdim: 76, voxOffset: 108, slope: 112, inter: 116, float: 4, qform: 252, sform: 254, magic: 344 };
const N2 = { dim: 16, dimBytes: 8, datatype: 12, bitpix: 14, pixdim: 104, voxOffset: 168, slope: 176, inter: 184, float: 8, qform: 344, sform: 348, magic: 4 };
const niftiLayout = (b: Uint8Array) => (view(b).getInt32(0, true) === 540 ? N2 : N1);

function setFloat(b: Uint8Array, at: number, bytes: number, x: number): void {
  if (bytes === 8) view(b).setFloat64(at, x, true);
  else view(b).setFloat32(at, x, true);
}

function setDim(b: Uint8Array, i: number, x: number): void {
  const l = niftiLayout(b);
  if (l.dimBytes === 8) view(b).setBigInt64(l.dim + 8 * i, BigInt(x), true);
  else view(b).setInt16(l.dim + 2 * i, x, true);
}

/** Whether the whole header is there to change (NIfTI-2's is 540 bytes). */
const header = (b: Uint8Array) => b.length >= 348 && (niftiLayout(b) === N1 || b.length >= 540);
const NIFTI_HEADER: Record<string, Mutation> = {
  'nifti-dim': (b, r) => {
    if (!header(b)) return undefined;
    setDim(b, 1 + int(r, 7), pick(r, [0, -1, 1, 2, 3, 255, 32767, -32768, 1 + int(r, 64)]));
    return b;
  },
  'nifti-rank': (b, r) => {
    if (!header(b)) return undefined;
    setDim(b, 0, pick(r, [0, 1, 2, 3, 4, 5, 7, 8, -1, 255]));
    return b;
  },
  'nifti-datatype': (b, r) => {
    if (!header(b)) return undefined;
    const l = niftiLayout(b);
    view(b).setInt16(pick(r, [l.datatype, l.bitpix]), pick(r, [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 1280, 1536, 2304, int(r, 0x10000) - 0x8000]), true);
    return b;
  },
  'nifti-vox-offset': (b, r) => {
    if (!header(b)) return undefined;
    const l = niftiLayout(b);
    const x = pick(r, [0, 1, 348, 351, 353, 540, 1e9, -352, 352.5, NaN, Infinity, b.length]);
    if (l === N2) view(b).setBigInt64(l.voxOffset, BigInt(Number.isFinite(x) ? Math.trunc(x) : -1), true);
    else view(b).setFloat32(l.voxOffset, x, true);
    return b;
  },
  'nifti-scaling': (b, r) => {
    if (!header(b)) return undefined;
    const l = niftiLayout(b);
    setFloat(b, pick(r, [l.slope, l.inter]), l.float, pick(r, [0, 1, -1, 0.5, NaN, Infinity, -Infinity, 1e38, 3e38, 1e-40, 65536]));
    return b;
  },
  'nifti-geometry': (b, r) => {
    if (!header(b)) return undefined;
    const l = niftiLayout(b);
    if (r() < 0.5) view(b).setInt16(pick(r, [l.qform, l.sform]), pick(r, [0, 1, 2, 3, 4, 5, -1]), true);
    else setFloat(b, l.pixdim + l.float * int(r, 8), l.float, pick(r, [0, -1, NaN, Infinity, 1e-30, 1e30]));
    return b;
  },
  'nifti-sizeof-hdr': (b, r) => {
    if (!header(b)) return undefined;
    view(b).setInt32(0, pick(r, [0, 348, 540, 0x5c010000, 0x1c020000, -1, int(r, 1000)]), true);
    return b;
  },
  'nifti-magic': (b, r) => {
    if (!header(b)) return undefined;
    b.set(pick(r, [[0x6e, 0x69, 0x31, 0], [0x6e, 0x2b, 0x31, 0], [0x6e, 0x2b, 0x32, 0], [0, 0, 0, 0]]), niftiLayout(b).magic);
    return b;
  },
  truncate,
};

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** A header mutation through a gzip stream: inflated, changed, deflated again (the stream itself stays sound). */
const throughGzip = (m: Mutation): Mutation => (b, r) => {
  if (!isGzip(b)) return m(b, r);
  let inner: Uint8Array;
  try {
    inner = gunzipSync(b);
  } catch {
    return undefined;
  }
  const out = m(Uint8Array.from(inner), r);
  return out && gzipSync(out, { level: 1 });
};

const NIFTI: Record<string, Mutation> = {
  ...Object.fromEntries(Object.entries(NIFTI_HEADER).map(([k, m]) => [k, throughGzip(m)])),
  'gzip-stream': (b, r) => (isGzip(b) ? (r() < 0.5 ? truncate(b, r) : flipByte(b, r)) : undefined),
};

// ---------- DICOM: 128-byte preamble, "DICM", explicit-VR little-endian file meta, then the data set ----------

interface Element { at: number; tag: number; vr: string; lenAt: number; lenBytes: 2 | 4; value: number; len: number }

const LONG_VR = new Set(['OB', 'OD', 'OF', 'OL', 'OW', 'SQ', 'UC', 'UN', 'UR', 'UT', 'OV']);

/** The elements of a DICOM file, walked as the writer wrote them (the meta group explicit LE; the rest by its syntax). */
function dicomElements(b: Uint8Array): Element[] {
  const out: Element[] = [];
  const v = view(b);
  let syntax = '1.2.840.10008.1.2.1';
  for (let at = 132; at + 8 <= b.length;) {
    const meta = v.getUint16(at, true) === 2;
    const le = meta || syntax !== '1.2.840.10008.1.2.2';
    const implicit = !meta && syntax === '1.2.840.10008.1.2';
    const tag = (v.getUint16(at, le) << 16) | v.getUint16(at + 2, le);
    const vr = implicit ? '' : String.fromCharCode(b[at + 4], b[at + 5]);
    const long = implicit || LONG_VR.has(vr);
    const lenAt = implicit ? at + 4 : long ? at + 8 : at + 6;
    if (lenAt + (long ? 4 : 2) > b.length) break;
    const len = long ? v.getUint32(lenAt, le) : v.getUint16(lenAt, le);
    const value = lenAt + (long ? 4 : 2);
    out.push({ at, tag: tag >>> 0, vr, lenAt, lenBytes: long ? 4 : 2, value, len });
    if (tag >>> 0 === 0x00020010) syntax = String.fromCharCode(...b.subarray(value, value + len)).replace(/[\0 ]+$/, '');
    if (len === 0xffffffff || value + len > b.length) break;
    at = value + len;
  }
  return out;
}

/** Rows, columns, bits allocated/stored, high bit, pixel representation, samples per pixel, frames, rescale slope/intercept, transfer syntax, pixel data. */
const DICOM_TAGS = [0x00280010, 0x00280011, 0x00280100, 0x00280101, 0x00280102, 0x00280103, 0x00280002, 0x00280008, 0x00281053, 0x00281052, 0x00020010, 0x7fe00010];
const SYNTAXES = ['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2', '1.2.840.10008.1.2.1.99', '1.2.840.10008.1.2.4.50', '1.2.840.10008.1.2.5', '1.2.840.10008.1.2.4.90', 'garbage'];
const DS = ['0', '-1', '1', '0.5', '1e39', 'NaN', 'abc', '', '1\\2', ' 2 ', '-1024'];

function dicomElement(b: Uint8Array, r: Rand): Element | undefined {
  const all = dicomElements(b);
  const key = all.filter((e) => DICOM_TAGS.includes(e.tag));
  return all.length ? pick(r, key.length && r() < 0.8 ? key : all) : undefined;
}

/** An element's value replaced by `bytes`, its length field set to theirs (padded to even, as DICOM requires). */
function replaceValue(b: Uint8Array, e: Element, bytes: number[]): Uint8Array {
  const even = bytes.length % 2 ? [...bytes, 0x20] : bytes;
  const out = splice(b, e.value, Math.min(e.len, b.length - e.value), even);
  const le = !(e.tag >>> 16 !== 2 && dicomElements(b).some((x) => x.tag === 0x00020010 && /1\.2\.840\.10008\.1\.2\.2\b/.test(String.fromCharCode(...b.subarray(x.value, x.value + x.len)))));
  if (e.lenBytes === 4) view(out).setUint32(e.lenAt, even.length, le);
  else view(out).setUint16(e.lenAt, even.length, le);
  return out;
}

const ascii = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));

const DICOM: Record<string, Mutation> = {
  'dicom-us-value': (b, r) => {
    const e = dicomElement(b, r);
    if (!e || e.len !== 2) return undefined;
    b[e.value] = edges16(r) & 255;
    b[e.value + 1] = r() < 0.5 ? 0 : int(r, 256);
    return b;
  },
  'dicom-ds-value': (b, r) => {
    const es = dicomElements(b).filter((e) => e.tag === 0x00281053 || e.tag === 0x00281052 || e.tag === 0x00280008);
    return es.length ? replaceValue(b, pick(r, es), ascii(pick(r, DS))) : undefined;
  },
  'dicom-length': (b, r) => {
    const e = dicomElement(b, r);
    if (!e) return undefined;
    const x = pick(r, [0, 1, e.len + 1, e.len - 1, e.len + 2, e.len * 2, 0xffff, 0xffffffff, edges32(r)]);
    if (e.lenBytes === 4) view(b).setUint32(e.lenAt, x >>> 0, true);
    else view(b).setUint16(e.lenAt, x & 0xffff, true);
    return b;
  },
  'dicom-vr': (b, r) => {
    const e = dicomElement(b, r);
    if (!e?.vr) return undefined;
    b.set(ascii(pick(r, ['US', 'SS', 'OB', 'OW', 'UN', 'SQ', 'DS', 'UL', 'XX'])), e.at + 4);
    return b;
  },
  'dicom-syntax': (b, r) => {
    const e = dicomElements(b).find((x) => x.tag === 0x00020010);
    return e ? replaceValue(b, e, ascii(pick(r, SYNTAXES))) : undefined;
  },
  'dicom-pixel-byte': (b, r) => {
    const e = dicomElements(b).find((x) => x.tag === 0x7fe00010);
    if (!e || !e.len || e.value + e.len > b.length) return undefined;
    b[e.value + int(r, e.len)] ^= 1 << int(r, 8);
    return b;
  },
  'dicom-drop': (b, r) => {
    const e = dicomElement(b, r);
    return e ? splice(b, e.at, e.value + e.len - e.at, []) : undefined;
  },
  'dicom-preamble': (b, r) => {
    b[128 + int(r, 4)] ^= 1 << int(r, 8);
    return b;
  },
  truncate,
};

// ---------- .npy: magic, version, header length, a Python dict literal, the data ----------

function npyHeader(b: Uint8Array): { start: number; len: number; text: string } | undefined {
  if (b.length < 12) return undefined;
  const major = b[6];
  const start = major === 1 ? 10 : 12;
  const len = major === 1 ? view(b).getUint16(8, true) : view(b).getUint32(8, true);
  if (start + len > b.length) return undefined;
  return { start, len, text: new TextDecoder('latin1').decode(b.subarray(start, start + len)) };
}

/** The header rewritten by `edit` (its length field set again, so the reader reaches the damaged dict). */
function editHeader(b: Uint8Array, edit: (t: string) => string): Uint8Array | undefined {
  const h = npyHeader(b);
  if (!h) return undefined;
  const text = edit(h.text);
  const out = splice(b, h.start, h.len, ascii(text));
  if (h.start === 10) view(out).setUint16(8, Math.min(text.length, 0xffff), true);
  else view(out).setUint32(8, text.length, true);
  return out;
}

const SHAPES = ['(0, 5)', '(5, 0)', '(-1, 28)', '(20,)', '(20, 28, 1, 1)', '(20.0, 28)', '(1e3, 2)', '(99999999999, 99999999999)', '(4294967296, 1)', '(20, 28, )', '()', '(28, 20)', '(10, 56)', '(2, 10, 28)', '(20 28)', '[20, 28]', '(0x14, 28)', '(True, 28)'];
const DESCRS = ['|u1', '<u1', '>u1', '<u2', '>u2', '<i2', '<f4', '>f4', '<f8', '|b1', '<f2', '<c8', 'O', 'u1', '<U4', '|V4', "<u2', 'x': '<f4"];

const NPY: Record<string, Mutation> = {
  'npy-shape': (b, r) => editHeader(b, (t) => t.replace(/'shape'\s*:\s*\([^)]*\)/, `'shape': ${pick(r, SHAPES)}`)),
  'npy-descr': (b, r) => editHeader(b, (t) => t.replace(/'descr'\s*:\s*'[^']*'/, `'descr': '${pick(r, DESCRS)}'`)),
  'npy-fortran': (b, r) => editHeader(b, (t) => t.replace(/True|False/, pick(r, ['True', 'False', 'true', '1', 'None']))),
  'npy-dict': (b, r) => editHeader(b, (t) => pick(r, [
    (s: string) => s.replace(/'descr'[^,]*,/, ''),
    (s: string) => s.replace('{', "{'shape': (1, 1), "),
    (s: string) => s.replace('{', "{'extra': 1, "),
    (s: string) => s.replace('}', ''),
    (s: string) => s.replace(/\n$/, ' '),
    (s: string) => s.replace(/'/g, '"'),
    (s: string) => `${s.slice(0, int(r, s.length))}${String.fromCharCode(int(r, 256))}${s.slice(int(r, s.length))}`,
  ])(t)),
  'npy-version': (b, r) => {
    if (b.length < 8) return undefined;
    b[6 + int(r, 2)] = pick(r, [0, 1, 2, 3, 4, 255]);
    return b;
  },
  'npy-header-length': (b, r) => {
    if (b.length < 12) return undefined;
    view(b).setUint16(8, pick(r, [0, 1, 10, 0xffff, int(r, 0x10000)]), true);
    return b;
  },
  'npy-extra-data': (b, r) => Uint8Array.from([...b, ...Array.from({ length: 1 + int(r, 16) }, () => int(r, 256))]),
  truncate,
};

/** The mutations of each format, by the extension of its files. */
export const FORMAT_MUTATIONS: Record<string, Record<string, Mutation>> = {
  '.png': PNG,
  '.tif': TIFF,
  '.nii': NIFTI,
  '.nii.gz': NIFTI,
  '.dcm': DICOM,
  '.npy': NPY,
};

/** A mutated copy of `file`: 1–3 of its format's mutations drawn from `r`, and their names. */
export const mutateFormat = (file: Uint8Array, ext: string, r: Rand): { bytes: Uint8Array; applied: string[] } => mutate(file, r, FORMAT_MUTATIONS[ext]);

import { UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Image, type Shape } from '../core/image.js';

/**
 * NumPy .npy (format versions 1–3), the interchange format with Python tools: uint8, uint16 and float32,
 * C order, 2D [h, w] or 3D [d, h, w]. Other dtypes or Fortran order are refused with a typed error.
 */
const DESCR: Record<string, Dtype> = { '|u1': 'uint8', '<u1': 'uint8', '<u2': 'uint16', '<f4': 'float32' };
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

/**
 * The header's dict as NumPy writes it and reads it (ast.literal_eval, then exactly the keys descr, fortran_order and
 * shape, shape a tuple of non-negative ints): anything else is refused — a lenient match read damaged headers (a
 * missing brace, an extra key, a float or negative dimension) that numpy.load refuses, or decoded them to other data.
 */
const ENTRY = String.raw`'(descr|fortran_order|shape)'\s*:\s*('[^'\\]*'|True|False|\(\s*(?:\d+\s*,\s*)*(?:\d+\s*,?\s*)?\))`;
const HEADER = new RegExp(String.raw`^\{\s*${ENTRY}\s*,\s*${ENTRY}\s*,\s*${ENTRY}\s*,?\s*\}\s*$`);

function parseHeader(header: string, name: string): { descr: string; fortran: string; dims: number[] } {
  const m = HEADER.exec(header);
  if (!m) throw new UnsupportedFormatError(`${name}: unreadable .npy header (not the dict of descr, fortran_order and shape numpy writes)`);
  const entries = new Map([[m[1], m[2]], [m[3], m[4]], [m[5], m[6]]]);
  const descr = entries.get('descr'), fortran = entries.get('fortran_order'), shape = entries.get('shape');
  if (entries.size !== 3 || !descr?.startsWith("'") || !fortran || fortran.startsWith("'") || !shape?.startsWith('(')) {
    throw new UnsupportedFormatError(`${name}: unreadable .npy header (descr, fortran_order and shape each once, with their types)`);
  }
  const dims = shape.slice(1, -1).split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  return { descr: descr.slice(1, -1), fortran, dims };
}

export function decodeNpy(buf: Uint8Array, name = 'input'): Image {
  if (buf.length < 10 || MAGIC.some((b, i) => buf[i] !== b)) throw new UnsupportedFormatError(`${name} is not a .npy file (bad magic)`);
  const [major, minor] = [buf[6], buf[7]];
  // numpy.load reads format versions 1.0, 2.0 and 3.0 only; another's header length may sit elsewhere.
  if (major < 1 || major > 3 || minor !== 0) throw new UnsupportedFormatError(`${name}: .npy format version ${major}.${minor} (numpy writes 1.0, 2.0 and 3.0)`);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const start = major === 1 ? 10 : 12;
  if (buf.length < start) throw new UnsupportedFormatError(`${name}: truncated .npy header`);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  if (start + headerLen > buf.length) throw new UnsupportedFormatError(`${name}: truncated .npy header`);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(buf.subarray(start, start + headerLen));
  const { descr, fortran, dims } = parseHeader(header, name);
  const dtype = DESCR[descr];
  if (!dtype) throw new UnsupportedFormatError(`${name}: .npy dtype '${descr}' is not supported (uint8, little-endian uint16 or float32)`);
  if (fortran === 'True') throw new UnsupportedFormatError(`${name}: Fortran-ordered .npy is not supported; save with np.ascontiguousarray`);
  if (dims.length !== 2 && dims.length !== 3) throw new UnsupportedFormatError(`${name}: .npy shape (${dims.join(', ')}) is not 2D or 3D`);
  const n = dims.reduce((a, b) => a * b, 1);
  const off = start + headerLen;
  const bytes = n * { uint8: 1, uint16: 2, float32: 4 }[dtype];
  // Checked before allocating: a header may claim far more data than the file holds (or than memory can).
  if (!Number.isSafeInteger(bytes) || buf.length - off < bytes) throw new UnsupportedFormatError(`${name}: .npy data is truncated (${buf.length - off} of ${bytes} bytes the header declares)`);
  const data = allocPixels(dtype, n);
  new Uint8Array(data.buffer).set(buf.subarray(off, off + bytes));
  return { data, shape: dims as Shape, channels: 1, dtype };
}

export function encodeNpy(img: Image): Uint8Array {
  const descr = img.dtype === 'uint8' ? '|u1' : img.dtype === 'uint16' ? '<u2' : '<f4';
  const dims = img.channels === 1 ? img.shape : [...img.shape, img.channels];
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header = header.padEnd(header.length + ((64 - (total % 64)) % 64), ' ') + '\n';
  const out = new Uint8Array(10 + header.length + img.data.byteLength);
  out.set(MAGIC);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength), 10 + header.length);
  return out;
}

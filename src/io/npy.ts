import { UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Image, type Shape } from '../core/image.js';

/**
 * NumPy .npy (format versions 1–3), the interchange format with Python tools: uint8, uint16 and float32,
 * C order, 2D [h, w] or 3D [d, h, w]. Other dtypes or Fortran order are refused with a typed error.
 */
const DESCR: Record<string, Dtype> = { '|u1': 'uint8', '<u1': 'uint8', '<u2': 'uint16', '<f4': 'float32' };
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

export function decodeNpy(buf: Uint8Array, name = 'input'): Image {
  if (buf.length < 10 || MAGIC.some((b, i) => buf[i] !== b)) throw new UnsupportedFormatError(`${name} is not a .npy file (bad magic)`);
  const major = buf[6];
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  if (start + headerLen > buf.length) throw new UnsupportedFormatError(`${name}: truncated .npy header`);
  const header = new TextDecoder().decode(buf.subarray(start, start + headerLen));
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new UnsupportedFormatError(`${name}: unreadable .npy header`);
  const dtype = DESCR[descr];
  if (!dtype) throw new UnsupportedFormatError(`${name}: .npy dtype '${descr}' is not supported (uint8, little-endian uint16 or float32)`);
  if (fortran === 'True') throw new UnsupportedFormatError(`${name}: Fortran-ordered .npy is not supported; save with np.ascontiguousarray`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
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

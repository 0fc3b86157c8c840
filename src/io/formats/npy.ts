import { decodeNpy, encodeNpy } from '../npy.js';
import type { ImageFormat } from './format.js';
import { startsWith } from './samples.js';

/** NumPy .npy (io/npy.ts): the interchange format with Python tools, uint8/uint16/float32, 2D or 3D. */
export const npy: ImageFormat = {
  name: 'npy',
  title: 'NumPy .npy',
  holds: 'uint8, uint16, float32; 2D or 3D',
  extensions: ['.npy'],
  sniff: (bytes) => startsWith(bytes, [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]),
  byExtension: true,
  volume: 'by-shape',
  writes: { dtypes: ['uint8', 'uint16', 'float32'], volumes: true },
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: (bytes, name) => decodeNpy(bytes, name),
  encode: (img) => encodeNpy(img),
};

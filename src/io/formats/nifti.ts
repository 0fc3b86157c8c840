import { gzipSync } from 'fflate';
import { decodeNifti, encodeNiftiFile } from '../nifti.js';
import type { ImageFormat } from './format.js';

/** NIfTI's magic ("n+1\0" / "n+2\0") at byte 344 (NIfTI-1) or 4 (NIfTI-2); a gzipped file by gzip's own. */
function sniffNifti(bytes: Uint8Array): boolean {
  const magic = (at: number) => bytes[at] === 0x6e && (bytes[at + 1] === 0x2b || bytes[at + 1] === 0x69) && (bytes[at + 2] === 0x31 || bytes[at + 2] === 0x32);
  return (bytes.length > 348 && magic(344)) || (bytes.length > 540 && magic(4));
}

/**
 * NIfTI-1/2 (io/nifti.ts), gzipped or not, geometry kept. The portable reader inflates with fflate within the
 * header's declared size; Node's (io/formats/node.ts) with zlib. A .nii.gz is written gzipped (zlib level 1).
 */
export const nifti: ImageFormat = {
  name: 'nifti',
  title: 'NIfTI-1/2',
  holds: 'any dtype, 2D or 3D, voxel geometry kept',
  extensions: ['.nii', '.nii.gz'],
  sniff: sniffNifti,
  byExtension: true,
  volume: 'always',
  writes: { dtypes: ['uint8', 'uint16', 'float32'], volumes: true },
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: (bytes, name, opts) => decodeNifti(bytes, name, undefined, opts.maxVolumeBytes),
  encode: (img, opts) => (opts.gzip ? gzipSync(encodeNiftiFile(img), { level: 1 }) : encodeNiftiFile(img)),
};

import type { ImageFormat } from './format.js';

/**
 * OME-Zarr (io/zarr.ts, io/chunked.ts): a folder, not a file, read and written by path on Node, chunk by chunk
 * within a memory budget when both ends are OME-Zarr. Neither sniffed nor decoded from bytes.
 */
export const zarr: ImageFormat = {
  name: 'zarr',
  title: 'OME-Zarr (a folder)',
  holds: 'one channel, any dtype, 3D; pyramids; read chunked',
  extensions: ['.zarr'],
  byExtension: true,
  volume: 'always',
  writes: { dtypes: ['uint8', 'uint16', 'float32'], volumes: true },
  inFolders: false,
  platforms: ['node'],
};

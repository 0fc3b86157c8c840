import type { ImageFormat } from './format.js';

/** Headerless little-endian samples whose shape and dtype the caller gives (DecodeOptions.raw); Node reads them (io/volume.ts). */
export const raw: ImageFormat = {
  name: 'raw',
  title: 'raw samples',
  holds: 'uint8, uint16, float32 with a given shape (2D or 3D); read only',
  extensions: ['.raw'],
  byExtension: true,
  volume: 'by-shape',
  inFolders: false,
  platforms: ['node'],
};

/** A .raw file's layout, as readImage takes it; the CLI words it as its flags (engine/flags.ts). */
export const RAW_LAYOUT = "option `raw: { shape: [H, W] or [D, H, W], dtype: 'uint8' | 'uint16' | 'float32' }`";

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, pixelCount, type Dtype, type Image, type Shape } from '../core/image.js';
import { dicomSeries, type NamedBytes } from './dicom.js';
import { decodeNifti as decodeNiftiWith, encodeNiftiFile, type Inflater } from './nifti.js';

/**
 * Medical volumes from files, in Node: NIfTI (io/nifti.ts, gzip by zlib), DICOM files and series (io/dicom.ts,
 * a folder read here), and raw arrays. The decoding itself is browser-safe and shared with the playground.
 */

export { affineOf, geometryOf } from './nifti.js';
export { decodeDicom } from './dicom.js';

/**
 * zlib, bounded (io/nifti.ts Inflater): the head from a growing prefix of the stream, flushed without its end (so at
 * most ~1,000× the prefix is inflated); the whole stream with zlib's output limit.
 */
const zlibInflater: Inflater = {
  head(gz, n) {
    for (let prefix = 1024; ; prefix *= 4) {
      const out = gunzipSync(gz.subarray(0, prefix), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
      if (out.length >= n || prefix >= gz.length) return out;
    }
  },
  all(gz, max) {
    try {
      return gunzipSync(gz, { maxOutputLength: max });
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
      throw e;
    }
  },
};

/** A NIfTI-1 or NIfTI-2 volume (gzipped or not, inflated by zlib within its header's size): io/nifti.ts decodeNifti. */
export function decodeNifti(bytes: Uint8Array, name: string, maxBytes?: number): Image {
  return decodeNiftiWith(bytes, name, zlibInflater, maxBytes);
}

/** A NIfTI-1 single file (.nii; gzipped for .nii.gz) with the image's voxels and geometry: io/nifti.ts encodeNiftiFile. */
export function encodeNifti(img: Image, gzip: boolean): Uint8Array {
  const raw = encodeNiftiFile(img);
  return gzip ? gzipSync(raw, { level: 1 }) : raw;
}

/** A folder of DICOM slices as one float32 volume (io/dicom.ts dicomSeries; hidden files and folders skipped). */
export async function readDicomSeries(dir: string): Promise<Image> {
  const names = (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();
  const files: NamedBytes[] = [];
  for (const f of names) {
    const path = join(dir, f);
    if ((await stat(path)).isFile()) files.push({ name: path, bytes: await readFile(path) });
  }
  return dicomSeries(files, dir);
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

import type { Dtype, Image } from '../../core/image.js';
import type { FailOn } from '../jpeg.js';
import type { RawLayout } from '../volume.js';

/**
 * One image format as the registry (io/formats/index.ts) knows it, after libvips' VipsForeign and OpenCV's grfmt_*:
 * its names, how its files are recognised, what it holds, and its portable (platform-neutral, pure JavaScript)
 * codec where it has one. A platform with a faster or native codec of its own plugs it in beside
 * (io/formats/node.ts: sharp, libjpeg-turbo, zlib); the descriptor is the same everywhere.
 */
export interface ImageFormat {
  /** Short name, as the CLI's --format and encodeImage take it ('png', 'jpeg', 'nifti', …). */
  readonly name: string;
  /** The format's own name for people ("PNG", "NIfTI-1/2"). */
  readonly title: string;
  /** What the format holds, in a few words (the CLI help and docs/formats.md print it). */
  readonly holds: string;
  /** File extensions, lower case with the dot; the first is what a file of this format is written as. */
  readonly extensions: readonly string[];
  /** Further extensions read and written as this format, not advertised in the help (.jpeg, .tiff). */
  readonly aliases?: readonly string[];
  /** Whether `bytes` (a file's first bytes, or all of them) are this format's: its magic number. */
  sniff?(bytes: Uint8Array): boolean;
  /**
   * The extension alone decides (NIfTI, .npy, .raw, .dcm: a misnamed file gets that format's own error rather
   * than a guess from its content); otherwise the content's magic number decides and the extension breaks no tie.
   */
  readonly byExtension?: boolean;
  /**
   * 'always': a volume format (NIfTI, DICOM, OME-Zarr): scale-out gives each file a job of its own. 'by-shape': a
   * volume when its shape has a depth (.npy, .raw). 'never': planes only (PNG, JPEG, TIFF).
   */
  readonly volume: 'always' | 'by-shape' | 'never';
  /** What encode takes: sample types, and whether a volume of several planes fits. Absent: imgpu does not write it. */
  readonly writes?: { readonly dtypes: readonly Dtype[]; readonly volumes: boolean };
  /** Files of this format are picked up when a folder of images is read (batch mode, training). */
  readonly inFolders: boolean;
  /** Where imgpu reads (and, with `writes`, writes) it. */
  readonly platforms: readonly Platform[];
  /** The portable decoder, where there is one: runs in browsers and in Node alike. */
  readonly decode?: DecodeFn;
  /** The portable encoder, where there is one. */
  readonly encode?: EncodeFn;
}

export type Platform = 'node' | 'browser';

/** What a decoder is told: io's ReadOptions less what only the file reader needs. */
export interface DecodeOptions {
  /** Colour to one gray channel (OpenCV's weights); a decoder may do it itself (JPEG's luma), else the caller does. */
  gray?: boolean;
  /** A headerless .raw file's shape and dtype. */
  raw?: RawLayout;
  /** The most pixels a PNG/JPEG/TIFF may declare (checked from its header). */
  maxPixels?: number;
  /** How a damaged JPEG is treated (io/jpeg.ts FailOn). */
  failOn?: FailOn;
  /** The most voxel bytes a NIfTI file may declare. */
  maxVolumeBytes?: number;
  /** Where natively decoded pixels go (Node's codec workers recycle buffers). */
  alloc?: (bytes: number) => SharedArrayBuffer | ArrayBuffer;
}

/** What an encoder is told: the format's own knobs. */
export interface EncodeOptions {
  /** PNG zlib level 0–9 (IMWRITE_PNG_COMPRESSION). @default cv2.imwrite's default: level 1, Z_RLE, Sub filter */
  compression?: number;
  /** JPEG quality 1–100. @default 95 */
  quality?: number;
  /** NIfTI: gzip the file (.nii.gz). @default false */
  gzip?: boolean;
}

export type DecodeFn = (bytes: Uint8Array, name: string, opts: DecodeOptions) => Image | Promise<Image>;
export type EncodeFn = (img: Image, opts: EncodeOptions) => Uint8Array | Promise<Uint8Array>;

/** A format's decoder and encoder on one platform. */
export interface FormatCodec {
  decode?: DecodeFn;
  encode?: EncodeFn;
}

/** Every extension a format answers to: its own, then its aliases. */
export function extensionsOf(f: ImageFormat): string[] {
  return [...f.extensions, ...(f.aliases ?? [])];
}

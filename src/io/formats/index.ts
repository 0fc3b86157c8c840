// The format registry: every image format imgpu knows, one module each in this folder (docs/formats.md). Readers,
// writers, the CLI's help and --format, scale-out's volume rule and the playground read it; none lists formats of
// its own. This module and the format modules are platform-neutral (the browser entry exports decodeImage and
// encodeImage from here); Node's own codecs (sharp, libjpeg-turbo, zlib) are in node.ts beside them.
import { InvalidArgumentError, optionRef, UnsupportedFormatError } from '../../core/errors.js';
import { toGray, validateImage, type Image } from '../../core/image.js';
import { dicom } from './dicom.js';
import { extensionsOf, type DecodeOptions, type EncodeOptions, type ImageFormat, type Platform } from './format.js';
import { jpeg } from './jpeg.js';
import { nifti } from './nifti.js';
import { npy } from './npy.js';
import { png } from './png.js';
import { raw } from './raw.js';
import { tiff } from './tiff.js';
import { avif, gif, webp } from './vips.js';
import { zarr } from './zarr.js';

export { extensionsOf, type DecodeOptions, type EncodeOptions, type ImageFormat, type Platform } from './format.js';
export { RAW_LAYOUT } from './raw.js';

/** The registered formats, in the order the help and docs list them. */
export const FORMATS: readonly ImageFormat[] = [png, jpeg, tiff, npy, nifti, dicom, zarr, raw, webp, gif, avif];

/** Every extension with its format, the longest first (so .nii.gz wins over a shorter match). */
const BY_EXTENSION: readonly [string, ImageFormat][] = FORMATS.flatMap((f) => extensionsOf(f).map((e) => [e, f] as [string, ImageFormat]))
  .sort((a, b) => b[0].length - a[0].length);

/**
 * The order magic numbers are tried in: formats that own their extension first (their magic numbers are the most
 * specific: a DICOM file's "DICM" follows a preamble that may hold a TIFF header), then the rasters.
 */
const SNIFF_ORDER: readonly ImageFormat[] = [...FORMATS.filter((f) => f.byExtension), ...FORMATS.filter((f) => !f.byExtension)];

/** The format a file name's extension names (case-insensitive), or undefined. */
export function formatByExtension(name: string): ImageFormat | undefined {
  const lower = name.toLowerCase().replace(/[/\\]+$/, '');
  return BY_EXTENSION.find(([e]) => lower.endsWith(e))?.[1];
}

/** The format whose magic number `bytes` start with, or undefined. */
export function sniffFormat(bytes: Uint8Array): ImageFormat | undefined {
  return SNIFF_ORDER.find((f) => f.sniff?.(bytes));
}

/** What imgpu reads, in a few words for an error message: the extensions of every registered format. */
function knownExtensions(): string {
  return FORMATS.flatMap((f) => f.extensions).join(' ');
}

/**
 * The format of a file: its extension's where that format owns its extension (NIfTI, .npy, .raw, DICOM), else its
 * content's magic number, else its extension's; an UnsupportedFormatError naming what imgpu reads otherwise.
 */
export function formatOfFile(name: string, bytes: Uint8Array): ImageFormat {
  const byExt = formatByExtension(name);
  if (byExt?.byExtension) return byExt;
  const found = sniffFormat(bytes) ?? byExt;
  if (found) return found;
  throw new UnsupportedFormatError(`${name} is not a readable image: neither its extension nor its content is a format imgpu reads (${knownExtensions()})`);
}

/**
 * A format by its name or one of its extensions, with or without the dot ('png', '.tif', 'nii.gz'), or an
 * InvalidArgumentError listing them.
 */
export function formatNamed(nameOrExtension: string): ImageFormat {
  const key = nameOrExtension.toLowerCase();
  const dotted = key.startsWith('.') ? key : `.${key}`;
  const f = FORMATS.find((x) => x.name === key || extensionsOf(x).includes(dotted));
  if (!f) throw new InvalidArgumentError(`unknown image format '${nameOrExtension}': one of ${FORMATS.map((x) => x.name).join(', ')}`);
  return f;
}

/** Extensions of the formats imgpu writes on `platform` (files, not folders), each format's own then its aliases. */
export function writableExtensions(platform: Platform = 'node', advertised = false): string[] {
  return FORMATS.filter((f) => f.writes && f.platforms.includes(platform) && f !== zarr)
    .flatMap((f) => (advertised ? [...f.extensions] : extensionsOf(f)));
}

/** Extensions of the image files a folder is read for (batch mode, training). */
export function folderExtensions(): string[] {
  return FORMATS.filter((f) => f.inFolders).flatMap(extensionsOf);
}

/** Scale-out's volume rule: a file of a volume format (NIfTI, DICOM, OME-Zarr) is a job of its own. */
export function isVolumeFile(path: string): boolean {
  return formatByExtension(path)?.volume === 'always';
}

/**
 * Checks, before any work, that `fmt` (written as `ext`) holds an image of this shape and dtype: a typed error
 * otherwise (a volume or float32 as PNG/JPEG/TIFF, 16-bit as JPEG), naming what would hold it.
 */
export function checkHolds(fmt: ImageFormat, ext: string, img: Pick<Image, 'shape' | 'dtype'>): void {
  const w = fmt.writes;
  if (!w) throw new UnsupportedFormatError(`cannot write '${ext}': imgpu reads ${fmt.title} but does not write it`);
  if (!w.volumes && img.shape.length === 3 && img.shape[0] !== 1) throw new InvalidArgumentError(`a ${img.shape.join('×')} volume cannot be written as ${ext}: use .nii.gz or .npy`);
  if (w.dtypes.includes(img.dtype)) return;
  if (img.dtype === 'float32') throw new UnsupportedFormatError(`float32 images cannot be written as ${ext}: use .npy, .nii.gz, or filter with ${optionRef('saturate')} for 8/16-bit input`);
  throw new UnsupportedFormatError(`${fmt.title} holds 8-bit samples only: write 16-bit images as .png or .tif`);
}

/** decodeImage's options: a decoder's, and what names the format. */
export interface DecodeImageOptions extends DecodeOptions {
  /** The file's name: its extension names the format where the content does not, and errors name it. @default 'image' */
  name?: string;
  /** The format by name or extension ('png', '.npy'), overriding the name and the content. */
  format?: string;
}

/**
 * An image from a file's bytes, with the format's portable decoder: PNG 8/16-bit (fast-png), TIFF 8/16-bit (tiff),
 * .npy, NIfTI (fflate), a DICOM slice; JPEG by the browser's decoder where there is one. The format from
 * `opts.format`, else the name's extension and the content (formatOfFile). Gray+alpha drops alpha; `gray` converts
 * colour as OpenCV does. Node's readImage reads more (sharp, libjpeg-turbo, DICOM series, .raw, OME-Zarr).
 */
export async function decodeImage(bytes: Uint8Array, opts: DecodeImageOptions = {}): Promise<Image> {
  const name = opts.name ?? 'image';
  const fmt = opts.format ? formatNamed(opts.format) : formatOfFile(name, bytes);
  if (!fmt.decode) throw new UnsupportedFormatError(`${name}: ${fmt.title} is read by Node's readImage only (${fmt.platforms.join(', ')})`);
  const img = await fmt.decode(bytes, name, opts);
  validateImage(img, name);
  return opts.gray ? toGray(img) : img;
}

/**
 * A file's bytes of `img` in `format` (a name or extension: 'png', 'npy', 'nii.gz'), with the format's portable
 * encoder: PNG 8/16-bit, .npy, NIfTI. Checked first to hold the image (checkHolds).
 */
export async function encodeImage(img: Image, format: string, opts: EncodeOptions = {}): Promise<Uint8Array> {
  const fmt = formatNamed(format);
  const ext = format.startsWith('.') ? format.toLowerCase() : `.${format.toLowerCase()}`;
  validateImage(img);
  checkHolds(fmt, extensionsOf(fmt).includes(ext) ? ext : fmt.extensions[0], img);
  if (!fmt.encode) throw new UnsupportedFormatError(`${fmt.title} is written by Node's writeImage only`);
  return fmt.encode(img, { ...opts, gzip: opts.gzip ?? ext === '.nii.gz' });
}

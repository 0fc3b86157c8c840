import { access, constants, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { extname } from 'node:path';
import { FileAccessError, InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import { interleavePlanes, toGray, validateImage, type Image } from '../core/image.js';
import { checkHolds, folderExtensions, formatByExtension, formatOfFile, writableExtensions, type ImageFormat } from './formats/index.js';
import { nodeCodec } from './formats/node.js';
import { zarr as zarrFormat } from './formats/zarr.js';
import type { FailOn } from './jpeg.js';
import { readDicomSeries, type RawLayout } from './volume.js';
import { writeOmeZarr } from './chunked.js';
import { checkZarrWriteOptions, isZarrPath, readOmeZarr, type ZarrWriteOptions } from './zarr.js';

export { decodeNpy, encodeNpy } from './npy.js';
export { checkFailOn, FAIL_ON, type FailOn } from './jpeg.js';
export { DEFAULT_MAX_INPUT_PIXELS } from './limits.js';
export { affineOf, decodeDicom, decodeNifti, decodeRaw, encodeNifti, geometryOf, readDicomSeries, type RawLayout } from './volume.js';
export { OME_VERSIONS, ZARR_COMPRESSORS, isZarrPath, openOmeZarr, readOmeZarr, type OmeVersion, type ZarrCompressor, type ZarrWriteOptions } from './zarr.js';
export { defaultMemory, runChunked, writeOmeZarr, type ChunkedOptions, type ChunkedReport, type SlabRun } from './chunked.js';

export { decodeImage, encodeImage, FORMATS, formatByExtension, formatNamed, formatOfFile, isVolumeFile, RAW_LAYOUT, writableExtensions, type DecodeImageOptions, type ImageFormat } from './formats/index.js';

/** Formats imgpu writes, by file extension (the registry's: io/formats). */
export const WRITERS: readonly string[] = writableExtensions('node');
/** Image files a folder is read for (batch mode); DICOM series are folders of their own, given one by one. */
export const READERS: readonly string[] = folderExtensions();

/** The registered format `path` is written in (as its extension), or a typed error naming the ones imgpu writes. */
function writerFormat(path: string): { fmt: ImageFormat; ext: string } {
  const ext = formatOf(path);
  const fmt = formatByExtension(path);
  if (fmt === zarrFormat) return { fmt, ext: '.zarr' }; // a folder: an OME-Zarr (io/zarr.ts)
  if (!fmt || !WRITERS.includes(ext)) throw new UnsupportedFormatError(`cannot write '${ext || path}': use one of ${WRITERS.join(' ')}`);
  return { fmt, ext };
}

/** A path's format extension, lower case, with the double extension .nii.gz kept whole. */
export function formatOf(path: string): string {
  const lower = path.toLowerCase();
  return lower.endsWith('.nii.gz') ? '.nii.gz' : extname(lower);
}

export interface ReadOptions {
  /**
   * Convert colour to one gray channel. @default false. A JPEG gives the luma stored in the file, decoded alone
   * (bit-identical to cv2.imread(path, IMREAD_GRAYSCALE) and about twice as fast as decoding colour); other
   * formats, and JPEG when the native codec is not built, convert RGB → gray bit-identically to cv2.cvtColor.
   */
  gray?: boolean;
  /**
   * A gray JPEG as three equal channels, as cv2.imread(path, IMREAD_COLOR) returns it: what the operations taking
   * colour (filters, morphology, gamma, CLAHE) are given in the CLI and batch, so a photo's output is OpenCV's
   * 3-channel file. JPEG only: a gray PNG or TIFF is more often a mask or a measurement than a photo, and stays
   * one channel. Colour images are unchanged. Ignored with `gray`. @default false
   */
  colour?: boolean;
  /** Layout of a headerless .raw file (shape and dtype). */
  raw?: RawLayout;
  /**
   * Where natively decoded JPEG pixels go: a buffer of at least `bytes` (e.g. a recycled one, as batch mode's codec
   * workers do — a fresh 12 MB buffer per image meant page faults and address-space locking in every thread).
   * @default a new shared buffer
   */
  alloc?: (bytes: number) => SharedArrayBuffer | ArrayBuffer;
  /**
   * The most pixels a PNG/JPEG/TIFF may declare: checked from its header before decoding (ImageTooLargeError,
   * CLI exit 3). @default env IMGPU_MAX_PIXELS, else 16383 × 16383 (sharp's limitInputPixels)
   */
  maxPixels?: number;
  /**
   * A damaged JPEG: refused ('warning', the default: any libjpeg warning), refused only if truncated ('truncated',
   * 'error'), or decoded as cv2.imread decodes it ('none'); what was decoded through is in Image.warnings (io/jpeg.ts FailOn).
   */
  failOn?: FailOn;
  /**
   * The most bytes of voxel data a .nii.gz may declare: checked from its header before inflating, and the inflation
   * stopped past that size (ImageTooLargeError / UnsupportedFormatError, CLI exit 3). @default 4 GiB
   */
  maxVolumeBytes?: number;
}

/** The bytes of an image file, or a typed error (FileAccessError) naming why it cannot be read. */
export async function readImageBytes(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FileAccessError(`no such file: ${path}`);
    if (code === 'EISDIR') throw new FileAccessError(`${path} is a directory, not an image file`);
    throw new FileAccessError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/**
 * Reads PNG (8/16-bit), JPEG, TIFF (8/16-bit) — JPEG through imgpu's libjpeg-turbo codec where built (io/jpeg.ts),
 * the rest through sharp/libvips; EXIF orientation applied as cv2.imread does, ICC profiles ignored — .npy (uint8/uint16/float32, 2D or 3D), NIfTI (.nii, .nii.gz), DICOM (a file, or
 * a folder holding one series) and .raw with a given layout. Gray+alpha drops alpha; colour stays RGB(A) unless `gray`.
 */
export async function readImage(path: string, opts: ReadOptions = {}): Promise<Image> {
  if (isZarrPath(path)) return readOmeZarr(path); // an OME-Zarr's full resolution, whole (io/chunked.ts runs one in slabs)
  const info = await stat(path).catch(() => undefined);
  if (info?.isDirectory()) {
    const vol = await readDicomSeries(path);
    validateImage(vol, path);
    return vol;
  }
  return decodeImageFile(await readImageBytes(path), path, opts);
}

/** readImage of a file whose bytes were read already (readImageBytes): decoded by its extension and content. */
export async function decodeImageFile(bytes: Uint8Array, path: string, opts: ReadOptions = {}): Promise<Image> {
  // A Uint8Array in the signature: the package's declarations must compile without Node's types (test/package).
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = formatOfFile(path, buf);
  const codec = nodeCodec(format);
  if (!codec.decode) throw new UnsupportedFormatError(`${path}: imgpu does not read this format from a file's bytes`);
  const img = await codec.decode(buf, path, opts);
  validateImage(img, path);
  // A gray JPEG with `colour`: the plane as each of three channels (the GPU's twin: core/gpu/colour.ts replicateGpu).
  if (!opts.gray) return opts.colour && format.name === 'jpeg' && img.channels === 1 ? { ...img, ...interleavePlanes([img, img, img]) } : img;
  const gray = toGray(img);
  return img.warnings ? { ...gray, warnings: img.warnings } : gray;
}

/**
 * Checks, before any work, that `path` can be written: a known extension and an existing, writable folder.
 * (Whether the image's dtype suits the format is known only once the image exists: writeImage checks that.)
 */
export async function checkWritable(path: string): Promise<void> {
  writerFormat(path);
  await checkFolderWritable(path);
}

/** Checks, before any work, that the folder `path` would be written into exists and is writable (any format). */
export async function checkFolderWritable(path: string): Promise<void> {
  const dir = dirname(path);
  let info;
  try {
    info = await stat(dir);
  } catch {
    throw new FileAccessError(`cannot write ${path}: the folder ${dir} does not exist`);
  }
  if (!info.isDirectory()) throw new FileAccessError(`cannot write ${path}: ${dir} is not a folder`);
  try {
    await access(dir, constants.W_OK);
  } catch {
    throw new FileAccessError(`cannot write ${path}: the folder ${dir} is not writable`);
  }
}

/**
 * Writes `bytes` to a new file `path` in one write call (looped only on a short write): fs.promises.writeFile writes
 * in 512 KiB pieces, each a trip through libuv's pool and back to the JavaScript thread, and a batch's main thread
 * is where its pace is set (docs/jpeg.md).
 */
async function writeWhole(path: string, bytes: Uint8Array): Promise<void> {
  const fh = await open(path, 'w');
  try {
    for (let at = 0; at < bytes.length; ) at += (await fh.write(bytes, at, bytes.length - at)).bytesWritten;
  } finally {
    await fh.close();
  }
}

/**
 * Writes `bytes` to `path` atomically: into a temporary file beside it, then renamed over it, so a crash,
 * `kill -9` or a full disk never leaves a half-written output (at worst a stray hidden .tmp file is left).
 */
export async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeWhole(tmp, bytes);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new FileAccessError(`cannot write ${path}: ${(e as Error).message}`);
  }
}

export interface WriteOptions {
  /**
   * PNG zlib level 0–9, as cv2.imwrite's IMWRITE_PNG_COMPRESSION (libpng's adaptive row filters at that level).
   * @default cv2.imwrite's own default: zlib level 1, strategy Z_RLE, every row Sub-filtered — its bytes exactly
   * (docs/formats.md). Higher levels are a few percent smaller and several times slower.
   */
  compression?: number;
  /** JPEG quality 1–100. @default 95 */
  quality?: number;
  /** An OME-Zarr's layout: chunks, compressor, OME version, pyramid levels (io/zarr.ts). */
  zarr?: ZarrWriteOptions;
}

/** Checks write options (CLI --compression, --quality) before any work. */
export function checkWriteOptions(o: WriteOptions): void {
  if (o.compression !== undefined && (!Number.isInteger(o.compression) || o.compression < 0 || o.compression > 9)) throw new InvalidArgumentError(`${optionRef('compression')} must be an integer 0–9, got ${o.compression}`);
  if (o.quality !== undefined && (!Number.isInteger(o.quality) || o.quality < 1 || o.quality > 100)) throw new InvalidArgumentError(`${optionRef('quality')} must be an integer 1–100, got ${o.quality}`);
  if (o.zarr) checkZarrWriteOptions(o.zarr);
}

/** Whether a writer format (formatOf) is JPEG's. */
export const isJpegFormat = (ext: string): boolean => formatByExtension(ext)?.name === 'jpeg';

/**
 * The format `path` is written in, checked to hold an image of this shape and dtype (a typed error otherwise, before
 * any work: a volume or float32 as PNG/JPEG/TIFF, 16-bit as JPEG). Used by writeImage and, for a resident image
 * before its download or encode, by node's.
 */
export function checkFormatHolds(path: string, img: Pick<Image, 'shape' | 'dtype'>): string {
  const { fmt, ext } = writerFormat(path);
  checkHolds(fmt, ext, img); // an OME-Zarr's one channel: writeOmeZarr checks it
  return ext;
}

/**
 * Writes PNG/TIFF (8/16-bit), JPEG (8-bit; gray and RGB natively, as cv2.imwrite), .npy or NIfTI .nii/.nii.gz (any
 * dtype, 2D or 3D, geometry kept), by extension, atomically; an OME-Zarr (.zarr, a folder) chunk file by chunk file atomically.
 */
export async function writeImage(path: string, img: Image, opts: WriteOptions = {}): Promise<void> {
  checkWriteOptions(opts);
  validateImage(img);
  const ext = checkFormatHolds(path, img);
  if (ext === '.zarr') {
    await writeOmeZarr(path, img, opts.zarr);
    return;
  }
  const codec = nodeCodec(formatByExtension(path)!);
  const bytes = await codec.encode!(img, { compression: opts.compression, quality: opts.quality, gzip: ext === '.nii.gz' });
  await writeAtomically(path, bytes);
}

import { access, constants, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { extname } from 'node:path';
import type Sharp from 'sharp';
import { FileAccessError, InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, planeSize, toGray, validateImage, type Channels, type Image } from '../core/image.js';
import { decodeJpeg, encodeJpeg, isJpeg, type FailOn } from './jpeg.js';
import { checkInputPixels, maxInputPixels } from './limits.js';
import { decodeNpy, encodeNpy } from './npy.js';
import { decodeDicom, decodeNifti, decodeRaw, encodeNifti, readDicomSeries, type RawLayout } from './volume.js';
import { writeOmeZarr } from './chunked.js';
import { checkZarrWriteOptions, isZarrPath, readOmeZarr, type ZarrWriteOptions } from './zarr.js';

export { decodeNpy, encodeNpy } from './npy.js';
export { checkFailOn, FAIL_ON, type FailOn } from './jpeg.js';
export { DEFAULT_MAX_INPUT_PIXELS } from './limits.js';
export { affineOf, decodeDicom, decodeNifti, decodeRaw, encodeNifti, geometryOf, readDicomSeries, type RawLayout } from './volume.js';
export { OME_VERSIONS, ZARR_COMPRESSORS, isZarrPath, openOmeZarr, readOmeZarr, type OmeVersion, type ZarrCompressor, type ZarrWriteOptions } from './zarr.js';
export { defaultMemory, runChunked, writeOmeZarr, type ChunkedOptions, type ChunkedReport, type SlabRun } from './chunked.js';

let sharpModule: Promise<typeof Sharp> | undefined;

/**
 * sharp (libvips), loaded with the first PNG or TIFF read or written (or a JPEG the native codec leaves to it): its
 * load took ~40 ms of every command's start-up (issue 40 item 5), and JPEG, .npy and NIfTI never need it.
 */
function loadSharp(): Promise<typeof Sharp> {
  return (sharpModule ??= import('sharp').then((m) => m.default));
}

/** A .raw file's layout, as readImage takes it; the CLI words it as its flags (engine/flags.ts). */
export const RAW_LAYOUT = "option `raw: { shape: [H, W] or [D, H, W], dtype: 'uint8' | 'uint16' | 'float32' }`";

/** Formats imgpu writes, by file extension. */
export const WRITERS = ['.png', '.jpg', '.jpeg', '.tif', '.tiff', '.npy', '.nii', '.nii.gz'] as const;
/** Image files a folder is read for (batch mode); DICOM series are folders of their own, given one by one. */
export const READERS = ['.png', '.jpg', '.jpeg', '.tif', '.tiff', '.npy', '.nii', '.nii.gz', '.dcm'] as const;

/** The format `path` is written in, or a typed error naming the ones imgpu writes. */
function writerFormat(path: string): string {
  const ext = formatOf(path);
  if (ext === '.zarr') return ext; // a folder: an OME-Zarr (io/zarr.ts)
  if (!(WRITERS as readonly string[]).includes(ext)) throw new UnsupportedFormatError(`cannot write '${ext || path}': use one of ${WRITERS.join(' ')}`);
  return ext;
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
  let img: Image;
  const fmt = formatOf(path);
  if (fmt === '.npy') {
    img = decodeNpy(buf, path);
  } else if (fmt === '.nii' || fmt === '.nii.gz') {
    img = decodeNifti(buf, path, opts.maxVolumeBytes);
  } else if (fmt === '.raw') {
    if (!opts.raw) throw new InvalidArgumentError(`${path}: a .raw file needs its layout: ${RAW_LAYOUT}`);
    img = decodeRaw(buf, opts.raw, path);
  } else if (fmt === '.dcm' || (buf.length > 132 && buf.toString('latin1', 128, 132) === 'DICM')) {
    img = decodeDicom(buf, path);
  } else {
    img = (isJpeg(buf) ? decodeJpeg(buf, path, opts.gray ?? false, opts.alloc, opts.maxPixels, opts.failOn) : undefined) ?? (await decodeRaster(buf, path, opts.maxPixels));
  }
  validateImage(img, path);
  if (!opts.gray) return img;
  const gray = toGray(img);
  return img.warnings ? { ...gray, warnings: img.warnings } : gray;
}

async function decodeRaster(buf: Buffer, path: string, maxPixels?: number): Promise<Image> {
  const sharp = await loadSharp();
  let meta: Sharp.Metadata;
  try {
    meta = await sharp(buf, { limitInputPixels: false }).metadata();
  } catch (e) {
    throw new UnsupportedFormatError(`${path} is not a readable image (${(e as Error).message})`);
  }
  // metadata() reads the header only: refuse a huge image before inflating it.
  checkInputPixels(meta.width ?? 0, meta.height ?? 0, path, maxInputPixels(maxPixels));
  const sixteen = meta.depth === 'ushort' || meta.depth === 'short';
  if (meta.depth && !['uchar', 'char', 'ushort', 'short'].includes(meta.depth)) {
    throw new UnsupportedFormatError(`${path}: ${meta.depth} samples are not supported (8- or 16-bit integer images; use .npy for float)`);
  }
  let raw: { data: Buffer; info: Sharp.OutputInfo };
  try {
    // Pixels as stored, like cv2.imread: no ICC colour management; gray stays one channel (sharp would
    // otherwise expand it to sRGB); EXIF orientation applied.
    let pipeline = sharp(buf, { limitInputPixels: false, ignoreIcc: true, autoOrient: true });
    const gray = (meta.channels ?? 3) <= 2;
    if (sixteen) pipeline = pipeline.toColourspace(gray ? 'grey16' : 'rgb16');
    else if (gray) pipeline = pipeline.toColourspace('b-w');
    raw = await pipeline.raw({ depth: sixteen ? 'ushort' : 'uchar' }).toBuffer({ resolveWithObject: true });
  } catch (e) {
    throw new UnsupportedFormatError(`${path} is corrupt or truncated (${(e as Error).message})`);
  }
  const { width: w, height: h, channels: c } = raw.info;
  const dtype = sixteen ? 'uint16' : 'uint8';
  const src = sixteen ? new Uint16Array(raw.data.buffer, raw.data.byteOffset, raw.data.byteLength / 2) : new Uint8Array(raw.data.buffer, raw.data.byteOffset, raw.data.byteLength);
  // Gray+alpha keeps gray; everything else keeps its channels (1, 3 or 4).
  const outC: Channels = c === 2 ? 1 : (c as Channels);
  const data = allocPixels(dtype, w * h * outC);
  if (c === 2) {
    for (let i = 0; i < w * h; i++) data[i] = src[2 * i];
  } else {
    data.set(src);
  }
  return { data, shape: [h, w], channels: outC, dtype };
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
   * PNG zlib level 0–9. @default 1 — OpenCV's imwrite default: measured on the H100 machine, sharp took 1756 ms
   * to write an 8K PNG at level 6 and 339 ms at level 1, for files a few percent larger.
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
export const isJpegFormat = (ext: string): boolean => ext === '.jpg' || ext === '.jpeg';

/**
 * The format `path` is written in, checked to hold an image of this shape and dtype (a typed error otherwise, before
 * any work: a volume or float32 as PNG/JPEG/TIFF, 16-bit as JPEG). Used by writeImage and, for a resident image
 * before its download or encode, by node's.
 */
export function checkFormatHolds(path: string, img: Pick<Image, 'shape' | 'dtype'>): string {
  const ext = writerFormat(path);
  if (ext === '.npy' || ext === '.nii' || ext === '.nii.gz') return ext;
  if (ext === '.zarr') return ext; // one channel: writeOmeZarr checks it
  if (img.shape.length === 3 && img.shape[0] !== 1) throw new InvalidArgumentError(`a ${img.shape.join('×')} volume cannot be written as ${ext}: use .nii.gz or .npy`);
  if (img.dtype === 'float32') throw new UnsupportedFormatError(`float32 images cannot be written as ${ext}: use .npy, .nii.gz, or filter with ${optionRef('saturate')} for 8/16-bit input`);
  if (img.dtype === 'uint16' && isJpegFormat(ext)) throw new UnsupportedFormatError('JPEG holds 8-bit samples only: write 16-bit images as .png or .tif');
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
  let bytes: Uint8Array;
  if (ext === '.zarr') {
    await writeOmeZarr(path, img, opts.zarr);
    return;
  }
  if (ext === '.npy') {
    bytes = encodeNpy(img);
  } else if (ext === '.nii' || ext === '.nii.gz') {
    bytes = encodeNifti(img, ext === '.nii.gz');
  } else {
    const jpeg = isJpegFormat(ext);
    const native = jpeg ? encodeJpeg(img, opts.quality ?? 95) : undefined;
    if (native) return writeAtomically(path, native);
    const [h, w] = planeSize(img.shape);
    // sharp infers 16-bit raw samples from a Uint16Array input (a Buffer would be read as 8-bit).
    const input = img.dtype === 'uint16'
      ? new Uint16Array(img.data.buffer, img.data.byteOffset, img.data.length)
      : Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
    const sharp = await loadSharp();
    let s = sharp(input, { raw: { width: w, height: h, channels: img.channels as 1 | 3 | 4 } });
    if (img.dtype === 'uint16') s = s.toColourspace(img.channels === 1 ? 'grey16' : 'rgb16');
    else if (img.channels === 1) s = s.toColourspace('b-w');
    s = ext === '.png' ? s.png({ compressionLevel: opts.compression ?? 1 }) : jpeg ? s.jpeg({ quality: opts.quality ?? 95 }) : s.tiff({ compression: 'lzw' });
    bytes = await s.toBuffer();
  }
  await writeAtomically(path, bytes);
}

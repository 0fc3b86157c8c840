// Node's codecs for the registered formats where Node has one of its own: imgpu's libpng binding for PNG
// (formats/png-native.ts), sharp/libvips for TIFF and for PNG or JPEG where imgpu's native codecs are not built, the
// native libjpeg-turbo codec for JPEG (io/jpeg.ts), zlib for NIfTI, and .raw (io/volume.ts). Every other format
// (.npy, a DICOM slice) runs its portable codec in Node too.
import type Sharp from 'sharp';
import { InvalidArgumentError, UnsupportedFormatError } from '../../core/errors.js';
import { allocPixels, planeSize, type Channels, type Image } from '../../core/image.js';
import { decodeJpeg, encodeJpeg } from '../jpeg.js';
import { checkInputPixels, maxInputPixels } from '../limits.js';
import { checkPngChunks, isPng } from '../png.js';
import { decodeNifti, decodeRaw, encodeNifti } from '../volume.js';
import type { DecodeOptions, EncodeOptions, FormatCodec, ImageFormat } from './format.js';
import { jpeg } from './jpeg.js';
import { libpngGray } from './png.js';
import { decodePngNative, encodePngNative, nativePng, noticeSharpPng } from './png-native.js';
import { RAW_LAYOUT } from './raw.js';

let sharpModule: Promise<typeof Sharp> | undefined;

/**
 * sharp (libvips), loaded with the first file it reads or writes (PNG, TIFF, WebP…, or a JPEG the native codec leaves
 * to it): its load took ~40 ms of every command's start-up (issue 40 item 5), and JPEG, .npy and NIfTI never need it.
 */
function loadSharp(): Promise<typeof Sharp> {
  return (sharpModule ??= import('sharp').then((m) => m.default));
}

/** A PNG, TIFF (or any raster libvips reads) through sharp: samples as stored, 8 or 16 bits, like cv2.imread. */
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
  // libpng (cv2.imread) refuses a PNG whose chunk structure is damaged where libvips may decode it anyway.
  if (isPng(buf)) checkPngChunks(buf, path);
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

/** The bytes as a Buffer, without a copy (sharp takes Buffers). */
const bufferOf = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** An 8/16-bit gray, RGB or RGBA image through sharp as PNG (zlib level `compression`), JPEG or TIFF (LZW). */
async function encodeRaster(img: Image, kind: 'png' | 'jpeg' | 'tiff', opts: EncodeOptions): Promise<Uint8Array> {
  const [h, w] = planeSize(img.shape);
  // sharp infers 16-bit raw samples from a Uint16Array input (a Buffer would be read as 8-bit).
  const input = img.dtype === 'uint16'
    ? new Uint16Array(img.data.buffer, img.data.byteOffset, img.data.length)
    : Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  const sharp = await loadSharp();
  let s = sharp(input, { raw: { width: w, height: h, channels: img.channels as 1 | 3 | 4 } });
  if (img.dtype === 'uint16') s = s.toColourspace(img.channels === 1 ? 'grey16' : 'rgb16');
  else if (img.channels === 1) s = s.toColourspace('b-w');
  s = kind === 'png' ? s.png({ compressionLevel: opts.compression ?? 1 }) : kind === 'jpeg' ? s.jpeg({ quality: opts.quality ?? 95 }) : s.tiff({ compression: 'lzw' });
  return s.toBuffer();
}

/** What libvips reads (PNG, TIFF, and the read-only WebP, GIF, AVIF), decoded by sharp. */
const vipsRead: FormatCodec = { decode: (bytes, name, opts) => decodeRaster(bufferOf(bytes), name, opts.maxPixels) };

const raster = (kind: 'png' | 'tiff'): FormatCodec => ({ ...vipsRead, encode: (img, opts) => encodeRaster(img, kind, opts) });

/**
 * PNG: read and written by imgpu's libpng binding (cv2.imread's pixels, gray reads included; cv2.imwrite's bytes)
 * where built, else by sharp (said once), gray reads then converted as libpng converts a file without gamma, writes
 * the same pixels in other bytes.
 */
const pngCodec: FormatCodec = {
  decode: (bytes, name, opts) => {
    const buf = bufferOf(bytes);
    const native = isPng(buf) ? nativePng() : undefined;
    if (native) return decodePngNative(native, buf, name, opts);
    noticeSharpPng();
    return decodeRaster(buf, name, opts.maxPixels).then((img) => (opts.gray ? libpngGray(img) : img));
  },
  encode: (img, opts) => {
    const native = nativePng();
    if (native) return encodePngNative(native, img, opts.compression);
    noticeSharpPng();
    return encodeRaster(img, 'png', opts);
  },
};

/** JPEG: imgpu's libjpeg-turbo codec (cv2.imread's pixels, cv2.imwrite's bytes); sharp where it is not built or declines. */
const jpegCodec: FormatCodec = {
  decode: async (bytes, name, opts: DecodeOptions) => {
    const buf = bufferOf(bytes);
    // A .jpg that is no JPEG inside goes to sharp, whose message says what it is not.
    const native = jpeg.sniff!(buf) ? decodeJpeg(buf, name, opts.gray ?? false, opts.alloc, opts.maxPixels, opts.failOn) : undefined;
    return native ?? decodeRaster(buf, name, opts.maxPixels);
  },
  encode: (img, opts) => encodeJpeg(img, opts.quality ?? 95) ?? encodeRaster(img, 'jpeg', opts),
};

/** Node's codec of each format that has one of its own, by format name. */
const NODE_CODECS: Readonly<Record<string, FormatCodec>> = {
  png: pngCodec,
  tiff: raster('tiff'),
  jpeg: jpegCodec,
  nifti: {
    decode: (bytes, name, opts) => decodeNifti(bytes, name, opts.maxVolumeBytes),
    encode: (img, opts) => encodeNifti(img, opts.gzip ?? false),
  },
  webp: vipsRead,
  gif: vipsRead,
  avif: vipsRead,
  raw: {
    decode: (bytes, name, opts) => {
      if (!opts.raw) throw new InvalidArgumentError(`${name}: a .raw file needs its layout: ${RAW_LAYOUT}`);
      return decodeRaw(bytes, opts.raw, name);
    },
  },
};

/** The codec Node runs for `fmt`: its own where it has one, else the format's portable one. */
export function nodeCodec(fmt: ImageFormat): FormatCodec {
  return NODE_CODECS[fmt.name] ?? fmt;
}

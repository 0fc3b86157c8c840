// PNG through imgpu's libpng binding (native/png.c, built by scripts/build-native.mjs as its own module,
// dist/native/imgpu-png.node): decoded to cv2.imread's pixels, gray reads included (libpng's png_set_rgb_to_gray, as
// IMREAD_GRAYSCALE), and faster than sharp on photos (docs/formats.md); encoded to cv2.imwrite's bytes (its filter,
// zlib level and strategy). Where it is not built, PNG stays on sharp (formats/node.ts), which says so once.
import { UnsupportedFormatError } from '../../core/errors.js';
import { allocPixels, planeSize, type Channels, type Image } from '../../core/image.js';
import { orient, tiffOrientation } from '../jpeg.js';
import { checkInputPixels, maxInputPixels } from '../limits.js';
import { isCheckout, loadNativeModule, nativeModuleProblem, processFlag } from '../native-module.js';
import type { DecodeOptions } from './format.js';

interface PngBinding {
  /** What decode writes: libpng's output after cv2's transformations (`gray`: one channel, else the file's own). */
  header(png: Uint8Array, gray: boolean): { width: number; height: number; channels: number; depth: 8 | 16 };
  /**
   * The pixels header() describes, rows packed, 16-bit samples in the machine's byte order, into `out`; returns the
   * file's eXIf chunk (before or after the image data), if any.
   */
  decode(png: Uint8Array, out: Uint8Array, gray: boolean): Uint8Array | undefined;
  /**
   * The PNG cv2.imwrite writes of these pixels (rows packed; 16-bit samples in the machine's byte order): `level` -1
   * for its default (no IMWRITE_PNG_COMPRESSION: Sub filter, zlib level 1, Z_RLE), 0–9 as IMWRITE_PNG_COMPRESSION.
   */
  encode(pixels: Uint8Array, width: number, height: number, channels: 1 | 3 | 4, depth: 8 | 16, level: number): Uint8Array;
}

const MODULE_FILE = 'imgpu-png.node';
let binding: PngBinding | null | undefined;

/** The native decoder, or undefined where it was not built (IMGPU_NO_NATIVE_PNG=1 also turns it off). */
export function nativePng(): PngBinding | undefined {
  binding ??= loadNativeModule<PngBinding>(MODULE_FILE, 'IMGPU_NO_NATIVE_PNG') ?? null;
  return binding ?? undefined;
}

// Made when this module loads (on the main thread, before the codec workers start): shared by them all.
const noticeFlag = processFlag('imgpu:png-sharp-notice');

/** Says once per process (worker threads included) that PNG goes through sharp, what that changes and the remedy. */
export function noticeSharpPng(): void {
  const problem = nativeModuleProblem(MODULE_FILE);
  if (problem === undefined || problem === 'off' || Atomics.compareExchange(noticeFlag, 0, 0, 1) !== 0) return;
  const remedy = isCheckout()
    ? 'To get it: install libpng-dev and a C compiler (scripts/install-system-deps.sh), then run `npm run build`.'
    : 'This copy of the package has no prebuilt decoder that loads here.';
  process.emitWarning(
    `imgpu's native PNG codec is not available (dist/native/${MODULE_FILE}: ${problem}), so PNG goes through sharp, ` +
      'which decodes slower than libpng (cv2.imread\'s library); gray reads of colour PNGs with a gAMA or sRGB chunk ' +
      'differ from cv2.imread(IMREAD_GRAYSCALE) (libpng converts those through its gamma tables), and written PNGs hold ' +
      `the same pixels as cv2.imwrite's in other bytes. ${remedy}`,
    { type: 'ImgpuWarning', code: 'IMGPU_PNG_SHARP' },
  );
}

const corrupt = (path: string, e: unknown) => new UnsupportedFormatError(`${path} is corrupt or truncated (${(e as Error).message})`);

/**
 * A PNG decoded by libpng as cv2.imread decodes it — gray (`opts.gray`: IMREAD_GRAYSCALE | IMREAD_ANYDEPTH) or
 * the file's channels (IMREAD_UNCHANGED, gray+alpha read as gray) at the file's depth — into `opts.alloc`'s memory
 * (shared buffers of a batch's codec workers) or fresh shared memory. A file libpng refuses (a bad critical chunk's
 * CRC, a missing IEND, a cut stream) is an UnsupportedFormatError. EXIF orientation (an eXIf chunk) applied.
 */
export function decodePngNative(png: PngBinding, buf: Uint8Array, path: string, opts: DecodeOptions): Image {
  const gray = opts.gray ?? false;
  let h: ReturnType<PngBinding['header']>;
  try {
    h = png.header(buf, gray);
  } catch (e) {
    throw new UnsupportedFormatError(`${path} is not a readable image (${(e as Error).message})`);
  }
  // The header alone: refuse a huge image before allocating or inflating it.
  checkInputPixels(h.width, h.height, path, maxInputPixels(opts.maxPixels));
  const n = h.width * h.height * h.channels, bytes = n * (h.depth / 8);
  const dtype = h.depth === 16 ? 'uint16' : 'uint8';
  const data = opts.alloc
    ? (dtype === 'uint16' ? new Uint16Array(opts.alloc(bytes), 0, n) : new Uint8Array(opts.alloc(bytes), 0, n))
    : allocPixels(dtype, n);
  let exif: Uint8Array | undefined;
  try {
    exif = png.decode(buf, new Uint8Array(data.buffer, data.byteOffset, bytes), gray);
  } catch (e) {
    throw corrupt(path, e);
  }
  const img: Image = { data, shape: [h.height, h.width], channels: h.channels as Channels, dtype };
  // cv2.imread applies an eXIf chunk's orientation to PNGs as to JPEGs.
  return exif ? orient(img, tiffOrientation(exif)) : img;
}

/** encode's level for cv2.imwrite without IMWRITE_PNG_COMPRESSION (native/png.c's CV2_DEFAULT_LEVEL). */
const CV2_DEFAULT_LEVEL = -1;

/**
 * `img` (8/16-bit gray, RGB or RGBA; validated by the caller) as the PNG cv2.imwrite writes of the same pixels:
 * `compression` undefined for cv2's default (no IMWRITE_PNG_COMPRESSION: every row Sub-filtered, zlib level 1,
 * strategy Z_RLE), a level 0–9 as cv2.imwrite(..., [IMWRITE_PNG_COMPRESSION, level]) (libpng's adaptive filters, the
 * default strategy). docs/formats.md says which bytes equal cv2's where zlib differs.
 */
export function encodePngNative(png: PngBinding, img: Image, compression?: number): Uint8Array {
  const [h, w] = planeSize(img.shape);
  const bytes = new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  try {
    return png.encode(bytes, w, h, img.channels as 1 | 3 | 4, img.dtype === 'uint16' ? 16 : 8, compression ?? CV2_DEFAULT_LEVEL);
  } catch (e) {
    // What libpng refuses to write (as cv2.imwrite does): a row wider than its limit of 1,000,000 pixels.
    throw new UnsupportedFormatError(`cannot write a ${w}×${h} image as PNG (${(e as Error).message})`);
  }
}

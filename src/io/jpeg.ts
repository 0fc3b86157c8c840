import { InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, pixelCount, planeSize, type Dtype, type Image } from '../core/image.js';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';
import { isCheckout, loadNativeModule, nativeModuleProblem } from './native-module.js';
import { checkInputPixels, maxInputPixels } from './limits.js';
import { jpegCoefDecoder, jpegCoefProblem, type LenientDecode } from './jpeg-coef.js';

/**
 * What a damaged JPEG may be and still be decoded, in sharp's words (`failOn`), least strict first: 'none' (every
 * file libjpeg decodes, its warnings reported: cv2.imread's pixels, libjpeg filling what is missing), 'truncated'
 * and 'error' (refused if the file ends early; libjpeg's other damage — corrupt data, extraneous bytes — is a
 * warning it decodes through, so the two are one level for JPEG, as in libvips), 'warning' (refused on any warning:
 * the default). A libjpeg error (no image at all) is refused at every level.
 */
export type FailOn = 'none' | 'truncated' | 'error' | 'warning';
export const FAIL_ON: readonly FailOn[] = ['none', 'truncated', 'error', 'warning'];

/** `v` as a FailOn, or an InvalidArgumentError naming the option (CLI: --fail-on). */
export function checkFailOn(v: unknown): FailOn {
  if ((FAIL_ON as readonly unknown[]).includes(v)) return v as FailOn;
  throw new InvalidArgumentError(`option \`failOn\` must be one of ${FAIL_ON.join('|')}, got '${String(v)}'`);
}

/**
 * JPEG through imgpu's native codec (native/turbo.c, libjpeg-turbo — the library behind cv2.imread/imwrite),
 * built by scripts/build-native.mjs and shipped prebuilt in the package; where it is missing io falls back to sharp,
 * and says so once (noticeSharpJpeg). Measured on an 8K photograph on
 * the development machine: gray decode 38 ms, RGB 60 ms, gray encode 58 ms, against sharp's 256 / 111 / 518 ms.
 * Decoded pixels are cv2.imread's bit for bit (gray: the file's own luma, as IMREAD_GRAYSCALE); encoded files are
 * cv2.imwrite's byte for byte at the same quality.
 */
interface TurboBinding {
  header(jpeg: Uint8Array): { width: number; height: number; subsampling: number; colorspace: number };
  decode(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3): void;
  encode(pixels: Uint8Array, width: number, height: number, channels: 1 | 3, quality: number): Uint8Array;
  /** decode/encode on libuv's thread pool; `nice` raises that thread's nice value (Linux). */
  decodeAsync(jpeg: Uint8Array, out: Uint8Array, channels: 1 | 3, nice?: number): Promise<void>;
  encodeAsync(pixels: Uint8Array, width: number, height: number, channels: 1 | 3, quality: number, nice?: number): Promise<Uint8Array>;
}

// TurboJPEG's TJSAMP_GRAY and TJCS_GRAY/TJCS_RGB/TJCS_YCbCr (CMYK and YCCK go to sharp).
const SAMP_GRAY = 3;
const NATIVE_COLORSPACES = new Set([0, 1, 2]);

const CODEC_FILE = 'imgpu-turbo.node';
let binding: TurboBinding | null | undefined;

/** The native codec, or undefined where it was not built (IMGPU_NO_NATIVE_JPEG=1 also turns it off). */
export function nativeJpeg(): TurboBinding | undefined {
  binding ??= loadNativeModule<TurboBinding>(CODEC_FILE, 'IMGPU_NO_NATIVE_JPEG') ?? null;
  return binding ?? undefined;
}

// One flag for the process: worker threads started after this module loaded on the main thread (the codec pool's)
// receive the same shared memory through their environment data, so the notice below is said once, not per thread.
const NOTICE_KEY = 'imgpu:jpeg-sharp-notice';
const noticeFlag = new Int32Array(
  (getEnvironmentData(NOTICE_KEY) as SharedArrayBuffer | undefined) ??
    (() => {
      const sab = new SharedArrayBuffer(4);
      setEnvironmentData(NOTICE_KEY, sab);
      return sab;
    })(),
);

/** The codec for a JPEG it would handle, or undefined — then sharp does, and the first time that is said. */
function codecOrNotice(): TurboBinding | undefined {
  const tj = nativeJpeg();
  if (!tj) noticeSharpJpeg();
  return tj;
}

/**
 * Says once per process that JPEG goes through sharp, what that changes and how to get the native codec — unless
 * IMGPU_NO_NATIVE_JPEG=1 asked for it.
 */
function noticeSharpJpeg(): void {
  const problem = nativeModuleProblem(CODEC_FILE);
  if (problem === 'off' || Atomics.compareExchange(noticeFlag, 0, 0, 1) !== 0) return;
  const remedy = isCheckout()
    ? 'To get it: install libturbojpeg0-dev and a C compiler (scripts/install-system-deps.sh), then run `npm run build`.'
    : problem === 'not built'
      ? 'This copy of the package was packed without it.'
      : `Its prebuilt binary does not load on ${process.platform}-${process.arch}: JPEG stays on sharp here.`;
  process.emitWarning(
    `imgpu's native JPEG codec is not available (dist/native/${CODEC_FILE}: ${problem}), so JPEG goes through sharp: ` +
      'gray reads of colour JPEGs differ from cv2.imread(IMREAD_GRAYSCALE) on some pixels, and written JPEGs are not ' +
      `byte-identical to cv2.imwrite (docs/throughput.md, "Without the native codec"). ${remedy}`,
    { type: 'ImgpuWarning', code: 'IMGPU_JPEG_SHARP' },
  );
}

/** True when `buf` starts with a JPEG SOI marker. */
export function isJpeg(buf: Uint8Array): boolean {
  return buf.length > 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff;
}

/**
 * The EXIF orientation (1–8) of a JPEG, 1 when it has none. Read from the APP1 "Exif" segment's first IFD, as
 * cv2.imread does before applying it.
 */
export function exifOrientation(buf: Uint8Array): number {
  let p = 2;
  while (p + 4 <= buf.length && buf[p] === 0xff) {
    const marker = buf[p + 1];
    if (marker === 0xda || marker === 0xd9) break; // start of scan / end: no EXIF before the pixels
    const len = (buf[p + 2] << 8) | buf[p + 3];
    if (marker === 0xe1 && len >= 16 && String.fromCharCode(...buf.subarray(p + 4, p + 10)) === 'Exif\0\0') {
      return tiffOrientation(buf.subarray(p + 10, p + 2 + len));
    }
    p += 2 + len;
  }
  return 1;
}

/** The orientation (1–8) in an EXIF block (a TIFF header and IFDs: JPEG's APP1 after "Exif\0\0", PNG's eXIf), 1 without one. */
export function tiffOrientation(t: Uint8Array): number {
  if (t.length < 8) return 1;
  const le = t[0] === 0x49; // 'II' little-endian, 'MM' big-endian
  const u16 = (o: number) => (le ? t[o] | (t[o + 1] << 8) : (t[o] << 8) | t[o + 1]);
  const u32 = (o: number) => (le ? (t[o] | (t[o + 1] << 8) | (t[o + 2] << 16)) + t[o + 3] * 2 ** 24 : t[o] * 2 ** 24 + ((t[o + 1] << 16) | (t[o + 2] << 8) | t[o + 3]));
  const ifd = u32(4);
  if (ifd + 2 > t.length) return 1;
  const n = u16(ifd);
  for (let i = 0; i < n; i++) {
    const e = ifd + 2 + 12 * i;
    if (e + 12 > t.length) break;
    if (u16(e) === 0x0112) {
      const v = u16(e + 8);
      return v >= 1 && v <= 8 ? v : 1;
    }
  }
  return 1;
}

/**
 * Applies EXIF orientation `o` (2–8) to 8- or 16-bit pixels, as cv2.imread does after decoding: each output pixel
 * (y, x) takes the stored pixel named by the orientation's flip/transpose.
 */
export function orient(img: Image, o: number): Image {
  if (o === 1) return img;
  const [H, W] = img.shape as [number, number];
  const c = img.channels;
  const swap = o >= 5;
  const [h, w] = swap ? [W, H] : [H, W];
  const src = img.data;
  const dst = allocPixels(img.dtype, src.length);
  // Source (row, column) of output (y, x), per orientation.
  const at: Record<number, (y: number, x: number) => number> = {
    2: (y, x) => y * W + (W - 1 - x),
    3: (y, x) => (H - 1 - y) * W + (W - 1 - x),
    4: (y, x) => (H - 1 - y) * W + x,
    5: (y, x) => x * W + y,
    6: (y, x) => (H - 1 - x) * W + y,
    7: (y, x) => (H - 1 - x) * W + (W - 1 - y),
    8: (y, x) => x * W + (W - 1 - y),
  };
  const from = at[o];
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i += c) {
      const j = from(y, x) * c;
      for (let k = 0; k < c; k++) dst[i + k] = src[j + k];
    }
  }
  return { data: dst, shape: [h, w], channels: c, dtype: img.dtype };
}

/**
 * Decodes a JPEG natively: one channel when `gray` or the file is gray, RGB otherwise, into shared memory, EXIF
 * orientation applied. Returns undefined for what the native path leaves to sharp (no codec built, CMYK/YCCK).
 */
export function decodeJpeg(buf: Uint8Array, path: string, gray: boolean, alloc?: (bytes: number) => SharedArrayBuffer | ArrayBuffer, maxPixels?: number, failOn: FailOn = 'warning'): Image | undefined {
  const plan = nativePlan(buf, path, gray, maxPixels, failOn);
  if (!plan) return undefined;
  const n = plan.width * plan.height * plan.channels;
  let data: Uint8Array;
  try {
    data = alloc ? new Uint8Array(alloc(n), 0, n) : (allocPixels('uint8', n) as Uint8Array);
  } catch {
    // A header may declare up to 65535×65535 pixels in a file of a few bytes.
    throw new UnsupportedFormatError(`${path}: a ${plan.width}×${plan.height} JPEG does not fit in memory`);
  }
  const warnings = failOn === 'warning' && !plan.libjpeg ? decodeInto(plan, buf, path, data) : lenient(plan, buf, path, data, failOn, false);
  const img = orient({ data, shape: [plan.height, plan.width], channels: plan.channels, dtype: 'uint8' }, plan.orientation);
  return warnings.length ? { ...img, warnings } : img;
}

/**
 * Decodes through libjpeg as cv2.imread does, damage warned of and decoded through (native/coef-decode.c
 * decodeLenient), then applies `failOn`: the warnings to report, or an UnsupportedFormatError for a file it refuses.
 */
function lenient(plan: NativePlan, buf: Uint8Array, path: string, out: Uint8Array, failOn: FailOn, async: false): string[];
function lenient(plan: NativePlan, buf: Uint8Array, path: string, out: Uint8Array, failOn: FailOn, async: true): Promise<string[]>;
function lenient(plan: NativePlan, buf: Uint8Array, path: string, out: Uint8Array, failOn: FailOn, async: boolean): string[] | Promise<string[]> {
  const coef = jpegCoefDecoder();
  if (!coef) throw new UnsupportedFormatError(`${path}: option \`failOn: '${failOn}'\` needs the native libjpeg decoder (${jpegCoefProblem()})`);
  if (!async) {
    try {
      return policy(coef.decodeLenient(buf, out, plan.channels, false), path, failOn);
    } catch (e) {
      throw e instanceof UnsupportedFormatError ? e : corrupt(path, e);
    }
  }
  return coef.decodeLenient(buf, out, plan.channels, true).then((r) => policy(r, path, failOn), (e) => Promise.reject(corrupt(path, e)));
}

/**
 * A lenient decode's outcome under `failOn`: its warnings in a line (none: []), or the refusal of a truncated file —
 * of any file libjpeg warns about under 'warning' (a layout TurboJPEG cannot name, decoded through libjpeg's API:
 * NativePlan.libjpeg), as TurboJPEG's TJFLAG_STOPONWARNING refuses it.
 */
function policy(r: LenientDecode, path: string, failOn: FailOn): string[] {
  if (!r.warnings) return [];
  const said = `libjpeg: ${r.first}${r.warnings > 1 ? ` (and ${r.warnings - 1} more warning${r.warnings > 2 ? 's' : ''})` : ''}`;
  if (failOn === 'warning') throw new UnsupportedFormatError(`${path} is corrupt or truncated (${said}); option \`failOn: 'none'\` decodes it as cv2.imread does`);
  if (r.truncated && failOn !== 'none') throw new UnsupportedFormatError(`${path} is truncated (${said}); option \`failOn: 'none'\` decodes it as cv2.imread does`);
  return [said];
}

/** What the native decoder will produce for a JPEG (jpegDecodePlan). */
export interface NativePlan {
  tj: TurboBinding;
  width: number;
  height: number;
  channels: 1 | 3;
  orientation: number;
  /**
   * Sampling factors TurboJPEG's header reader cannot name (its TJSAMP_* layouts: 4:4:4, 4:2:2, 4:2:0, 4:4:0,
   * 4:1:1, gray), such as 4x2, 3x1 or chroma sampled more than luma, which libjpeg and cv2.imread decode: decoded
   * through libjpeg's own API instead (native/coef-decode.c decodeLenient, as cv2.imread runs it).
   */
  libjpeg?: boolean;
}

/**
 * What the native decoder will produce for `buf`, or undefined where sharp must read it (no codec, CMYK/YCCK); an
 * image beyond the pixel limit (io/limits.ts) is refused from its header.
 */
export function nativePlan(buf: Uint8Array, path: string, gray: boolean, maxPixels?: number, failOn: FailOn = 'warning'): NativePlan | undefined {
  const tj = codecOrNotice();
  if (!tj) return undefined;
  let h;
  let libjpeg = false;
  try {
    h = tj.header(buf);
  } catch (e) {
    libjpeg = /subsampling type/.test((e as Error).message);
    h = failOn === 'warning' && !libjpeg ? undefined : libjpegHeader(buf);
    if (!h) throw new UnsupportedFormatError(`${path} is not a readable image (${(e as Error).message})`);
  }
  if (!NATIVE_COLORSPACES.has(h.colorspace)) return undefined;
  checkInputPixels(h.width, h.height, path, maxInputPixels(maxPixels));
  const channels = gray || h.subsampling === SAMP_GRAY ? 1 : 3;
  return { tj, width: h.width, height: h.height, channels, orientation: exifOrientation(buf), ...(libjpeg ? { libjpeg } : {}) };
}

// libjpeg's J_COLOR_SPACE as TurboJPEG's TJCS (gray, RGB, YCbCr; the others left to sharp).
const TJCS_OF_JCS: Record<number, number> = { 1: 2, 2: 0, 3: 1 };

/**
 * The header as libjpeg reads it, in TurboJPEG's terms, for a lenient decode of a file whose sampling factors
 * TurboJPEG's header reader cannot name (cv2.imread decodes those): undefined where libjpeg cannot read it either.
 */
function libjpegHeader(buf: Uint8Array): ReturnType<TurboBinding['header']> | undefined {
  try {
    const l = jpegCoefDecoder()?.coefLayout(buf, false);
    if (!l) return undefined;
    const colorspace = 'colorSpace' in l ? (TJCS_OF_JCS[l.colorSpace] ?? -1) : l.components.length === 1 ? 2 : 1;
    return { width: l.width, height: l.height, subsampling: colorspace === 2 ? SAMP_GRAY : -1, colorspace };
  } catch {
    return undefined;
  }
}

function decodeInto(plan: NativePlan, buf: Uint8Array, path: string, out: Uint8Array): string[] {
  try {
    plan.tj.decode(buf, out, plan.channels);
  } catch (e) {
    throw corrupt(path, e);
  }
  return [];
}

const corrupt = (path: string, e: unknown) => new UnsupportedFormatError(`${path} is corrupt or truncated (${(e as Error).message})`);

/**
 * Decodes a planned JPEG into `out` (plan.width × plan.height × plan.channels bytes), on this thread or libuv's,
 * damage handled as `failOn` says (default 'warning'); resolves with the warnings to report.
 */
export async function decodePlanned(plan: NativePlan, buf: Uint8Array, path: string, out: Uint8Array, opts: CodecThreadOptions & { failOn?: FailOn } = {}): Promise<string[]> {
  const failOn = opts.failOn ?? 'warning';
  if (failOn !== 'warning' || plan.libjpeg) return opts.async ? lenient(plan, buf, path, out, failOn, true) : lenient(plan, buf, path, out, failOn, false);
  if (!opts.async) return decodeInto(plan, buf, path, out);
  await plan.tj.decodeAsync(buf, out, plan.channels, opts.nice ?? 0).catch((e) => Promise.reject(corrupt(path, e)));
  return [];
}

/** Where the work of the async codec calls runs: off the JavaScript thread, at this nice value. */
export interface CodecThreadOptions {
  /** Decode/encode on libuv's thread pool instead of the calling thread. @default false */
  async?: boolean;
  /** Nice value for that thread (Linux), so codecs yield to the thread feeding the GPU. @default 0 */
  nice?: number;
}

/** The native encoder for 8-bit gray or RGB pixels, on this thread or libuv's. */
export interface JpegEncoder {
  encode(px: Uint8Array, width: number, height: number, quality: number, opts?: CodecThreadOptions): Promise<Uint8Array>;
}

/** The native encoder where it applies (8-bit gray or RGB, the codec built), or undefined where sharp must encode. */
export function jpegEncoder(dtype: Dtype, channels: number): JpegEncoder | undefined {
  const enc = encoderFor(dtype, channels);
  if (!enc) return undefined;
  const { tj, channels: c } = enc;
  return {
    encode: async (px, width, height, quality, opts = {}) =>
      opts.async ? tj.encodeAsync(px, width, height, c, quality, opts.nice ?? 0) : tj.encode(px, width, height, c, quality),
  };
}

/** The native encoder where it applies: 8-bit gray or RGB pixels (not RGBA, not 16-bit) and the codec built. */
function encoderFor(dtype: Dtype, channels: number): { tj: TurboBinding; channels: 1 | 3 } | undefined {
  if (dtype !== 'uint8' || (channels !== 1 && channels !== 3)) return undefined;
  const tj = codecOrNotice();
  return tj ? { tj, channels } : undefined;
}

/** Encodes an 8-bit gray or RGB image natively (cv2.imwrite's bytes), or undefined where sharp must (RGBA, no codec). */
export function encodeJpeg(img: Image, quality: number): Uint8Array | undefined {
  const enc = encoderFor(img.dtype, img.channels);
  if (!enc) return undefined;
  const [h, w] = planeSize(img.shape);
  const px = img.data as Uint8Array;
  return enc.tj.encode(px.subarray(0, pixelCount(img.shape) * enc.channels), w, h, enc.channels, quality);
}

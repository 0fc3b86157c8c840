// JPEG decoding with the arithmetic on the GPU: entropy decoding to DCT coefficients on a libuv thread
// (the platform's front end, JpegDecodeFrontEnd: io/jpeg-coef.ts, written straight into mapped upload memory), then dequantization + islow IDCT, upsampling and
// YCbCr→RGB as WGSL kernels (codecs/jpeg/decode/kernels.wgsl.ts), each exactly as libjpeg-turbo computes it: the pixels are
// cv2.imread's. Work larger than one storage binding runs in bands of MCU rows.
import { UnsupportedFormatError } from '../../../core/errors.js';
import { alignUp, type GpuContext } from '../../../core/gpu/context.js';
import { grid1d } from '../../../core/gpu/dispatch.js';
import { GpuImage } from '../../../core/gpu/gpu-image.js';
import { checkBinding, maxBinding } from '../../../core/gpu/limits.js';
import { Recording } from '../../../core/gpu/recording.js';
import { KernelTimer } from '../../../core/gpu/timer.js';
import { acquireStorage, deviceBytes, downloadAfter, stageOffThread, stagingView } from '../../../core/gpu/transfer.js';
import type { HostBuffers, JpegEntropyPath } from '../options.js';
import type { CoefComponent, CoefFallback, CoefLayout } from './coef-layout.js';
import { JpegEntropyPlan, decodeOk, scanFits, scanFormBytes, scanInfo, type ScanInfo } from './huffman-decode.js';
import { ColourParams, IdctParams, colourWgsl, expandWgsl, idctWgsl, upsampleMethod } from './kernels.wgsl.js';

/**
 * What the decoder needs done natively (libjpeg: the platform implements it — node/jpeg-gpu-decode.ts with
 * native/coef-decode.c): the header read into a coefficient layout (or why the kernels do not cover the file; throws
 * on an unreadable header), the coefficients (plain or compact form) or the scan form written into `out` off the
 * calling thread (resolving with the bytes written; rejecting with code EJPEGFALLBACK and a reason, or another code
 * for a damaged file), and a span for traces.
 */
export interface JpegDecodeFrontEnd {
  coefLayout(jpeg: Uint8Array, gray: boolean): CoefLayout | CoefFallback;
  coefDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean, compact?: boolean): Promise<number>;
  scanDecodeAsync(jpeg: Uint8Array, out: Uint8Array, gray: boolean): Promise<number>;
  traced<T>(span: string, input: string, work: () => Promise<T>): Promise<T>;
}

const BLOCK_BYTES = 128;
/** A block's header in the compact form (native/coef-decode.c HEADER_BYTES): its first value's index, its 64-bit mask. */
const HEADER_BYTES = 12;
const QUANT_BYTES = 256;
const IDCT_WG = 64;
const COLOUR_WG = 256;

/** A GPU decode's image, and where its Huffman decoding ran (JpegEntropyPath). */
export interface GpuJpegDecoded {
  image: GpuImage;
  huffman: JpegEntropyPath;
}

/** Why the GPU decoder does not take a file (it is then decoded on the CPU, with the same pixels). */
export interface GpuJpegFallback {
  fallback: string;
}

/**
 * Phase times of GPU decodes, added up (bench/jpeg-decode.ts). With `profile`, the decode waits for the GPU after the
 * coefficients' copy and after the kernels, so that those are timed apart (in production they overlap the caller's
 * next work, and it does not wait).
 */
export interface GpuJpegTimes {
  /** Entropy decoding on a libuv thread, into mapped upload memory (or into host memory then copied there: HostBuffers). */
  entropyMs: number;
  /** From the end of the entropy stage to the kernels' submission (with `profile`: the copy to the device, waited for). */
  submitMs: number;
  profile?: boolean;
  /** With `profile`: the kernels, from their submission until the GPU is done. */
  kernelsMs?: number;
  /** Bands of MCU rows the last decode ran in (1 unless an image is beyond the binding limit). */
  bands?: number;
}

/**
 * Where the entropy stage writes `bytes`; `ready(used)` once the first `used` of them are written (off the JavaScript
 * thread: outside any error scope), then `submit()` puts them in a device buffer (the copy submitted at once, or
 * recorded `into` the decode's recording ahead of its kernels); `discard()` drops them instead (a failed decode).
 */
interface CoefMemory {
  bytes: Uint8Array;
  ready(used: number): Promise<void>;
  submit(into?: Recording): GPUBuffer;
  discard(): void;
}

/** Mapped upload memory (no copy at all: a single photo), or host memory from `host` copied once filled (a batch). */
async function coefMemory(ctx: GpuContext, bytes: number, host?: HostBuffers): Promise<CoefMemory> {
  const label = 'jpeg coefficients';
  if (!host) {
    const staged = await stagingView(ctx, bytes);
    return { bytes: new Uint8Array(staged.bytes, 0, bytes), ready: async () => undefined, submit: (into) => staged.submit(label, into), discard: () => staged.discard() };
  }
  const mem = host.alloc(bytes);
  const view = new Uint8Array(mem, 0, bytes);
  let staged: Awaited<ReturnType<typeof stageOffThread>> | undefined;
  return {
    bytes: view,
    async ready(used) {
      try {
        staged = await stageOffThread(ctx, view.subarray(0, used));
      } finally {
        host.give(mem);
      }
    },
    submit: (into) => staged!.submit(label, into),
    discard: () => host.give(mem),
  };
}

/**
 * Why a file's GPU decode was declined after its kernels ran: a block's coefficients beyond the range where the
 * GPU's IDCT (libjpeg's C arithmetic) equals libjpeg-turbo's SIMD one (codecs/jpeg/decode/kernels.wgsl.ts RANGE_LIMIT).
 */
export const OUT_OF_RANGE = 'DCT values beyond the range where the GPU IDCT equals libjpeg-turbo\'s (damaged or unusual tables)';

/** A GPU decode's image, and whether every block was within the IDCT's exact range (read back once the kernels ran). */
interface Recorded {
  image: GpuImage;
  inRange: Promise<boolean>;
}

/** The GPU kernels' pipelines, made once per context. */
class JpegDecodePlan {
  private constructor(
    readonly idct: GPUComputePipeline,
    readonly ycc: GPUComputePipeline,
    readonly gray: GPUComputePipeline,
    readonly expand: GPUComputePipeline,
  ) {}

  static prepare(ctx: GpuContext): Promise<JpegDecodePlan> {
    return ctx.plan('jpeg-decode', async () => {
      const [idct, ycc, gray, expand] = await Promise.all([
        ctx.pipeline('jpeg-idct', idctWgsl, 'idct_islow', { WG: IDCT_WG }),
        ctx.pipeline('jpeg-ycc', colourWgsl, 'jpeg_ycc', { WG: COLOUR_WG }),
        ctx.pipeline('jpeg-gray', colourWgsl, 'jpeg_gray', { WG: COLOUR_WG }),
        ctx.pipeline('jpeg-expand', expandWgsl, 'expand_coefs', { WG: IDCT_WG }),
      ]);
      return new JpegDecodePlan(idct, ycc, gray, expand);
    });
  }
}

/** Compiles the GPU decoder's kernels on `ctx`, the Huffman decoder's too where `entropy` is 'gpu'. */
export async function prepareJpegDecode(ctx: GpuContext, entropy: JpegEntropyPath): Promise<void> {
  await Promise.all([JpegDecodePlan.prepare(ctx), entropy === 'gpu' ? JpegEntropyPlan.prepare(ctx) : undefined]);
}

/**
 * Whether a decode uploads its coefficients in the compact form (nonzero ones only, expanded on the GPU): with host
 * memory (a batch: the entropy stage writes there and the upload copies what it wrote, so its size may be known only
 * afterwards), where the plain form fits one binding (no bands). A photo's coefficients are 84–96 % zeros: the
 * upload, its staging memory and the mapped ranges (which V8 counts as external memory, each 64 MB of them a
 * garbage collection) shrink 3–6×. The pixels are the same either way.
 */
function compactFits(ctx: GpuContext, l: CoefLayout, bands: number, host?: HostBuffers): boolean {
  return host !== undefined && bands >= mcuRowsOf(l) && l.bytes <= maxBinding(ctx) && l.compactBytes <= maxBinding(ctx);
}

/** Records the compact coefficients' expansion to the plain form in a new recording buffer (codecs/jpeg/decode/kernels.wgsl.ts expand_coefs). */
function expand(ctx: GpuContext, rec: Recording, plan: JpegDecodePlan, l: CoefLayout, compact: GPUBuffer, used: number): GPUBuffer {
  const plain = rec.storage(deviceBytes(l.bytes), 'jpeg coefficients');
  rec.copyRange(compact, 0, plain, 0, l.components[0].offset);
  const values = range(compact, l.values, Math.max(4, alignUp(used - l.values, 4)));
  for (const c of l.components) {
    const blocks = c.blocksW * c.blocksH;
    const [x, y] = grid1d(ctx, Math.ceil(blocks / IDCT_WG));
    rec.dispatch('jpeg.expand', plan.expand, {
      headers: range(compact, c.header, c.stride * c.blocksH * HEADER_BYTES),
      values,
      coefs: range(plain, c.offset, c.stride * c.blocksH * BLOCK_BYTES),
      P: rec.uniform(IdctParams, { blocksW: c.blocksW, blocks, stride: c.stride }),
    }, x, y);
  }
  return plain;
}

/**
 * Decodes a JPEG on the GPU into a resident 8-bit image: gray (one channel) when `gray` or the file is gray, else
 * RGB interleaved, any sampling factors libjpeg decodes. Returns the reason instead where the GPU decoder does not
 * cover the file (its entropy stage not built; CMYK, 12-bit…), for the caller to decode it on the CPU. EXIF `orientation` (1–8) is applied
 * as cv2.imread applies it. A damaged file is an UnsupportedFormatError, as on the CPU path. `host`: see HostBuffers.
 */
export async function decodeJpegOnGpu(
  ctx: GpuContext, coef: JpegDecodeFrontEnd, buf: Uint8Array, path: string, gray: boolean, entropy: JpegEntropyPath, times?: GpuJpegTimes, orientation = 1,
  host?: HostBuffers,
): Promise<GpuJpegDecoded | GpuJpegFallback> {
  let layout;
  try {
    layout = coef.coefLayout(buf, gray);
  } catch (e) {
    throw new UnsupportedFormatError(`${path} is not a readable image (${(e as Error).message})`);
  }
  if ('fallback' in layout) return layout;
  const bands = planBands(ctx, layout);
  // Bands are runs of stored rows; an oriented output's rows are not: one band only.
  if (orientation !== 1 && bands < mcuRowsOf(layout)) return { fallback: `EXIF orientation ${orientation} on an image larger than one binding` };
  const plan = await JpegDecodePlan.prepare(ctx);
  if (entropy === 'gpu' && bands >= mcuRowsOf(layout) && scanFits(ctx, layout, buf.length)) {
    const image = await decodeScan(ctx, coef, buf, path, gray, layout, plan, orientation, host, times);
    if (image && 'fallback' in image) return image;
    if (image) return { image, huffman: 'gpu' };
  }
  const compact = compactFits(ctx, layout, bands, host);
  const image = await decodeStages(ctx, coef, path, host, times, {
    bytes: compact ? layout.compactBytes : layout.bytes,
    span: 'entropy',
    native: (out) => coef.coefDecodeAsync(buf, out, gray, compact),
    // The compact form's values are bound from `values` on: at least one word of them is uploaded.
    upload: (used) => (compact ? Math.max(used, layout.values + 4) : layout.bytes),
    record: (rec, coefs, used) => record(ctx, rec, plan, layout, bands, compact ? expand(ctx, rec, plan, layout, coefs, used) : coefs, orientation),
    bands: Math.ceil(mcuRowsOf(layout) / bands),
  });
  if ('fallback' in image) return image;
  return (await inRange(coef, path, image)) ? { image: image.image, huffman: 'cpu' } : { fallback: OUT_OF_RANGE };
}

/** Whether a recorded decode's blocks were all within the IDCT's exact range; its image released where not. */
async function inRange(fe: JpegDecodeFrontEnd, path: string, r: Recorded): Promise<boolean> {
  if (await fe.traced('range-check', path, () => r.inRange)) return true;
  r.image.release();
  return false;
}

/** One GPU decode's stages, as decodeStages runs them. */
interface DecodeStages<T> {
  /** Bytes of the memory the native stage writes. */
  bytes: number;
  /** The native stage's trace span. */
  span: string;
  /** The native stage on a libuv thread, writing `out`: resolves with the bytes written. */
  native: (out: Uint8Array) => Promise<number>;
  /** The bytes to upload of those written. */
  upload: (used: number) => number;
  /** The kernels, recorded on the upload. */
  record: (rec: Recording, uploaded: GPUBuffer, used: number) => T;
  /** Bands of MCU rows it ran in (GpuJpegTimes.bands). */
  bands: number;
}

/**
 * The stages both entropy paths share: memory for the native stage (mapped upload memory, or `host`'s), the native
 * stage (its fallback reason returned, a damaged file an UnsupportedFormatError), the upload, and the kernels in one
 * recording under an error scope; the phase times added to `times`.
 */
async function decodeStages<T>(ctx: GpuContext, fe: JpegDecodeFrontEnd, path: string, host: HostBuffers | undefined, times: GpuJpegTimes | undefined, s: DecodeStages<T>): Promise<T | GpuJpegFallback> {
  const t0 = performance.now();
  const mem = await fe.traced('coef-memory', path, () => coefMemory(ctx, s.bytes, host));
  let used: number;
  try {
    used = await fe.traced(s.span, path, () => s.native(mem.bytes));
  } catch (e) {
    mem.discard();
    if ((e as { code?: string }).code === 'EJPEGFALLBACK') return { fallback: (e as Error).message };
    throw new UnsupportedFormatError(`${path} is corrupt or truncated (${(e as Error).message})`);
  }
  await fe.traced('coef-copy', path, () => mem.ready(s.upload(used)));
  const t1 = performance.now();
  let t2 = t1;
  const out = await fe.traced('decode-record', path, () => ctx.scoped('jpeg decode', async () => {
    const timer = new KernelTimer(ctx, false);
    try {
      const rec = new Recording(ctx, timer, 'jpeg decode', true);
      // The upload goes in the kernels' submission (one fewer a photo), unless profiling times it apart.
      const uploaded = mem.submit(times?.profile ? undefined : rec);
      if (times?.profile) await ctx.finish();
      rec.retain(uploaded);
      const r = s.record(rec, uploaded, used);
      rec.submit();
      t2 = performance.now();
      return r;
    } finally {
      timer.destroy();
    }
  }));
  if (times) {
    times.entropyMs += t1 - t0;
    times.submitMs += t2 - t1;
    if (times.profile) {
      await ctx.finish();
      times.kernelsMs = (times.kernelsMs ?? 0) + performance.now() - t2;
    }
    times.bands = s.bands;
  }
  return out;
}

/**
 * The GPU's Huffman decoding (codecs/jpeg/decode/huffman-decode.ts): the native stage copies the entropy-coded bytes unstuffed, the GPU
 * decodes them. Undefined where the file needs the CPU's entropy stage after all: one the GPU decoder does not cover
 * (progressive, restart markers…), or whose GPU decode did not come out exact (the status read back before the image
 * is handed on, so that nothing downstream sees it).
 */
async function decodeScan(
  ctx: GpuContext, coef: JpegDecodeFrontEnd, buf: Uint8Array, path: string, gray: boolean, layout: CoefLayout, plan: JpegDecodePlan, orientation: number,
  host: HostBuffers | undefined, times: GpuJpegTimes | undefined,
): Promise<GpuImage | GpuJpegFallback | undefined> {
  const entropy = await JpegEntropyPlan.prepare(ctx);
  let info: ScanInfo;
  const r = await decodeStages(ctx, coef, path, host, times, {
    bytes: scanFormBytes(buf.length),
    span: 'unstuff',
    native: async (out) => {
      const used = await coef.scanDecodeAsync(buf, out, gray);
      info = scanInfo(out); // read before the upload hands host memory back
      return used;
    },
    upload: (used) => alignUp(used, 4),
    record: (rec, form) => {
      const { plain, status } = entropy.record(rec, layout, form, info);
      return { ...record(ctx, rec, plan, layout, mcuRowsOf(layout), plain, orientation), exact: decodeOk(rec, status) };
    },
    bands: 1,
  });
  if ('fallback' in r) return undefined;
  if (!(await coef.traced('huffman-check', path, () => r.exact))) {
    r.image.release();
    return undefined;
  }
  return (await inRange(coef, path, r)) ? r.image : { fallback: OUT_OF_RANGE };
}

const mcuRowsOf = (l: CoefLayout) => Math.ceil(l.height / (8 * l.maxV));

/** MCU rows per band: all of them when every binding fits, else as many as fit with the chroma's context rows. */
function planBands(ctx: GpuContext, l: CoefLayout): number {
  const mcuRows = mcuRowsOf(l);
  // Per MCU row: the output's rows, and each component's v block rows of coefficients and of samples.
  const perRow = [8 * l.maxV * l.width * l.components.length];
  for (const c of l.components) perRow.push(c.v * c.stride * BLOCK_BYTES, c.v * 8 * c.stride * 8);
  const widest = Math.max(...perRow);
  if (widest * (mcuRows + 2) <= maxBinding(ctx)) return mcuRows;
  checkBinding(ctx, widest * 3, `a ${l.width}-pixel-wide JPEG's MCU row`);
  return Math.floor(maxBinding(ctx) / widest) - 2;
}

/** Block rows [first, end) of a component that the band of MCU rows [m0, m1) needs (context rows for vertical upsampling). */
function blockRows(l: CoefLayout, c: CoefComponent, m0: number, m1: number): [number, number] {
  const context = c.v < l.maxV ? 1 : 0;
  return [Math.max(m0 * c.v - context, 0), Math.min(m1 * c.v + context, c.blocksH)];
}

/** A binding of `bytes` bytes of `buffer` from `offset` (a multiple of 256). */
const range = (buffer: GPUBuffer, offset: number, bytes: number): GPUBufferBinding => ({ buffer, offset, size: deviceBytes(bytes) });

/** The status word the IDCT sets for a block beyond its exact range (codecs/jpeg/decode/kernels.wgsl.ts), cleared in `rec`. */
function rangeStatus(ctx: GpuContext, rec: Recording): GPUBuffer {
  const status = acquireStorage(ctx, 4, 'jpeg range status');
  rec.clear(status, 4);
  rec.retain(status);
  return status;
}

/** Whether the status word says every block was in range, read back after the kernels recorded so far in `rec`. */
function readRange(rec: Recording, status: GPUBuffer): Promise<boolean> {
  const inRange = downloadAfter(rec, status, 4).then((view) => {
    const word = new Uint32Array(view.bytes, 0, 1)[0];
    view.release();
    return word === 0;
  });
  // Awaited only where the decode was recorded and submitted without error: a failure after that is the decode's.
  inRange.catch(() => undefined);
  return inRange;
}

/** Component p's upsampling factors and method (codecs/jpeg/decode/kernels.wgsl.ts upsampleMethod): the colour kernel's `u` p. */
function upsampling(l: CoefLayout, p: number): [number, number, number, number] {
  const c = l.components[Math.min(p, l.components.length - 1)];
  const hs = l.maxH / c.h, vs = l.maxV / c.v;
  return [hs, vs, upsampleMethod(hs, vs, c.samplesW), 0];
}

function record(ctx: GpuContext, rec: Recording, plan: JpegDecodePlan, l: CoefLayout, bandRows: number, coefs: GPUBuffer, orientation: number): Recorded {
  const channels = l.components.length === 1 ? 1 : 3;
  // Orientations 5–8 transpose: the output is height × width (one band then: the stored rows are the output's columns).
  const [outH, outW] = orientation >= 5 ? [l.width, l.height] : [l.height, l.width];
  const rowBytes = outW * channels;
  const out = acquireStorage(ctx, rowBytes * outH, 'jpeg');
  const mcuRows = mcuRowsOf(l);
  // Plane buffers for the largest band, reused by every band (the queue runs the dispatches in order).
  const planes = l.components.map((c) => {
    const bytes = Math.min(bandRows * c.v + 2, c.blocksH) * 8 * c.stride * 8;
    return { binding: range(rec.storage(deviceBytes(bytes), 'jpeg plane'), 0, bytes), rowWords: c.stride * 2 };
  });
  const pieces = Math.ceil(mcuRows / bandRows);
  const status = rangeStatus(ctx, rec);
  rec.split(pieces);
  for (let m0 = 0; m0 < mcuRows; m0 += bandRows) {
    const m1 = Math.min(m0 + bandRows, mcuRows);
    const first = l.components.map((c, i) => {
      const [r0, r1] = blockRows(l, c, m0, m1);
      const blocks = (r1 - r0) * c.blocksW;
      const [x, y] = grid1d(ctx, Math.ceil(blocks / IDCT_WG));
      rec.dispatch('jpeg.idct', plan.idct, {
        coefs: range(coefs, c.offset + r0 * c.stride * BLOCK_BYTES, (r1 - r0) * c.stride * BLOCK_BYTES),
        quant: range(coefs, i * QUANT_BYTES, QUANT_BYTES),
        plane: planes[i].binding,
        P: rec.uniform(IdctParams, { blocksW: c.blocksW, blocks, stride: c.stride }),
        status,
      }, x, y);
      return r0 * 8;
    });
    const y0 = m0 * 8 * l.maxV;
    const y1 = bandRows >= mcuRows ? outH : Math.min(m1 * 8 * l.maxV, l.height);
    const byteStart = y0 * rowBytes;
    const bandBytes = (y1 - y0) * rowBytes;
    const bindAt = Math.floor(byteStart / 256) * 256;
    const words = Math.ceil(bandBytes / 4);
    // A gray output binds plane 0 only: planes 1 and 2 repeat its parameters (never read).
    const geometry = (p: number): [number, number, number, number] => {
      const c = l.components[Math.min(p, l.components.length - 1)];
      return [first[p] ?? first[0], (planes[p] ?? planes[0]).rowWords, c.samplesW, c.samplesH];
    };
    const P = rec.uniform(ColourParams, {
      width: l.width, height: l.height, outWidth: outW, orientation, channels, y0, bandBytes, wordBase: (byteStart - bindAt) / 4, words,
      g0: geometry(0), g1: geometry(1), g2: geometry(2), u0: upsampling(l, 0), u1: upsampling(l, 1), u2: upsampling(l, 2),
    });
    // An invocation per 4 pixels (jpeg_ycc, jpeg_gray).
    const [x, y] = grid1d(ctx, Math.ceil(Math.ceil(bandBytes / channels / 4) / COLOUR_WG));
    const dst = range(out, bindAt, byteStart + bandBytes - bindAt);
    if (channels === 3) rec.dispatch('jpeg.ycc', plan.ycc, { plane0: planes[0].binding, plane1: planes[1].binding, plane2: planes[2].binding, dst, P }, x, y);
    else rec.dispatch('jpeg.gray', plan.gray, { plane0: planes[0].binding, dst, P }, x, y);
  }
  return { image: new GpuImage(ctx, out, [outH, outW], channels, 'uint8'), inRange: readRange(rec, status) };
}

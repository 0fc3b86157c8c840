// JPEG encoding with the arithmetic on the GPU: libjpeg's colour conversion, downsampling, islow forward DCT and
// quantization run on the device (kernels.wgsl.ts); then either the quantized coefficients come back and libjpeg codes
// them (the platform's JpegEncodeFrontEnd: native/coef-encode.c, jpeg_write_coefficients) on this thread or off it, or
// the GPU codes them too (huffman-encode.ts, entropy: 'gpu', the default) and only the file's coded bytes come back.
// The file is cv2.imwrite's byte for byte (docs/jpeg-encode.md).
import { GpuLimitError, InvalidArgumentError, UnsupportedFormatError } from '../../../core/errors.js';
import { fmtBytes, type GpuContext } from '../../../core/gpu/context.js';
import { grid1d } from '../../../core/gpu/dispatch.js';
import type { GpuImage } from '../../../core/gpu/gpu-image.js';
import { maxBinding } from '../../../core/gpu/limits.js';
import { Recording } from '../../../core/gpu/recording.js';
import { KernelTimer } from '../../../core/gpu/timer.js';
import { acquireStorage, deviceBytes, downloadView } from '../../../core/gpu/transfer.js';
import { JpegEncodeParams, jpegEncodeWgsl } from './kernels.wgsl.js';
import { blockLayout, SAMPLING, type BlockLayout, type JpegSubsampling } from './block-layout.js';

import { checkEntropy, type HostBuffers, type JpegEntropyPath } from '../options.js';

export type { JpegEntropyPath } from '../options.js';
import { gpuEntropyFits, huffmanFromHeaders, JpegHuffmanPlan } from './huffman-encode.js';

export { blockLayout, type BlockLayout, type JpegSubsampling };


/**
 * What the encoder needs done natively (libjpeg: the platform implements it — node/jpeg-encode-gpu.ts with
 * native/coef-encode.c): the quantization tables libjpeg scales for a quality, the file's headers, and the entropy
 * coding of the quantized coefficients (jpeg_write_coefficients) on this thread or off it.
 */
export interface JpegEncodeFrontEnd {
  encode(coefs: Int16Array, width: number, height: number, components: 1 | 3, quality: number, hSamp: number, vSamp: number): Uint8Array;
  encodeAsync(coefs: Int16Array, width: number, height: number, components: 1 | 3, quality: number, hSamp: number, vSamp: number): Promise<Uint8Array>;
  quantTables(quality: number): Uint16Array;
  headers(width: number, height: number, components: 1 | 3, quality: number, hSamp: number, vSamp: number): Uint8Array;
}

/** The front end, or why the platform has none (the encode is then refused, after the checks of the image). */
export type JpegEncodeCoder = JpegEncodeFrontEnd | { missing: string };

/**
 * libjpeg-turbo's compute_reciprocal (jcdctmgr.c) for one divisor: quantize(x) = sign(x)·(((|x| + correction) ·
 * reciprocal) >> shift), which its C and SIMD quantizers both compute — equal to the rounded division.
 */
export function reciprocal(divisor: number): [reciprocal: number, correction: number, shift: number] {
  const b = 31 - Math.clz32(divisor);
  let r = 16 + b;
  let fq = Math.floor(2 ** r / divisor);
  const fr = 2 ** r % divisor;
  let c = divisor >>> 1;
  if (fr === 0) {
    fq >>>= 1; // a power of two: the reciprocal would not fit 16 bits
    r--;
  } else if (fr <= divisor >>> 1) {
    c++;
  } else {
    fq++;
  }
  return [fq, c, r];
}

/** The (reciprocal, correction, shift, 0) table the kernel quantizes with: islow's divisors are quantval << 3. */
function quantizerTable(quant: Uint16Array): Uint32Array {
  const out = new Uint32Array(quant.length * 4);
  quant.forEach((q, i) => out.set(reciprocal(q << 3), 4 * i));
  return out;
}

/** Bands of MCU rows whose pixels and coefficients each fit one binding; each band starts at an even MCU row. */
export function jpegBands(layout: BlockLayout, channels: number, limit: number): { r0: number; rows: number }[] {
  const inRow = 8 * layout.vSamp * layout.width * channels;
  const outRow = layout.perRow * 128;
  // 512 bytes of slack: the pixel binding starts up to 255 bytes before the band's first row (offset alignment)
  // and ends up to 15 after its last (rounded up to 16).
  const fit = Math.floor((limit - 512) / Math.max(inRow, outRow)) & ~1;
  if (fit < 2) return [];
  const bands = [];
  for (let r0 = 0; r0 < layout.mcuRows; r0 += fit) bands.push({ r0, rows: Math.min(fit, layout.mcuRows - r0) });
  return bands;
}

const WG = 64;

/** The encoder's pipeline on one context. */
class JpegEncodeGpuPlan {
  private constructor(private readonly ctx: GpuContext, private readonly pipeline: GPUComputePipeline) {}

  static prepare(ctx: GpuContext): Promise<JpegEncodeGpuPlan> {
    return ctx.plan('jpeg:encode', async () => new JpegEncodeGpuPlan(ctx, await ctx.pipeline('jpeg-encode', jpegEncodeWgsl, 'jpeg_encode', { WG })));
  }

  /** Records the coefficients of `img` into `coefs`, band by band. */
  encode(rec: Recording, img: GpuImage, layout: BlockLayout, quant: GPUBuffer, coefs: GPUBuffer): void {
    const ctx = this.ctx;
    const { width } = layout;
    const channels = img.channels;
    const bands = jpegBands(layout, channels, maxBinding(ctx));
    if (!bands.length) throw new GpuLimitError(`JPEG encode: two MCU rows of a ${width}-pixel-wide image are more than this adapter binds; use the CPU JPEG path (jpeg: 'cpu')`);
    const align = ctx.limits.minStorageBufferOffsetAlignment;
    const mcuH = 8 * layout.vSamp;
    rec.split(bands.length);
    const comp = (c: number) => {
      const k = layout.comps[Math.min(c, layout.components - 1)];
      return [k.blocks, c < layout.components ? k.offset : layout.perRow, k.hexp, k.vexp];
    };
    for (const { r0, rows } of bands) {
      const y0 = r0 * mcuH;
      const first = y0 * width * channels;
      const base = first - (first % align);
      const end = Math.min(img.buffer.size, deviceBytes(Math.min(layout.height, y0 + rows * mcuH) * width * channels));
      const outBytes = rows * layout.perRow * 128;
      const P = rec.uniform(JpegEncodeParams, {
        width, height: layout.height, channels, perRow: layout.perRow, rows, y0, inDelta: first - base, maxV: layout.vSamp, r0,
        c0: comp(0), c1: comp(1), c2: comp(2),
      });
      const [x, y] = grid1d(ctx, Math.ceil((rows * layout.perRow) / WG));
      rec.dispatch('jpeg.encode', this.pipeline, {
        src: { buffer: img.buffer, offset: base, size: end - base },
        dst: { buffer: coefs, offset: r0 * layout.perRow * 128, size: outBytes },
        Q: quant,
        P,
      }, x, y);
    }
  }
}

/** Options of encodeJpegGpu. */
export interface JpegGpuEncodeOptions {
  /** 1–100, as cv2's IMWRITE_JPEG_QUALITY. @default 95 */
  quality?: number;
  /** Chroma subsampling of a colour image (gray has one component). @default '4:2:0' (cv2.imwrite's) */
  subsampling?: JpegSubsampling;
  /** Where the entropy coding runs on the CPU (entropy 'cpu', or past the GPU coder's bindings): libuv's thread pool instead of the calling thread. @default false */
  async?: boolean;
  /** Filled with the time of each phase, in milliseconds (bench/jpeg-encode.ts). */
  phases?: JpegEncodePhases;
  /**
   * The coefficients are copied out of the mapped readback memory into this host memory, which the entropy coder
   * then reads, so the readback buffer goes back at once (a batch: jpeg-gpu-decode.ts HostBuffers says why).
   * Without it the coder reads the mapped memory itself, no copy. With GPU entropy coding the file itself is assembled
   * in this memory (its coded bytes copied there off the JavaScript thread): give `file.buffer` back with
   * `host.give` once the file is written (a file from the CPU coder is not host memory; give ignores it).
   */
  host?: HostBuffers;
  /**
   * Where the entropy (Huffman) coding runs: 'gpu' (codecs/jpeg/encode/huffman-encode.ts: only the coded bytes are downloaded) or 'cpu'
   * (the coefficients are downloaded and libjpeg codes them on a CPU thread). The same bytes either way; an image
   * whose coded data would not fit the GPU coder's bindings is coded on the CPU. @default defaultEntropy()
   */
  entropy?: JpegEntropyPath;
  /**
   * The recording that computes the image, not yet submitted (the operation's, GpuRunOptions.recording): the encode
   * is recorded after it and submits it — one submission for both. Without phases only (timed phases flush it first).
   */
  recording?: Recording;
}




/**
 * Where an encode's time went: the GPU's arithmetic (recording, submission and the wait for it), its kernels alone
 * (timestamps; 0 where the adapter has none), the coefficients' download, the entropy coding.
 */
export interface JpegEncodePhases {
  gpu: number;
  kernels: number;
  download: number;
  entropy: number;
  /**
   * Where the entropy coding ran. With 'gpu', `gpu` is the first round trip (the coefficients' recording to the first
   * download read: the arithmetic's time is in it; where the coded bytes fit the capacity guessed, all of the coding,
   * the file's assembly included), `entropy` the second where there is one (packing and stuffing again at the exact
   * size, the download, the assembly; else 0), `download` 0 (part of those).
   */
  entropyPath?: JpegEntropyPath;
}

/** Whether encodeJpegGpu takes this image: 8-bit gray or RGB, 2D. */
export function gpuJpegEncodable(img: GpuImage): boolean {
  return img.dtype === 'uint8' && (img.channels === 1 || img.channels === 3) && img.shape.length === 2;
}

/** The checks before any work: an 8-bit 2D gray or RGB image, a quality and subsampling libjpeg takes, the coder built. */
function checkEncodable(img: GpuImage, quality: number, subsampling: JpegSubsampling, coder: JpegEncodeCoder): JpegEncodeFrontEnd {
  if (!gpuJpegEncodable(img)) {
    throw new UnsupportedFormatError(`JPEG on the GPU encodes 8-bit gray or RGB 2D images; this one is ${img.shape.join('×')}×${img.channels} ${img.dtype}`);
  }
  if (!Number.isInteger(quality) || quality < 1 || quality > 100) throw new InvalidArgumentError(`JPEG quality must be an integer in 1..100, got ${quality}`);
  if (!Object.hasOwn(SAMPLING, subsampling)) throw new InvalidArgumentError(`JPEG subsampling must be one of ${Object.keys(SAMPLING).join(', ')}, got ${String(subsampling)}`);
  const [h, w] = img.shape;
  if (w > 65500 || h > 65500) throw new UnsupportedFormatError(`JPEG holds at most 65500×65500 pixels; this image is ${w}×${h}`);
  if ('missing' in coder) {
    throw new UnsupportedFormatError(`the GPU JPEG encoder needs imgpu's native entropy coder (${coder.missing}); use the CPU JPEG path (jpeg: 'cpu')`);
  }
  return coder;
}

/** The coefficients read back: the mapped readback memory itself, or (with `host`) a copy of it in host memory. */
async function coefficientsOnHost(ctx: GpuContext, coefs: GPUBuffer, bytes: number, host?: HostBuffers): Promise<{ data: Int16Array; release(): void }> {
  const view = await downloadView(ctx, coefs, bytes);
  if (!host) return { data: new Int16Array(view.bytes, 0, bytes / 2), release: view.release };
  const mem = host.alloc(bytes);
  try {
    ctx.hostCopy(new Uint8Array(mem, 0, bytes), new Uint8Array(view.bytes, 0, bytes));
  } finally {
    view.release();
  }
  return { data: new Int16Array(mem, 0, bytes / 2), release: () => host.give(mem) };
}

/** One encode's fixed parts: the image, its layout and settings, the native coder, the pipelines. */
interface EncodeJob {
  img: GpuImage;
  layout: BlockLayout;
  quality: number;
  native: JpegEncodeFrontEnd;
  plan: JpegEncodeGpuPlan;
  /** The GPU entropy coder's, where it codes this image. */
  huffman?: JpegHuffmanPlan;
  opts: JpegGpuEncodeOptions;
}

/** Compiles the GPU encoder's kernels on `ctx`, its entropy coder's where `entropy` is 'gpu' (jpeg-gpu.ts prepareJpegGpu). */
export async function prepareJpegEncode(ctx: GpuContext, entropy: JpegEntropyPath): Promise<void> {
  await Promise.all([JpegEncodeGpuPlan.prepare(ctx), entropy === 'gpu' ? JpegHuffmanPlan.prepare(ctx) : undefined]);
}

/**
 * Encodes a resident 8-bit gray or RGB image to JPEG with the arithmetic on the GPU: the bytes cv2.imwrite writes
 * for the same pixels at the same quality (and, for colour, subsampling). The image stays resident and usable.
 */
export async function encodeJpegGpu(img: GpuImage, coder: JpegEncodeCoder, defaultEntropy: () => JpegEntropyPath, opts: JpegGpuEncodeOptions = {}): Promise<Uint8Array> {
  const quality = opts.quality ?? 95;
  const subsampling = opts.subsampling ?? '4:2:0';
  const native = checkEncodable(img, quality, subsampling, coder);
  const entropy = opts.entropy === undefined ? defaultEntropy() : checkEntropy(opts.entropy, 'JPEG entropy coding');
  img.assertLive();
  const ctx = img.ctx;
  const [h, w] = img.shape;
  const layout = blockLayout(w, h, img.channels as 1 | 3, subsampling);
  const plan = await JpegEncodeGpuPlan.prepare(ctx);
  const coefBytes = layout.mcuRows * layout.perRow * 128;
  if (coefBytes > ctx.limits.maxBufferSize) {
    throw new GpuLimitError(`JPEG encode of a ${w}×${h} image needs ${fmtBytes(coefBytes)} of coefficients, more than one buffer of this adapter holds (${fmtBytes(ctx.limits.maxBufferSize)}); use the CPU JPEG path (jpeg: 'cpu')`);
  }
  const huffman = entropy === 'gpu' && gpuEntropyFits(ctx, layout) ? await JpegHuffmanPlan.prepare(ctx) : undefined;
  return ctx.scoped('jpeg encode', () => encodeInto({ img, layout, quality, native, plan, huffman, opts }));
}

/**
 * The coefficients computed, then coded on the GPU (job.huffman) or, where it is not asked for or the coded bytes
 * would not fit its bindings, on the CPU.
 */
async function encodeInto(job: EncodeJob): Promise<Uint8Array> {
  const { img, layout, quality, native, plan, huffman, opts } = job;
  const ctx = img.ctx;
  const [h, w] = img.shape;
  const coefBytes = layout.mcuRows * layout.perRow * 128;
  const quant = quantizerTable(native.quantTables(quality));
  /**
   * Records the image's coefficients into `rec`: into `into`, or (GPU entropy coding) into a buffer of the
   * recording's own, back in the pool once it is submitted — where one held until the coded bytes were read back, a
   * batch's photos in flight each held theirs, and photos of many sizes created 71 of them (57 ms of the main thread
   * of a 210-photo batch on the H200). The GPU coder records them again where it packs a second time.
   */
  const coefficients = (rec: Recording, into?: GPUBuffer): GPUBuffer => {
    const coefs = into ?? rec.storage(coefBytes, 'jpeg coefficients');
    plan.encode(rec, img, layout, rec.storageFrom(quant, 'jpeg quantizers'), coefs);
    return coefs;
  };
  // Timed (timestamps, and waits for the device) only when the phases are asked for.
  const timer = new KernelTimer(ctx, !!opts.phases);
  try {
    const t0 = performance.now();
    if (opts.phases) opts.recording?.flush();
    let rec = (!opts.phases && opts.recording) || new Recording(ctx, timer, 'jpeg encode', true);
    if (huffman) {
      const headers = native.headers(w, h, layout.components, quality, layout.hSamp, layout.vSamp);
      const newRecording = () => new Recording(ctx, timer, 'jpeg entropy', true);
      const coded = await huffman.code(rec, layout, coefficients(rec), huffmanFromHeaders(headers), headers, newRecording, coefficients, opts.host);
      if (coded) {
        if (opts.phases) Object.assign(opts.phases, { gpu: coded.gpu, kernels: await kernelMs(timer), download: 0, entropy: coded.entropy, entropyPath: 'gpu' });
        return coded.file;
      }
      rec = new Recording(ctx, timer, 'jpeg encode', true); // past the GPU coder's bindings: computed again for libjpeg
    }
    const coefs = acquireStorage(ctx, coefBytes, 'jpeg coefficients');
    try {
      coefficients(rec, coefs);
      rec.submit();
      const kernels = opts.phases ? (await ctx.finish(), await kernelMs(timer)) : 0;
      return await codeOnCpu(job, coefs, opts.phases && { gpu: performance.now() - t0, kernels });
    } finally {
      ctx.buffers.release(coefs);
    }
  } finally {
    timer.destroy();
  }
}

/** The kernels' total time from their timestamps (0 where the adapter has none). */
async function kernelMs(timer: KernelTimer): Promise<number> {
  return (await timer.read()).reduce((a, k) => a + k.ms, 0);
}

/**
 * The coefficients downloaded and coded by libjpeg on this thread or (opts.async) libuv's. `timing`: the phases
 * so far, to complete opts.phases with.
 */
async function codeOnCpu(job: EncodeJob, coefs: GPUBuffer, timing?: { gpu: number; kernels: number }): Promise<Uint8Array> {
  const { img, layout, quality, native, opts } = job;
  const [h, w] = img.shape;
  const ctx = img.ctx;
  const t1 = performance.now();
  const coefsOnHost = await coefficientsOnHost(ctx, coefs, layout.mcuRows * layout.perRow * 128, opts.host);
  const t2 = performance.now();
  try {
    const data = coefsOnHost.data;
    const jpeg = opts.async
      ? await native.encodeAsync(data, w, h, layout.components, quality, layout.hSamp, layout.vSamp)
      : native.encode(data, w, h, layout.components, quality, layout.hSamp, layout.vSamp);
    if (opts.phases && timing) Object.assign(opts.phases, { gpu: timing.gpu, kernels: timing.kernels, download: t2 - t1, entropy: performance.now() - t2, entropyPath: 'cpu' });
    return jpeg;
  } finally {
    // The coder read the coefficients' memory; it is given back only once it is done.
    coefsOnHost.release();
  }
}

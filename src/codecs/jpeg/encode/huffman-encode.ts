// The entropy coding of the GPU JPEG encoder on the GPU (issue 20's stretch goal): baseline sequential Huffman
// coding with the file's own tables (libjpeg's standard ones, as cv2.imwrite writes them), byte stuffing, and only
// the coded bytes downloaded. The headers come from libjpeg's marker writer (native/coef-encode.c `headers`), so
// the file is the one jpeg_write_coefficients writes from the same coefficients, byte for byte
// (docs/jpeg-encode.md says how).
import type { GpuContext } from '../../../core/gpu/context.js';
import { grid1d } from '../../../core/gpu/dispatch.js';
import { maxBinding } from '../../../core/gpu/limits.js';
import { PrefixSum } from '../../../core/gpu/prefix-sum.js';
import type { Recording } from '../../../core/gpu/recording.js';
import { acquireStorage, deviceBytes, downloadChunks, downloadView, type CopyTarget } from '../../../core/gpu/transfer.js';
import type { BlockLayout } from './block-layout.js';
import type { HostBuffers } from '../options.js';
import { AC_BASE, AC_TABLE, DC_TABLE, HuffParams, jpegHuffmanWgsl, jpegStuffWgsl, StuffParams, TABLES_LENGTH, ZIGZAG_BASE, zigzagNatural } from './huffman.wgsl.js';

/** Huffman tables and which of them each component of the scan uses, read from a file's headers. */
export interface HuffmanSetup {
  /**
   * (size << 16 | code) per symbol: DC tables 0 and 1 (DC_TABLE entries each), then AC tables 0 and 1 (AC_TABLE);
   * then the zigzag order (the natural index of each coded coefficient).
   */
  tables: Uint32Array;
  /** Per component in scan order: its DC table | its AC table << 8. */
  selectors: number[];
}

const SOS = 0xda;
const DHT = 0xc4;

/**
 * The Huffman codes of the DHT segments and the table selectors of the SOS segment of `headers` (SOI … SOS, as
 * libjpeg wrote them): codes made as jchuff.c jpeg_make_c_derived_tbl makes them (canonical: consecutive within a
 * length, doubled at each longer length).
 */
export function huffmanFromHeaders(headers: Uint8Array): HuffmanSetup {
  const tables = new Uint32Array(TABLES_LENGTH);
  tables.set(zigzagNatural(), ZIGZAG_BASE);
  const selectors: number[] = [];
  let p = 2;
  while (p + 4 <= headers.length && headers[p] === 0xff) {
    const marker = headers[p + 1];
    const end = p + 2 + ((headers[p + 2] << 8) | headers[p + 3]);
    let q = p + 4;
    if (marker === DHT) {
      while (q < end) q = readTable(headers, q, tables);
    } else if (marker === SOS) {
      for (let i = 0; i < headers[q]; i++) selectors.push((headers[q + 2 + 2 * i] >> 4) | ((headers[q + 2 + 2 * i] & 15) << 8));
      return { tables, selectors };
    }
    p = end;
  }
  throw new Error('JPEG headers without a scan header (SOS)');
}

/** Reads one table of a DHT segment at `q` into `tables`; returns the offset after it. */
function readTable(h: Uint8Array, q: number, tables: Uint32Array): number {
  const ac = h[q] >> 4, id = h[q] & 15;
  const base = ac ? AC_BASE + id * AC_TABLE : id * DC_TABLE;
  let sym = q + 17, code = 0;
  for (let len = 1; len <= 16; len++, code <<= 1) {
    for (let i = 0; i < h[q + len]; i++) tables[base + h[sym++]] = (len << 16) | code++;
  }
  return sym;
}

/** A file coded on the GPU, and the time of the coding's two halves (JpegEncodePhases says which is which). */
export interface GpuCoded {
  file: Uint8Array;
  gpu: number;
  entropy: number;
}

/** jchuff.c's longest block: a DC code and 11 extra bits, 63 AC codes of 16 bits with 10 extra bits each. */
const MAX_BLOCK_BITS = 16 + 11 + 63 * (16 + 10);
const WG = 64;

/** Bands of MCU rows whose coefficients, with the MCU row before (the DC predictions), fit one binding. */
export function entropyBands(layout: BlockLayout, limit: number): { r0: number; rows: number }[] {
  const rows = Math.floor((Math.floor(limit / 128) - 1) / layout.perRow) - 1;
  if (rows < 1) return [];
  const bands = [];
  for (let r0 = 0; r0 < layout.mcuRows; r0 += rows) bands.push({ r0, rows: Math.min(rows, layout.mcuRows - r0) });
  return bands;
}

/** Whether the GPU entropy coder can take this layout on `ctx`: its bit offsets in u32, its arrays each in one binding. */
export function gpuEntropyFits(ctx: GpuContext, layout: BlockLayout): boolean {
  const n = layout.mcuRows * layout.perRow;
  return n * MAX_BLOCK_BITS < 2 ** 32 && (n + 1) * 4 <= maxBinding(ctx) && entropyBands(layout, maxBinding(ctx)).length > 0;
}

/** The GPU entropy coder's pipelines on one context. */
export class JpegHuffmanPlan {
  private constructor(
    private readonly ctx: GpuContext,
    private readonly count: GPUComputePipeline,
    private readonly pack: GPUComputePipeline,
    private readonly ffCount: GPUComputePipeline,
    private readonly scatter: GPUComputePipeline,
    private readonly scan: PrefixSum,
  ) {}

  static prepare(ctx: GpuContext): Promise<JpegHuffmanPlan> {
    return ctx.plan('jpeg:huffman', async () => {
      const huff = jpegHuffmanWgsl(), stuff = jpegStuffWgsl();
      const [count, pack, ffCount, scatter, scan] = await Promise.all([
        ctx.pipeline('jpeg-huffman', huff, 'huff_count', { WG }),
        ctx.pipeline('jpeg-huffman', huff, 'huff_pack', { WG }),
        ctx.pipeline('jpeg-stuff', stuff, 'stuff_count', { WG }),
        ctx.pipeline('jpeg-stuff', stuff, 'stuff_scatter', { WG }),
        PrefixSum.prepare(ctx),
      ]);
      return new JpegHuffmanPlan(ctx, count, pack, ffCount, scatter, scan);
    });
  }

  /**
   * Codes the blocks of `coefs` (computed by `rec`'s earlier passes, `rec`'s own: `rec` is submitted here; a
   * second pack records them again with `coefficients`) and returns the file:
   * `headers`, the entropy-coded segment (stuffed, padded), EOI. One round trip where the coded bytes fit the
   * capacity guessed for them (codedCapacity: from the photos coded before on this context), the kernels reading
   * their true count on the device; where they do not, a second submission packs them again at their exact size.
   * Undefined, with nothing coded, where the coded bytes would not fit one binding (the caller codes on the CPU: the
   * same file). With `host`, the file is assembled in its memory (readFile says how; the caller may give
   * `file.buffer` back once written).
   */
  async code(
    rec: Recording, layout: BlockLayout, coefs: GPUBuffer, huff: HuffmanSetup, headers: Uint8Array, newRecording: () => Recording,
    coefficients: (rec: Recording) => GPUBuffer, host?: HostBuffers,
  ): Promise<GpuCoded | undefined> {
    const ctx = this.ctx;
    const t0 = performance.now();
    const n = layout.mcuRows * layout.perRow;
    // Both submissions read these two: given back after the second.
    const tables = acquireStorage(ctx, huff.tables.byteLength, 'jpeg huffman tables');
    const bits = acquireStorage(ctx, (n + 1) * 4, 'jpeg block bits');
    let out: GPUBuffer | undefined;
    try {
      ctx.device.queue.writeBuffer(tables, 0, huff.tables as Uint32Array<ArrayBuffer>);
      this.perBand(rec, this.count, layout, coefs, huff, { tables, bits });
      this.scan.record(rec, bits, n + 1);
      const guess = codedCapacity(ctx, n);
      if (this.fits(guess)) out = this.packAndStuff(rec, layout, coefs, huff, { tables, bits }, n, guess);
      // The coded bytes' first readback chunk is copied in this same submission (one fewer a photo).
      const reading = out && readFile(ctx, out, guess, headers, host, rec);
      rec.submit();
      const first = reading && (await reading);
      const t1 = performance.now();
      if (first && 'file' in first) {
        noteCoded(ctx, n, first.bytes);
        return { file: first.file, gpu: t1 - t0, entropy: 0 };
      }
      if (out) ctx.buffers.release(out);
      out = undefined;
      const bytes = first ? first.bytes : Math.ceil((await readU32(ctx, bits, 4 * n)) / 8);
      noteCoded(ctx, n, bytes);
      if (!this.fits(bytes)) return undefined;
      const rec2 = newRecording();
      out = this.packAndStuff(rec2, layout, coefficients(rec2), huff, { tables, bits }, n, bytes);
      rec2.submit();
      const again = await readFile(ctx, out, bytes, headers, host);
      if (!('file' in again)) throw new Error(`GPU JPEG entropy coding: ${again.bytes} coded bytes where ${bytes} were counted`);
      return { file: again.file, gpu: t1 - t0, entropy: performance.now() - t1 };
    } finally {
      if (out) ctx.buffers.release(out);
      ctx.buffers.release(bits);
      ctx.buffers.release(tables);
    }
  }

  /** Whether `bytes` coded bytes, stuffed at worst, and their packed words fit one binding. */
  private fits(bytes: number): boolean {
    const limit = maxBinding(this.ctx);
    return deviceBytes(8 + 2 * bytes) <= limit && (Math.ceil(bytes / 4) + 1) * 4 <= limit;
  }

  /**
   * Records packing and stuffing for up to `capacity` coded bytes into a new `out` buffer (the caller's to release
   * once read): word 0 the count of stuffed zeros, word 1 the coded bits (the scan's total, which the kernels read
   * too), the stuffed bytes from byte 8. Past the capacity nothing valid is written: the bits say so.
   */
  private packAndStuff(rec: Recording, layout: BlockLayout, coefs: GPUBuffer, huff: HuffmanSetup, b: { tables: GPUBuffer; bits: GPUBuffer }, n: number, capacity: number): GPUBuffer {
    const words = Math.ceil(capacity / 4);
    const out = acquireStorage(this.ctx, 8 + 2 * capacity, 'jpeg coded bytes');
    const packed = rec.storage(words * 4, 'jpeg packed bits');
    const ff = rec.storage((words + 1) * 4, 'jpeg 0xff counts');
    rec.clear(packed, deviceBytes(words * 4));
    rec.clear(out, deviceBytes(8 + 2 * capacity));
    this.perBand(rec, this.pack, layout, coefs, huff, { ...b, words: packed });
    this.stuff(rec, { words: packed, ff, out, bits: b.bits }, capacity, words, n);
    rec.copyRange(ff, 4 * words, out, 0, 4);
    rec.copyRange(b.bits, 4 * n, out, 4, 4);
    return out;
  }

  /** One dispatch of `pipeline` (count or pack) per band of MCU rows. */
  private perBand(rec: Recording, pipeline: GPUComputePipeline, layout: BlockLayout, coefs: GPUBuffer, huff: HuffmanSetup, buffers: Record<string, GPUBuffer>): void {
    const bands = entropyBands(layout, maxBinding(this.ctx));
    rec.split(bands.length);
    for (const { r0, rows } of bands) {
      const b0 = (Math.max(r0 - 1, 0) * layout.perRow) & ~1;
      const end = (r0 + rows) * layout.perRow;
      const count = rows * layout.perRow;
      const P = rec.uniform(HuffParams, { ...huffParams(layout, huff), s0: r0 * layout.perRow, count, b0 });
      const [x, y] = grid1d(this.ctx, Math.ceil(count / WG));
      rec.dispatch(`jpeg.${pipeline === this.pack ? 'pack' : 'count'}`, pipeline, { ...buffers, coefs: { buffer: coefs, offset: b0 * 128, size: (end - b0) * 128 }, P }, x, y);
    }
  }

  /** Byte stuffing: 0xFF counts per packed word, their prefix sum, the bytes scattered to their places in `out`. */
  private stuff(rec: Recording, buffers: { words: GPUBuffer; ff: GPUBuffer; out: GPUBuffer; bits: GPUBuffer }, bytes: number, words: number, n: number): void {
    const S = rec.uniform(StuffParams, { bytes, words, total: n });
    const [x, y] = grid1d(this.ctx, Math.ceil((words + 1) / WG));
    rec.dispatch('jpeg.stuff-count', this.ffCount, { words: buffers.words, ff: buffers.ff, bits: buffers.bits, S }, x, y);
    this.scan.record(rec, buffers.ff, words + 1);
    rec.dispatch('jpeg.stuff-scatter', this.scatter, { ...buffers, S }, x, y);
  }
}

/** The kernels' parameters that every band shares: the layout's geometry and each component's place and tables. */
function huffParams(layout: BlockLayout, huff: HuffmanSetup) {
  const mcuCols = layout.comps[0].blocks / layout.hSamp;
  const bpm = layout.perRow / mcuCols;
  const absent = [0xffffffff, 0, 0, 0];
  const c: number[][] = [], d: number[][] = [];
  let start = 0;
  for (let i = 0; i < 3; i++) {
    const k = layout.comps[i];
    if (!k) {
      c.push([1, 1, 0, 0]);
      d.push(absent);
      continue;
    }
    const [h, v] = i === 0 ? [layout.hSamp, layout.vSamp] : [1, 1];
    // libjpeg's width_in_blocks / height_in_blocks: ceil(image size · factor / (8 · max factor)).
    const wib = Math.ceil((layout.width * h) / (8 * layout.hSamp));
    const hib = Math.ceil((layout.height * v) / (8 * layout.vSamp));
    c.push([h, v, wib, hib]);
    d.push([start, k.offset, k.blocks, huff.selectors[i]]);
    start += h * v;
  }
  return { n: layout.mcuRows * layout.perRow, perRow: layout.perRow, mcuCols, bpm, c0: c[0], c1: c[1], c2: c[2], d0: d[0], d1: d[1], d2: d[2] };
}

/** The u32 at byte `offset` of a device buffer. */
async function readU32(ctx: GpuContext, buffer: GPUBuffer, offset: number): Promise<number> {
  const at = offset & ~255;
  const view = await downloadView(ctx, buffer, offset - at + 4, at);
  try {
    return new Uint32Array(view.bytes, offset - at, 1)[0];
  } finally {
    view.release();
  }
}

/**
 * The coded bytes per block guessed before any photo is coded; a factor on the guessed capacity (0 in a test: 1 KiB,
 * so that most photos are packed twice).
 */
export const entropyTuning = { bytesPerBlock: 12, capacityScale: 1 };

/** JPEG's end-of-image marker, which libjpeg's write_file_trailer writes after the coded data. */
const EOI = [0xff, 0xd9];

/**
 * The file: `headers`, the stuffed bytes of `out` (packAndStuff's layout: room for `capacity` bytes stuffed at worst),
 * EOI — or, where the coded bytes exceed the `capacity` the kernels had, only their count (the caller packs again).
 * One readback through the context's uniform readback chunks (downloadChunks), which the photos of a batch, of every
 * size, share: the first chunk, which holds the count, then only the chunks that hold the coded bytes (a second
 * submission, for photos coded to more than a chunk) — not the capacity, sized for the most bytes per block seen (on
 * the H200, a batch of 210 photos of 1–24 MP otherwise held up to 290 MiB of chunks at once, 70 created, ~1.2 ms of the
 * main thread each). With `host` (a batch) the file goes into its recycled memory and the coded bytes are copied there
 * off the JavaScript thread (HostCopy.async): a fresh array per photo (zeroed by the allocator) and the synchronous copy
 * out of mapped memory were 286 and 276 ms of a 210-photo batch's main thread on the H100. Without it (one image), a
 * new array and the context's parallel copy: the least latency. With `into`, the first chunk's copy is recorded there:
 * call before its submission (downloadChunks).
 */
async function readFile(
  ctx: GpuContext, out: GPUBuffer, capacity: number, headers: Uint8Array, host?: HostBuffers, into?: CopyTarget,
): Promise<{ file: Uint8Array; bytes: number } | { bytes: number }> {
  let bytes = 0, coded = 0;
  const view = await downloadChunks(ctx, out, 8 + 2 * capacity, 0, (u32) => {
    bytes = Math.ceil(u32(4) / 8);
    coded = bytes + u32(0);
    return bytes > capacity ? 8 : 8 + coded;
  }, into);
  if (bytes > capacity) {
    view.release();
    return { bytes };
  }
  const length = headers.length + coded + EOI.length;
  const file = host ? new Uint8Array(host.alloc(length), 0, length) : new Uint8Array(length);
  try {
    file.set(headers);
    await view.copyTo(file.subarray(headers.length, headers.length + coded), 8, !!host);
    file.set(EOI, headers.length + coded);
    return { file, bytes };
  } catch (e) {
    host?.give(file.buffer);
    throw e;
  } finally {
    view.release();
  }
}

/**
 * Coded bytes per block the capacity allows for, per context: the most seen so far (noteCoded), 12 before any
 * (camera-like photos at quality 95 code to about 9; smooth ones to far fewer).
 */
const codedPerBlock = new WeakMap<GpuContext, number>();

/** The capacity guessed for the coded bytes of `blocks` blocks: a quarter above the most per block seen, and 1 KiB. */
function codedCapacity(ctx: GpuContext, blocks: number): number {
  return Math.ceil(blocks * (codedPerBlock.get(ctx) ?? entropyTuning.bytesPerBlock) * 1.25 * entropyTuning.capacityScale) + 1024;
}

/** Notes the coded bytes of `blocks` blocks for later guesses. */
function noteCoded(ctx: GpuContext, blocks: number, bytes: number): void {
  codedPerBlock.set(ctx, Math.max(codedPerBlock.get(ctx) ?? 0, bytes / blocks));
}

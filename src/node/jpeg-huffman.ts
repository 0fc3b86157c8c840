// The entropy coding of the GPU JPEG encoder on the GPU (issue 20's stretch goal): baseline sequential Huffman
// coding with the file's own tables (libjpeg's standard ones, as cv2.imwrite writes them), byte stuffing, and only
// the coded bytes downloaded. The headers come from libjpeg's marker writer (native/coef-encode.c `headers`), so
// the file is the one jpeg_write_coefficients writes from the same coefficients, byte for byte
// (docs/jpeg-encode.md says how).
import type { GpuContext } from '../core/gpu/context.js';
import { grid1d } from '../core/gpu/dispatch.js';
import { maxBinding } from '../core/gpu/limits.js';
import { PrefixSum } from '../core/gpu/prefix-sum.js';
import type { Recording } from '../core/gpu/recording.js';
import { acquireStorage, deviceBytes, downloadView } from '../core/gpu/transfer.js';
import type { CoefLayout } from './jpeg-coef-layout.js';
import type { HostBuffers } from './jpeg-gpu-decode.js';
import { AC_BASE, AC_TABLE, DC_TABLE, HuffParams, jpegHuffmanWgsl, jpegStuffWgsl, StuffParams, TABLES_LENGTH, ZIGZAG_BASE, zigzagNatural } from './jpeg-huffman.wgsl.js';

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
export function entropyBands(layout: CoefLayout, limit: number): { r0: number; rows: number }[] {
  const rows = Math.floor((Math.floor(limit / 128) - 1) / layout.perRow) - 1;
  if (rows < 1) return [];
  const bands = [];
  for (let r0 = 0; r0 < layout.mcuRows; r0 += rows) bands.push({ r0, rows: Math.min(rows, layout.mcuRows - r0) });
  return bands;
}

/** Whether the GPU entropy coder can take this layout on `ctx`: its bit offsets in u32, its arrays each in one binding. */
export function gpuEntropyFits(ctx: GpuContext, layout: CoefLayout): boolean {
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
   * Codes the blocks of `coefs` (computed by `rec`'s earlier passes; `rec` is submitted here) and returns the file:
   * `headers`, the entropy-coded segment (stuffed, padded), EOI. Two round trips: the total of the bits
   * (to size the packed buffers), then the coded bytes. Undefined, with nothing coded, where the coded bytes
   * would not fit one binding (the caller codes on the CPU: the same file). With `host`, the file is assembled in
   * its memory (readFile says how; the caller may give `file.buffer` back once written).
   */
  async code(rec: Recording, layout: CoefLayout, coefs: GPUBuffer, huff: HuffmanSetup, headers: Uint8Array, newRecording: () => Recording, host?: HostBuffers): Promise<GpuCoded | undefined> {
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
      const totalBuf = rec.storage(16, 'jpeg total bits');
      rec.copyRange(bits, 4 * n, totalBuf, 0, 4);
      rec.submit();
      const total = await readU32(ctx, totalBuf);
      const t1 = performance.now();
      const bytes = Math.ceil(total / 8);
      const words = Math.ceil(bytes / 4);
      if (deviceBytes(8 + 2 * bytes) > maxBinding(ctx) || (words + 1) * 4 > maxBinding(ctx)) return undefined;
      const rec2 = newRecording();
      // Read after this submission (a second download where the first was short): given back after it.
      out = acquireStorage(ctx, 8 + 2 * bytes, 'jpeg coded bytes');
      const packed = rec2.storage(words * 4, 'jpeg packed bits');
      const ff = rec2.storage((words + 1) * 4, 'jpeg 0xff counts');
      rec2.clear(packed, deviceBytes(words * 4));
      rec2.clear(out, deviceBytes(8 + 2 * bytes));
      this.perBand(rec2, this.pack, layout, coefs, huff, { tables, bits, words: packed });
      this.stuff(rec2, { words: packed, ff, out }, bytes, words);
      rec2.copyRange(ff, 4 * words, out, 0, 4);
      rec2.submit();
      const file = await readFile(ctx, out, bytes, headers, host);
      return { file, gpu: t1 - t0, entropy: performance.now() - t1 };
    } finally {
      if (out) ctx.buffers.release(out);
      ctx.buffers.release(bits);
      ctx.buffers.release(tables);
    }
  }

  /** One dispatch of `pipeline` (count or pack) per band of MCU rows. */
  private perBand(rec: Recording, pipeline: GPUComputePipeline, layout: CoefLayout, coefs: GPUBuffer, huff: HuffmanSetup, buffers: Record<string, GPUBuffer>): void {
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
  private stuff(rec: Recording, buffers: { words: GPUBuffer; ff: GPUBuffer; out: GPUBuffer }, bytes: number, words: number): void {
    const S = rec.uniform(StuffParams, { bytes, words });
    const [x, y] = grid1d(this.ctx, Math.ceil((words + 1) / WG));
    rec.dispatch('jpeg.stuff-count', this.ffCount, { words: buffers.words, ff: buffers.ff, S }, x, y);
    this.scan.record(rec, buffers.ff, words + 1);
    rec.dispatch('jpeg.stuff-scatter', this.scatter, { ...buffers, S }, x, y);
  }
}

/** The kernels' parameters that every band shares: the layout's geometry and each component's place and tables. */
function huffParams(layout: CoefLayout, huff: HuffmanSetup) {
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

/** One u32 at the start of a device buffer. */
async function readU32(ctx: GpuContext, buffer: GPUBuffer): Promise<number> {
  const view = await downloadView(ctx, buffer, 4);
  try {
    return new Uint32Array(view.bytes, 0, 1)[0];
  } finally {
    view.release();
  }
}

/** The share of stuffed bytes the first download of the coded bytes allows for (0 in a test: always a second). */
export const entropyTuning = { stuffGuess: 1 / 32 };

/** JPEG's end-of-image marker, which libjpeg's write_file_trailer writes after the coded data. */
const EOI = [0xff, 0xd9];

/**
 * The file: `headers`, the stuffed bytes of `out` (word 0: the count of stuffed zeros; the bytes from byte 4), EOI.
 * One download sized for up to 1/32 stuffed bytes (about 8 times what coded data holds: a 0xFF is about one byte
 * in 256), a second of the whole where there are more. With `host` (a batch) the file goes into its recycled memory
 * and the coded bytes are copied there off the JavaScript thread (HostCopy.async): a fresh array per photo (zeroed
 * by the allocator) and the synchronous copy out of mapped memory were 286 and 276 ms of a 210-photo batch's main
 * thread on the H100. Without it (one image), a new array and the context's parallel copy: the least latency.
 */
async function readFile(ctx: GpuContext, out: GPUBuffer, bytes: number, headers: Uint8Array, host?: HostBuffers): Promise<Uint8Array> {
  const guess = Math.min(bytes, Math.ceil(bytes * entropyTuning.stuffGuess) + (entropyTuning.stuffGuess && 64));
  let view = await downloadView(ctx, out, 4 + bytes + guess);
  const extra = new Uint32Array(view.bytes, 0, 1)[0];
  if (extra > guess) {
    view.release();
    view = await downloadView(ctx, out, 4 + bytes + extra);
  }
  const coded = bytes + extra;
  const length = headers.length + coded + EOI.length;
  const file = host ? new Uint8Array(host.alloc(length), 0, length) : new Uint8Array(length);
  try {
    file.set(headers);
    const dst = file.subarray(headers.length, headers.length + coded), src = new Uint8Array(view.bytes, 4, coded);
    if (host && ctx.hostCopy.async) await ctx.hostCopy.async(dst, src);
    else ctx.hostCopy(dst, src);
    file.set(EOI, headers.length + coded);
    return file;
  } catch (e) {
    host?.give(file.buffer);
    throw e;
  } finally {
    view.release();
  }
}

import { defineTask, type Range } from '../../core/cpu/pool.js';

export interface HistogramArgs extends Range {
  data: Uint8Array | Uint16Array;
  bins: number;
  /** The dtype's bits (8, 16). */
  bits: number;
  mask?: Uint8Array;
}

/**
 * Histogram of data[start, end) with `bins` bins over the dtype's range (bin = (v · bins) >> bits), counting
 * only where `mask` is non-zero (when given). The full-range 8-bit case counts into four interleaved
 * sub-histograms so consecutive equal pixels do not serialize on one counter.
 */
export function histogramRange({ data, start, end, bins, bits, mask }: HistogramArgs): Uint32Array {
  const full = bins === 1 << bits;
  if (full && bins === 256 && !mask && data instanceof Uint8Array) return histogram8(data, start, end);
  if (full && bins === 65536 && !mask && data instanceof Uint16Array) return histogram16(data, start, end);
  const h = new Uint32Array(bins);
  const shift = bits;
  for (let i = start; i < end; i++) {
    if (mask && mask[i] === 0) continue;
    h[full ? data[i] : Math.floor((data[i] * bins) / 2 ** shift)]++;
  }
  return h;
}

/**
 * 8-bit histogram of data[start, end): four interleaved sub-histograms (consecutive equal pixels do not serialize
 * on one counter), and the aligned middle read as 32-bit words — one load per four pixels, one element type, so
 * V8 keeps the loop monomorphic.
 */
function histogram8(data: Uint8Array, start: number, end: number): Uint32Array {
  const h = new Uint32Array(1024);
  let i = start;
  // Head: up to the first 4-byte-aligned address.
  while (i < end && (data.byteOffset + i) % 4 !== 0) h[data[i++]]++;
  const words = Math.floor((end - i) / 4);
  if (words > 0) {
    const w32 = new Uint32Array(data.buffer, data.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const w = w32[k];
      h[w & 255]++;
      h[256 + ((w >>> 8) & 255)]++;
      h[512 + ((w >>> 16) & 255)]++;
      h[768 + (w >>> 24)]++;
    }
    i += words * 4;
  }
  for (; i < end; i++) h[data[i]]++;
  const out = new Uint32Array(256);
  for (let b = 0; b < 256; b++) out[b] = h[b] + h[256 + b] + h[512 + b] + h[768 + b];
  return out;
}

/** Full-range 16-bit histogram of data[start, end): one element type (monomorphic), two pixels per 32-bit word. */
function histogram16(data: Uint16Array, start: number, end: number): Uint32Array {
  const h = new Uint32Array(65536);
  let i = start;
  if (i < end && (data.byteOffset / 2 + i) % 2 !== 0) h[data[i++]]++;
  const words = Math.floor((end - i) / 2);
  if (words > 0) {
    const w32 = new Uint32Array(data.buffer, data.byteOffset + i * 2, words);
    for (let k = 0; k < words; k++) {
      const w = w32[k];
      h[w & 0xffff]++;
      h[w >>> 16]++;
    }
    i += words * 2;
  }
  for (; i < end; i++) h[data[i]]++;
  return h;
}

export const histogramTask = defineTask('histogram.range', histogramRange);

/** The histogram family's CPU tasks (ops/tasks.ts). */
export const histogramTasks = [histogramTask];

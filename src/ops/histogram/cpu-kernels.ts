/**
 * Histogram of data[start, end) with `bins` bins over the dtype's range (bin = (v · bins) >> bits), counting
 * only where `mask` is non-zero (when given). The full-range 8-bit case counts into four interleaved
 * sub-histograms so consecutive equal pixels do not serialize on one counter.
 */
export function histogramRange(
  data: Uint8Array | Uint16Array, start: number, end: number, bins: number, bits: number, mask?: Uint8Array,
): Uint32Array {
  const full = bins === 1 << bits;
  if (full && bins === 256 && !mask) return histogram8(data, start, end);
  const h = new Uint32Array(bins);
  const shift = bits;
  for (let i = start; i < end; i++) {
    if (mask && mask[i] === 0) continue;
    h[full ? data[i] : Math.floor((data[i] * bins) / 2 ** shift)]++;
  }
  return h;
}

function histogram8(data: Uint8Array | Uint16Array, start: number, end: number): Uint32Array {
  const h = new Uint32Array(1024);
  let i = start;
  for (; i + 4 <= end; i += 4) {
    h[data[i]]++;
    h[256 + data[i + 1]]++;
    h[512 + data[i + 2]]++;
    h[768 + data[i + 3]]++;
  }
  for (; i < end; i++) h[data[i]]++;
  const out = new Uint32Array(256);
  for (let b = 0; b < 256; b++) out[b] = h[b] + h[256 + b] + h[512 + b] + h[768 + b];
  return out;
}

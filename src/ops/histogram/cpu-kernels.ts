/**
 * Histogram of data[start, end): one bin per value. 8-bit data counts into four interleaved sub-histograms
 * so consecutive equal pixels do not serialize on one counter (store-to-load forwarding stalls).
 */
export function histogramRange(data: Uint8Array | Uint16Array, start: number, end: number, bins: number): Uint32Array {
  if (bins !== 256) {
    const h = new Uint32Array(bins);
    for (let i = start; i < end; i++) h[data[i]]++;
    return h;
  }
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

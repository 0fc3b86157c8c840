/**
 * CPU kernels of the local (adaptive) thresholds, cv2.adaptiveThreshold semantics: the local mean over a
 * k×k window with replicated borders (BORDER_REPLICATE | BORDER_ISOLATED), rounded to 8 bits, and
 * out = src − mean > −ceil(C) ? maxValue : 0. Each works on a band of rows [y0, y1) so the pool can split.
 */

/** Horizontal window sums (replicated border) of rows [y0, y1): a running sum, O(1) per pixel. */
export function boxRowSums(src: Uint8Array, w: number, r: number, out: Uint32Array, y0: number, y1: number): void {
  for (let y = y0; y < y1; y++) {
    const row = y * w;
    let s = 0;
    for (let x = -r; x <= r; x++) s += src[row + Math.min(w - 1, Math.max(0, x))];
    out[row] = s;
    for (let x = 1; x < w; x++) {
      s += src[row + Math.min(w - 1, x + r)] - src[row + Math.max(0, x - r - 1)];
      out[row + x] = s;
    }
  }
}

/**
 * Vertical window sums of the row sums → mean = round(sum / k²) (exact: k² is odd, so no ties) → binary
 * output for rows [y0, y1).
 */
export function boxColsBinarize(
  rowSums: Uint32Array, src: Uint8Array, w: number, h: number, r: number, idelta: number, maxv: number, dst: Uint8Array, y0: number, y1: number,
): void {
  const k2 = (2 * r + 1) * (2 * r + 1);
  const col = new Float64Array(w);
  for (let dy = -r; dy <= r; dy++) {
    const yy = Math.min(h - 1, Math.max(0, y0 + dy)) * w;
    for (let x = 0; x < w; x++) col[x] += rowSums[yy + x];
  }
  for (let y = y0; y < y1; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      const mean = Math.floor((2 * col[x] + k2) / (2 * k2));
      dst[row + x] = src[row + x] - mean > -idelta ? maxv : 0;
    }
    if (y + 1 < y1) {
      const add = Math.min(h - 1, y + 1 + r) * w, sub = Math.max(0, y - r) * w;
      for (let x = 0; x < w; x++) col[x] += rowSums[add + x] - rowSums[sub + x];
    }
  }
}

/** fma(a, b, c) in float32 (a·b is exact in double; the sum is rounded once more to float32). */
const fma32 = (a: number, b: number, c: number): number => Math.fround(a * b + c);

/** Horizontal Gaussian pass in float32, OpenCV's RowFilter order: s = k0·x0, then s = fma(k_i, x_i, s). */
export function gaussRows(src: Uint8Array, w: number, kernel: Float32Array, out: Float32Array, y0: number, y1: number): void {
  const r = (kernel.length - 1) >> 1;
  for (let y = y0; y < y1; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let s = Math.fround(kernel[0] * src[row + Math.max(0, x - r)]);
      for (let k = 1; k < kernel.length; k++) s = fma32(kernel[k], src[row + Math.min(w - 1, Math.max(0, x - r + k))], s);
      out[row + x] = s;
    }
  }
}

/**
 * Vertical Gaussian pass, OpenCV's SymmColumnFilter order (centre tap, then symmetric pairs), rounded half to
 * even to 8 bits as convertTo does, then binarized.
 */
export function gaussColsBinarize(
  rows: Float32Array, src: Uint8Array, w: number, h: number, kernel: Float32Array, idelta: number, maxv: number, dst: Uint8Array, y0: number, y1: number,
): void {
  const r = (kernel.length - 1) >> 1;
  for (let y = y0; y < y1; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let s = Math.fround(kernel[r] * rows[row + x]);
      for (let k = 1; k <= r; k++) {
        const pair = Math.fround(rows[Math.min(h - 1, y + k) * w + x] + rows[Math.max(0, y - k) * w + x]);
        s = fma32(kernel[r + k], pair, s);
      }
      const mean = Math.min(255, Math.max(0, roundHalfEven(s)));
      dst[row + x] = src[row + x] - mean > -idelta ? maxv : 0;
    }
  }
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * OpenCV's getGaussianKernel(k, 0, CV_32F) (imgproc/src/smooth.dispatch.cpp, getGaussianKernelBitExact): the
 * fixed tables for k ≤ 9 (read off cv2.getGaussianKernel); else σ = 0.15·k + 0.35, weights exp(x²·(−0.125/σ²)) at doubled coordinates
 * x = 2i − (k − 1), normalized by the double sum (centre weight 1), then rounded to float32.
 */
export function gaussianKernel(k: number): Float32Array {
  const SMALL: Record<number, number[]> = {
    1: [1], 3: [0.25, 0.5, 0.25], 5: [0.0625, 0.25, 0.375, 0.25, 0.0625],
    7: [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125],
    9: [0.015625, 0.05078125, 0.1171875, 0.19921875, 0.234375, 0.19921875, 0.1171875, 0.05078125, 0.015625],
  };
  if (SMALL[k]) return Float32Array.from(SMALL[k]);
  const sigma = k * 0.15 + 0.35;
  const scale2 = -0.125 / (sigma * sigma);
  const half = (k - 1) / 2;
  const values: number[] = [];
  let sum = 0;
  for (let i = 0, x = 1 - k; i < half; i++, x += 2) {
    const t = Math.exp(x * x * scale2);
    values.push(t);
    sum += t;
  }
  sum = sum * 2 + 1;
  const mul = 1 / sum;
  const out = new Float32Array(k);
  for (let i = 0; i < half; i++) out[i] = out[k - 1 - i] = values[i] * mul;
  out[half] = mul;
  return out;
}

import type { Image } from './image.js';

export interface Comparison {
  identical: boolean;
  /** Elements that differ. */
  mismatches: number;
  maxAbsDiff: number;
  /** Index of the first differing element, or -1. */
  firstMismatch: number;
  /** For float results compared with a tolerance: the absolute tolerance used (differences within it count as agreement). */
  tolerance?: number;
}

/** Element-wise comparison of two images of the same shape (CPU vs GPU agreement, tests, the CLI). */
export function compareImages(a: Image, b: Image): Comparison {
  if (a.dtype !== b.dtype || a.shape.join() !== b.shape.join()) {
    return { identical: false, mismatches: Math.max(a.data.length, b.data.length), maxAbsDiff: Infinity, firstMismatch: 0 };
  }
  return compareArrays(a.data, b.data);
}

/** Element-wise comparison of two numeric arrays (images' pixels, histogram counts). */
export function compareArrays(x: ArrayLike<number>, y: ArrayLike<number>): Comparison {
  if (x.length !== y.length) return { identical: false, mismatches: Math.max(x.length, y.length), maxAbsDiff: Infinity, firstMismatch: 0 };
  let mismatches = 0, maxAbsDiff = 0, firstMismatch = -1;
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) {
      const d = Math.abs(x[i] - y[i]);
      if (firstMismatch < 0) firstMismatch = i;
      mismatches++;
      if (d > maxAbsDiff || Number.isNaN(d)) maxAbsDiff = d;
    }
  }
  return { identical: mismatches === 0, mismatches, maxAbsDiff, firstMismatch };
}

/** FNV-1a over an image's pixel bytes: compares results across processes (browser page vs Node) without moving pixels. */
export function pixelChecksum(img: { data: ArrayBufferView }): string {
  const b = new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193) >>> 0;
  return h.toString(16);
}

/**
 * Float results (convolution): a and b agree where |a − b| ≤ rel · max|b| over the whole output — a norm-wise
 * relative error, because outputs near zero come from cancellation (a Sobel of a flat region) and carry the
 * rounding of the large terms that cancelled — or |a − b| ≤ abs. NaN agrees with NaN, ±Inf with the same infinity.
 */
export function compareWithin(a: Image, b: Image, rel: number, abs = 0): Comparison {
  if (a.dtype !== b.dtype || a.shape.join() !== b.shape.join()) {
    return { identical: false, mismatches: Math.max(a.data.length, b.data.length), maxAbsDiff: Infinity, firstMismatch: 0, tolerance: 0 };
  }
  let scale = 0;
  for (let i = 0; i < b.data.length; i++) {
    const v = Math.abs(b.data[i]);
    if (v > scale && v !== Infinity) scale = v;
  }
  const tol = Math.max(rel * scale, abs);
  let mismatches = 0, maxAbsDiff = 0, firstMismatch = -1;
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i], y = b.data[i];
    if (x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    const d = Math.abs(x - y);
    if (d > maxAbsDiff || Number.isNaN(d)) maxAbsDiff = d;
    if (!(d <= tol)) {
      if (firstMismatch < 0) firstMismatch = i;
      mismatches++;
    }
  }
  return { identical: mismatches === 0, mismatches, maxAbsDiff, firstMismatch, tolerance: tol };
}

/** One line saying whether two paths agree (with the tolerance, when the comparison used one). */
export function describeComparison(cmp: Comparison): string {
  if (!cmp.identical) return `CPU and GPU outputs DIFFER: ${cmp.mismatches} elements${cmp.tolerance !== undefined ? ` beyond ±${cmp.tolerance.toPrecision(3)}` : ''}, max |diff| ${cmp.maxAbsDiff}`;
  if (cmp.tolerance !== undefined && cmp.maxAbsDiff > 0) return `CPU and GPU outputs agree within ±${cmp.tolerance.toPrecision(3)} (max |diff| ${cmp.maxAbsDiff.toPrecision(3)})`;
  return 'CPU and GPU outputs are identical';
}

import type { Image } from './image.js';

export interface Comparison {
  identical: boolean;
  /** Elements that differ. */
  mismatches: number;
  maxAbsDiff: number;
  /** Index of the first differing element, or -1. */
  firstMismatch: number;
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

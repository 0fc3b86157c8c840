import type { StructuringElement } from './se.js';

/** The two primitives every morphology operation is made of. */
export type MorphPrimitive = 'erode' | 'dilate';
export const MORPH_BORDERS = ['opencv', 'scipy'] as const;
/**
 * opencv: cv2.erode/dilate/morphologyEx defaults — anchor at ⌊k/2⌋ for both primitives, BORDER_CONSTANT with
 * the neutral value (erosion pads with the type's maximum, dilation with its minimum: borders never win).
 * scipy: scipy.ndimage.grey_erosion/grey_dilation defaults — mode 'reflect' (dcba|abcd), dilation with the
 * element reflected (for even sizes its window is shifted by one against erosion's).
 */
export type MorphBorder = (typeof MORPH_BORDERS)[number];

/** A 1-D window along one axis: output i takes input positions [i − a, i − a + k − 1]. */
export interface AxisWindow {
  k: number;
  a: number;
}

/**
 * Input offset of structuring-element index m (0 ≤ m < k) along one axis: m − ⌊k/2⌋ (erosion; OpenCV's
 * dilation), or ⌊k/2⌋ − m (scipy's dilation, which reflects the element: scipy negates the origin and shifts
 * it by one for even sizes, which amounts to exactly this).
 */
export function axisOffset(m: number, k: number, op: MorphPrimitive, border: MorphBorder): number {
  const c = Math.floor(k / 2);
  return op === 'dilate' && border === 'scipy' ? c - m : m - c;
}

/** The window of a box of side k along one axis. */
export function boxWindow(k: number, op: MorphPrimitive, border: MorphBorder): AxisWindow {
  return { k, a: -Math.min(axisOffset(0, k, op, border), axisOffset(k - 1, k, op, border)) };
}

/**
 * OpenCV runs n iterations of a rectangle as one pass of a rectangle of side k + (n − 1)(k − 1) with its anchor
 * multiplied by n (imgproc/src/morph.dispatch.cpp); scipy has no iterations, so they are repeated passes there.
 */
export function collapseIterations(w: AxisWindow, n: number): AxisWindow {
  return { k: w.k + (n - 1) * (w.k - 1), a: w.a * n };
}

/** Offsets (dz, dy, dx) of every element of a mask, for the direct kernel. */
export function maskOffsets(se: StructuringElement, op: MorphPrimitive, border: MorphBorder): Int32Array {
  const [d, h, w] = se.size;
  const out: number[] = [];
  for (let z = 0; z < d; z++) {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (se.mask[(z * h + y) * w + x]) out.push(axisOffset(z, d, op, border), axisOffset(y, h, op, border), axisOffset(x, w, op, border));
      }
    }
  }
  return Int32Array.from(out);
}

/** ±FLT_MAX, the largest finite float32. */
export const FLT_MAX = 3.4028234663852886e38;

/**
 * The constant border of border 'opencv': OpenCV's morphologyDefaultBorderValue (±DBL_MAX) saturated to the
 * dtype — 255 / 65535 / FLT_MAX for erosion, 0 / 0 / −FLT_MAX for dilation. For float32 it is not the identity
 * of min/max: a window holding only border gives ±FLT_MAX, and the border beats a +inf (−inf) pixel, as in cv2.
 */
export function neutral(op: MorphPrimitive, dtype: 'uint8' | 'uint16' | 'float32'): number {
  if (dtype === 'float32') return op === 'erode' ? FLT_MAX : -FLT_MAX;
  return op === 'erode' ? (dtype === 'uint8' ? 255 : 65535) : 0;
}

/** The identity of min (erosion) / max (dilation) for the dtype: where an accumulation starts. */
export function identity(op: MorphPrimitive, dtype: 'uint8' | 'uint16' | 'float32'): number {
  if (dtype === 'float32') return op === 'erode' ? Infinity : -Infinity;
  return neutral(op, dtype);
}

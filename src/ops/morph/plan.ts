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

/**
 * The same window for a line of n pixels, made no longer than the line needs (rect:100000x100000 on a small
 * image): with OpenCV's neutral border the window's reach on either side beyond n − 1 only adds border values,
 * which never win, so reaches are cut to n − 1; with scipy's reflection a window of 2n or more covers a whole
 * period of the mirrored line, so it is cut to 2n. Either way every output is unchanged, and the kernels' work
 * (and the GPU kernel's code) stays bounded by the image instead of the element.
 */
export function clampWindow(win: AxisWindow, n: number, border: MorphBorder): AxisWindow {
  if (border === 'opencv') {
    const a = Math.min(win.a, n - 1), r = Math.min(win.k - 1 - win.a, n - 1);
    return { k: a + r + 1, a };
  }
  return win.k > 2 * n ? { k: 2 * n, a: win.a % (2 * n) } : win;
}

/**
 * The 1-D passes of a box element over a [d, h, w] image: x, y, z windows (size-1 axes are skipped), each clamped
 * to the image (clampWindow), and how many times to run them.
 */
export function boxPasses(se: StructuringElement, op: MorphPrimitive, border: MorphBorder, iterations: number, shape: [number, number, number]): { axes: (AxisWindow | undefined)[]; repeat: number } {
  const [d, h, w] = se.size;
  // OpenCV folds the iterations of a rectangle into one larger rectangle; scipy has none (repeated passes).
  const fold = border === 'opencv' && iterations > 1;
  const win = (k: number, n: number) => {
    if (k === 1) return undefined;
    return clampWindow(fold ? collapseIterations(boxWindow(k, op, border), iterations) : boxWindow(k, op, border), n, border);
  };
  return { axes: [win(w, shape[2]), win(h, shape[1]), win(d, shape[0])], repeat: fold ? 1 : iterations };
}

/**
 * How far (in pixels along `axis`: 0 = z, 1 = y) an erosion or dilation with its iterations reads from the
 * output position, at most: the halo a slab of the image needs for its outputs to equal the whole image's.
 */
export function primitiveReach(se: StructuringElement, op: MorphPrimitive, border: MorphBorder, iterations: number, axis: 0 | 1): number {
  const k = se.size[axis];
  // Offsets are monotonic in the element index: the ends reach furthest.
  return Math.max(Math.abs(axisOffset(0, k, op, border)), Math.abs(axisOffset(k - 1, k, op, border))) * iterations;
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

/**
 * Border index rules shared by the operations (CPU side; WGSL twins in core/gpu/wgsl/border.ts): where a
 * position p outside [0, n) reads from, at any distance (windows may be larger than the image).
 * Names: OpenCV BORDER_REFLECT_101 = scipy 'mirror' (dcb|abcd); OpenCV BORDER_REFLECT = scipy 'reflect' (dcba|abcd).
 */

/** BORDER_REFLECT_101 (dcb|abcd): the edge pixel is not repeated; period 2(n − 1). */
export function reflect101Index(p: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * (n - 1);
  const q = ((p % period) + period) % period;
  return q < n ? q : period - q;
}

/** BORDER_REFLECT (dcba|abcd): the edge pixel is repeated; period 2n. */
export function reflectIndex(p: number, n: number): number {
  const period = 2 * n;
  const q = ((p % period) + period) % period;
  return q < n ? q : period - 1 - q;
}

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

/**
 * The border modes of filters (convolution): what lies outside [0, n) along an axis. Names follow scipy.ndimage
 * with OpenCV's equivalents: reflect = BORDER_REFLECT (dcba|abcd, scipy 'reflect'); reflect101 =
 * BORDER_REFLECT_101 (dcb|abcd, scipy 'mirror', OpenCV's default); replicate = BORDER_REPLICATE (aaa|abcd,
 * scipy 'nearest'); wrap = BORDER_WRAP (bcd|abcd, scipy 'wrap'); constant = BORDER_CONSTANT (scipy 'constant',
 * value cval); valid: no border at all, the output shrinks to the positions whose window lies inside.
 */
export const BORDER_MODES = ['reflect', 'reflect101', 'replicate', 'wrap', 'constant', 'valid'] as const;
export type BorderMode = (typeof BORDER_MODES)[number];
/** scipy.ndimage's and OpenCV's names for the same modes. */
export const BORDER_ALIASES = { mirror: 'reflect101', nearest: 'replicate' } as const satisfies Record<string, BorderMode>;

/** The mode an alias names, or undefined (own keys only: 'toString' is no alias). */
export function borderAlias(name: string): BorderMode | undefined {
  return Object.hasOwn(BORDER_ALIASES, name) ? BORDER_ALIASES[name as keyof typeof BORDER_ALIASES] : undefined;
}

/** The index p (any integer) reads from under `mode`, or −1 for the constant value. `valid` clamps (unused lanes). */
export function borderIndex(p: number, n: number, mode: BorderMode): number {
  if (p >= 0 && p < n) return p;
  switch (mode) {
    case 'reflect': return reflectIndex(p, n);
    case 'reflect101': return reflect101Index(p, n);
    case 'replicate':
    case 'valid': return p < 0 ? 0 : n - 1;
    case 'wrap': return ((p % n) + n) % n;
    case 'constant': return -1;
  }
}

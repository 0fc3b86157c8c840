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
/**
 * The one border vocabulary: each mode with its OpenCV and scipy.ndimage names. Any of them is accepted wherever
 * a border is a parameter (borderParam), and resolves to the mode's imgpu name.
 */
export const BORDERS: Readonly<Record<BorderMode, { opencv?: string; scipy?: string; doc: string }>> = {
  reflect: { opencv: 'BORDER_REFLECT', scipy: 'reflect', doc: 'dcba|abcd, the edge pixel repeated' },
  reflect101: { opencv: 'BORDER_REFLECT_101', scipy: 'mirror', doc: 'dcb|abcd, the edge pixel not repeated' },
  replicate: { opencv: 'BORDER_REPLICATE', scipy: 'nearest', doc: 'aaa|abcd' },
  wrap: { opencv: 'BORDER_WRAP', scipy: 'wrap', doc: 'bcd|abcd' },
  constant: { opencv: 'BORDER_CONSTANT', scipy: 'constant', doc: 'a constant value outside' },
  valid: { doc: 'no border: the output shrinks to the positions whose window lies inside' },
};

/** scipy.ndimage's and OpenCV's names for the modes (e.g. mirror, BORDER_REFLECT_101, reflect_101), to imgpu's. */
export const BORDER_ALIASES: Readonly<Record<string, BorderMode>> = Object.fromEntries(
  Object.entries(BORDERS).flatMap(([mode, names]) => [names.scipy, names.opencv, names.opencv?.replace('BORDER_', '').toLowerCase()]
    .filter((n): n is string => !!n && n !== mode).map((n) => [n, mode as BorderMode])),
);

/**
 * A border parameter declaration offering `modes` (the ones the operation implements), with every alias of
 * those modes accepted (BORDER_ALIASES).
 */
export function borderParam<const M extends readonly BorderMode[]>(modes: M, dflt: M[number], doc: string) {
  const valueAliases = Object.fromEntries(Object.entries(BORDER_ALIASES).filter(([, m]) => modes.includes(m)));
  return { name: 'border', kind: 'enum', choices: modes, default: dflt, valueAliases, doc } as const;
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

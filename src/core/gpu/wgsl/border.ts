/** WGSL twins of core/border.ts: reflect101 (dcb|abcd) for positions ≥ 0, reflect (dcba|abcd) for any i32. */
export const reflect101Wgsl = /* wgsl */ `
fn reflect101(p: u32, n: u32) -> u32 {
  if (n == 1u) { return 0u; }
  let period = 2u * (n - 1u);
  let q = p % period;
  return select(period - q, q, q < n);
}`;

export const reflectWgsl = /* wgsl */ `
fn reflect(p: i32, n: u32) -> u32 {
  let period = 2i * i32(n);
  let q = ((p % period) + period) % period;
  return u32(select(period - 1i - q, q, q < i32(n)));
}`;

/**
 * WGSL twin of core/border.ts borderIndex for one mode, as `fn bmap(p: i32, n: i32) -> i32` (−1 = the constant
 * value). The mode is baked in per shader variant. Positions within one reflection of the range (every read of a
 * kernel no larger than the image; slabs gather their halos) take the fast form, one reflection and no modulo;
 * only positions beyond it — a kernel larger than the image, or tile padding lanes — take `bfar`, the periodic
 * rule at any distance (equal to borderIndex, so such kernels give scipy's and OpenCV's result). Integer modulo
 * costs dozens of instructions on GPUs (and Tint guards it further): on the fast path the index arithmetic, not
 * memory, set the speed of the convolution kernels on the H100, hence the branch rather than a modulo always.
 */
export function borderMapWgsl(mode: 'reflect' | 'reflect101' | 'replicate' | 'wrap' | 'constant' | 'valid'): string {
  // [near condition, one-reflection body, any-distance body]
  const rules: Record<typeof mode, [string, string, string]> = {
    reflect: ['p >= -n && p < 2i * n', 'select(select(p, 2i * n - 1i - p, p >= n), -1i - p, p < 0i)',
      'imod(p, 2i * n); return select(2i * n - 1i - q, q, q < n)'],
    reflect101: ['p > -n && p < 2i * n - 1i', 'select(select(p, 2i * n - 2i - p, p >= n), -p, p < 0i)',
      'imod(p, max(2i * n - 2i, 1i)); return select(2i * n - 2i - q, q, q < n)'],
    wrap: ['p >= -n && p < 2i * n', 'select(select(p, p - n, p >= n), p + n, p < 0i)', 'imod(p, n); return q'],
    replicate: ['true', 'clamp(p, 0i, n - 1i)', 'p; return 0i'],
    valid: ['true', 'clamp(p, 0i, n - 1i)', 'p; return 0i'],
    constant: ['true', 'select(-1i, p, p >= 0i && p < n)', 'p; return -1i'], // not clamped: −1 is cval
  };
  const [near, one, far] = rules[mode];
  const value = mode === 'constant' ? one : `clamp(${one}, 0i, n - 1i)`;
  return /* wgsl */ `
fn imod(p: i32, m: i32) -> i32 { return ((p % m) + m) % m; }
fn bfar(p: i32, n: i32) -> i32 {
  let q = ${far};
}
fn bmap(p: i32, n: i32) -> i32 {
  if (${near}) { return ${value}; }
  return bfar(p, n);
}`;
}

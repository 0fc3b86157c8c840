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
 * value). The mode is baked in per shader variant. One reflection, no modulo: exact for positions less than n
 * outside the range, which covers every read of a real output (kernels are never larger than the image; slabs
 * gather their halos). Lanes beyond the output (tile padding) may reach further and are clamped in bounds; their
 * values are never written. Integer modulo costs dozens of instructions on GPUs (and Tint guards it further):
 * with it, the index arithmetic, not memory, set the speed of the convolution kernels on the H100.
 */
export function borderMapWgsl(mode: 'reflect' | 'reflect101' | 'replicate' | 'wrap' | 'constant' | 'valid'): string {
  const body: Record<typeof mode, string> = {
    reflect: 'return clamp(select(select(p, 2i * n - 1i - p, p >= n), -1i - p, p < 0i), 0i, n - 1i);',
    reflect101: 'return clamp(select(select(p, 2i * n - 2i - p, p >= n), -p, p < 0i), 0i, n - 1i);',
    wrap: 'return clamp(select(select(p, p - n, p >= n), p + n, p < 0i), 0i, n - 1i);',
    replicate: 'return clamp(p, 0i, n - 1i);',
    valid: 'return clamp(p, 0i, n - 1i);',
    constant: 'return select(-1i, p, p >= 0i && p < n);',
  };
  return /* wgsl */ `
fn bmap(p: i32, n: i32) -> i32 {
  ${body[mode]}
}`;
}

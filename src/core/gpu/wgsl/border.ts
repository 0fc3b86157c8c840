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
 * value). The mode is baked in per shader variant, so in-range reads cost one comparison.
 */
export function borderMapWgsl(mode: 'reflect' | 'reflect101' | 'replicate' | 'wrap' | 'constant' | 'valid'): string {
  const outside: Record<typeof mode, string> = {
    reflect: 'let P = 2i * n; let q = ((p % P) + P) % P; return select(P - 1i - q, q, q < n);',
    reflect101: 'if (n == 1i) { return 0i; } let P = 2i * (n - 1i); let q = ((p % P) + P) % P; return select(P - q, q, q < n);',
    replicate: 'return clamp(p, 0i, n - 1i);',
    valid: 'return clamp(p, 0i, n - 1i);',
    wrap: 'return ((p % n) + n) % n;',
    constant: 'return -1i;',
  };
  return /* wgsl */ `
fn bmap(p: i32, n: i32) -> i32 {
  if (p >= 0i && p < n) { return p; }
  ${outside[mode]}
}`;
}

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

/** WGSL: 64-bit unsigned integers as vec2u(lo, hi) — WGSL has no u64, and sums of i·h(i) exceed 2^32. */
export const u64Wgsl = /* wgsl */ `
fn add64(a: vec2u, b: vec2u) -> vec2u {
  let lo = a.x + b.x;
  return vec2u(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn sub64(a: vec2u, b: vec2u) -> vec2u {
  return vec2u(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}
// a · b for a < 2^16 and any u32 b, as 64 bits.
fn mul64(a: u32, b: u32) -> vec2u {
  let lo = a * (b & 0xffffu);
  let hi = a * (b >> 16u);
  return add64(vec2u(lo, 0u), vec2u(hi << 16u, hi >> 16u));
}
fn le64(a: vec2u, b: vec2u) -> bool { return a.y < b.y || (a.y == b.y && a.x <= b.x); }
fn lt64(a: vec2u, b: vec2u) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
fn f32_of(a: vec2u) -> f32 { return f32(a.y) * 4294967296.0 + f32(a.x); }
`;

/**
 * WGSL helpers for float results that must equal the host's IEEE single-precision arithmetic bit for bit.
 * WGSL's f32 division is only accurate to 2.5 ULP and integer→float conversion of values ≥ 2^24 does not
 * promise round-to-nearest-even, so both are done here in integer arithmetic. Multiplication is correctly
 * rounded in WGSL and `round()` is half-to-even, as OpenCV's cvRound.
 */
export const exactFloatWgsl = /* wgsl */ `
// x = m · 2^s with m < 2^24 + 1, rounded to nearest even: the f32 value of x as (m, s).
fn split_rn(x: u32) -> vec2u {
  if (x < (1u << 24u)) { return vec2u(x, 0u); }
  let s = 8u - countLeadingZeros(x);
  let m = x >> s;
  let rem = x & ((1u << s) - 1u);
  let half = 1u << (s - 1u);
  var mm = m;
  if (rem > half || (rem == half && (m & 1u) == 1u)) { mm = mm + 1u; }
  return vec2u(mm, s);
}

// f32(x) rounded to nearest even, for any u32.
fn u32_to_f32_rn(x: u32) -> f32 {
  let ms = split_rn(x);
  return ldexp(f32(ms.x), i32(ms.y));
}

// a / b correctly rounded to f32 (round to nearest even), for 0 < b < 2^31 and a < 2^31: long division.
fn div_rn(a: u32, b: u32) -> f32 {
  var q = a / b;
  var r = a % b;
  var e = 0i;
  var bits = 32u - countLeadingZeros(q);
  while (bits < 25u) {
    r = r * 2u;
    q = q * 2u;
    if (r >= b) { q = q + 1u; r = r - b; }
    e = e + 1i;
    bits = 32u - countLeadingZeros(q);
  }
  // q holds 25 significant bits (or more when the integer part is that large): keep 24, round on the rest.
  let extra = bits - 24u;
  var m = q >> extra;
  let dropped = q & ((1u << extra) - 1u);
  let half = 1u << (extra - 1u);
  let sticky = r != 0u;
  if (dropped > half || (dropped == half && (sticky || (m & 1u) == 1u))) { m = m + 1u; }
  return ldexp(f32(m), i32(extra) - e);
}
`;

/**
 * WGSL: the fused multiply-add of IEEE single precision, fma_rn(a, b, c, zero) = RN(a·b + c) with one rounding,
 * whatever the backend does with `fma()` (lavapipe rounds the product first; the H100's driver fuses) or with
 * `a·b + c` (drivers may contract it). Built from error-free transformations on correctly rounded f32 + − ×:
 * - two_sum (Knuth): s + e = a + b exactly;
 * - Dekker's product: a·b = p + e exactly, p = RN(a·b), from 12-bit halves (exact partial products);
 * - sum3_rn (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding
 *   to odd", IEEE TC 2008): RN(a + b + c) = RN(th + RO(tl + ul)) with (uh, ul) = two_sum(b, c),
 *   (th, tl) = two_sum(a, uh) and RO rounding to odd.
 * Such sequences only work as written: a compiler that reassociates them (lavapipe's does: two_sum's error came
 * out 0 there) or contracts a product into a sum breaks them. So every intermediate result passes through
 * opaque(x, zero) — an integer round trip with a uniform `zero` the compiler cannot know is 0, as clahe.wgsl.ts
 * does for its products — which leaves it nothing to rewrite.
 * Domain: finite values whose partial results stay normal (GPUs may flush subnormals).
 */
export const exactFmaWgsl = /* wgsl */ `
fn opaque(x: f32, zero: u32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ zero); }

fn two_sum(a: f32, b: f32, z: u32) -> vec2f {
  let s = opaque(a + b, z);
  let bb = opaque(s - a, z);
  let av = opaque(s - bb, z);
  return vec2f(s, opaque(opaque(a - av, z) + opaque(b - bb, z), z));
}

// a + b rounded to odd: the sum if exact, else the one of its two neighbours whose last bit is 1.
fn add_odd(a: f32, b: f32, z: u32) -> f32 {
  let t = two_sum(a, b, z);
  let bits = bitcast<u32>(t.x);
  if (t.y == 0.0 || (bits & 1u) == 1u) { return t.x; }
  let away = (bits >> 31u) == select(0u, 1u, t.y < 0.0); // the error points away from zero
  return bitcast<f32>(select(bits - 1u, bits + 1u, away));
}

fn sum3_rn(a: f32, b: f32, c: f32, z: u32) -> f32 {
  let u = two_sum(b, c, z);
  let t = two_sum(a, u.x, z);
  return opaque(t.x + add_odd(t.y, u.y, z), z);
}

// The high half of x: its 12 leading significant bits (x − hi12(x) holds the rest, exactly).
fn hi12(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }

// RN(a·b), opaque.
fn mul_rn(a: f32, b: f32, z: u32) -> f32 { return opaque(a * b, z); }

fn fma_rn(a: f32, b: f32, c: f32, z: u32) -> f32 {
  let ah = hi12(a);
  let al = opaque(a - ah, z);
  let bh = hi12(b);
  let bl = opaque(b - bh, z);
  let p = opaque(a * b, z);
  let e0 = opaque(opaque(ah * bh, z) - p, z);
  let e1 = opaque(e0 + opaque(ah * bl, z), z);
  let e2 = opaque(e1 + opaque(al * bh, z), z);
  let e = opaque(e2 + opaque(al * bl, z), z);
  return sum3_rn(c, p, e, z);
}

// fma_rn(a, x, c) for an integer x < 2^12 (a pixel): the halves' products a_h·x and a_l·x are exact.
fn fma_rn_small(a: f32, x: f32, c: f32, z: u32) -> f32 {
  let ah = hi12(a);
  return sum3_rn(c, opaque(ah * x, z), opaque(opaque(a - ah, z) * x, z), z);
}
`;

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

import { u64Wgsl } from './u64.js';

/**
 * WGSL: IEEE-754 binary64 arithmetic in software, for kernels that must reproduce a reference library's double
 * precision decisions bit for bit (WGSL has no f64). A double is its bit pattern as vec2u(low word, high word).
 * add / sub / mul / div are correctly rounded (round to nearest, ties to even), as the CPU's are, so a sequence
 * of them gives the very doubles C or JavaScript computes. Domain: finite values whose results stay normal —
 * no infinities, NaNs or results below 2^−1022 (subnormal inputs are read correctly; a subnormal result would be
 * wrong). Zero is exact; its sign is not tracked (x − x = +0 as in round-to-nearest; products of zero are +0).
 *
 * Cost: a few hundred instructions an operation (a division: five digit steps); use these where a few hundred
 * operations decide a result, not per pixel.
 */
export const f64Wgsl = /* wgsl */ `
${u64Wgsl}
// Shifts of a 64-bit value by any amount (WGSL shifts use only the low 5 bits of the count).
fn shl64(a: vec2u, n: u32) -> vec2u {
  if (n == 0u) { return a; }
  if (n >= 64u) { return vec2u(0u); }
  if (n >= 32u) { return vec2u(0u, a.x << (n - 32u)); }
  return vec2u(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}
fn shr64(a: vec2u, n: u32) -> vec2u {
  if (n == 0u) { return a; }
  if (n >= 64u) { return vec2u(0u); }
  if (n >= 32u) { return vec2u(a.y >> (n - 32u), 0u); }
  return vec2u((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}
fn clz64(a: vec2u) -> u32 { return select(countLeadingZeros(a.y), 32u + countLeadingZeros(a.x), a.y == 0u); }
fn is_zero64(a: vec2u) -> bool { return a.x == 0u && a.y == 0u; }

// A double taken apart: value = (−1)^s · m · 2^e, m normalised to [2^52, 2^53) (or 0).
struct F64Parts { s: u32, e: i32, m: vec2u }

fn f64_is_zero(a: vec2u) -> bool { return a.x == 0u && (a.y & 0x7fffffffu) == 0u; }

fn f64_unpack(a: vec2u) -> F64Parts {
  let E = (a.y >> 20u) & 0x7ffu;
  var m = vec2u(a.x, a.y & 0xfffffu);
  if (E != 0u) { m.y |= 0x100000u; }
  var e = i32(max(E, 1u)) - 1075;
  if (!is_zero64(m)) {
    let lift = clz64(m) - 11u;
    m = shl64(m, lift);
    e -= i32(lift);
  }
  return F64Parts(a.y >> 31u, e, m);
}

// The double nearest to (−1)^s · (x + f) · 2^e, where f ∈ (0, 1) if sticky (bits below x are non-zero), else 0.
fn f64_round(s: u32, e: i32, x: vec2u, sticky: bool) -> vec2u {
  if (is_zero64(x)) { return vec2u(0u); }
  let lz = clz64(x);
  let y = shl64(x, lz);                  // bit 63 set
  var m = shr64(y, 11u);                 // the 53 kept bits
  var ee = e - i32(lz) + 11;             // value ≈ m · 2^ee
  let r = y.x & 0x7ffu;                  // the 11 bits below, then the sticky bits
  if (r > 0x400u || (r == 0x400u && (sticky || (m.x & 1u) == 1u))) {
    m = add64(m, vec2u(1u, 0u));
    if (m.y == 0x200000u) { m = shr64(m, 1u); ee += 1; }
  }
  return vec2u(m.x, (s << 31u) | (u32(ee + 1075) << 20u) | (m.y & 0xfffffu));
}

fn f64_from_u64(a: vec2u) -> vec2u { return f64_round(0u, 0, a, false); }
fn f64_from_u32(a: u32) -> vec2u { return f64_round(0u, 0, vec2u(a, 0u), false); }
fn f64_neg(a: vec2u) -> vec2u { return vec2u(a.x, a.y ^ 0x80000000u); }

// An order-preserving unsigned key of a double (−0 sorts just below +0).
fn f64_key(a: vec2u) -> vec2u {
  if ((a.y >> 31u) == 1u) { return vec2u(~a.x, ~a.y); }
  return vec2u(a.x, a.y | 0x80000000u);
}
fn f64_lt(a: vec2u, b: vec2u) -> bool { return lt64(f64_key(a), f64_key(b)); }

fn f64_add(a: vec2u, b: vec2u) -> vec2u {
  if (f64_is_zero(a)) { return select(b, vec2u(0u), f64_is_zero(b)); }
  if (f64_is_zero(b)) { return a; }
  var A = f64_unpack(a);
  var B = f64_unpack(b);
  if (lt64(vec2u(a.x, a.y & 0x7fffffffu), vec2u(b.x, b.y & 0x7fffffffu))) { let t = A; A = B; B = t; }
  // |A| ≥ |B|: both mantissas get 10 spare low bits (a carry still fits 64 bits); B is aligned to A.
  let d = u32(A.e - B.e);
  let xa = shl64(A.m, 10u);
  let xb0 = shl64(B.m, 10u);
  let xb = shr64(xb0, d);
  let sticky = any(shl64(xb, d) != xb0);
  var x: vec2u;
  if (A.s == B.s) {
    x = add64(xa, xb);
  } else {
    // Bits of B lost below xb make the exact difference smaller than xa − xb by a fraction of one unit.
    x = sub64(xa, xb);
    if (sticky) { x = sub64(x, vec2u(1u, 0u)); }
  }
  return f64_round(A.s, A.e - 10, x, sticky);
}

fn f64_sub(a: vec2u, b: vec2u) -> vec2u { return f64_add(a, f64_neg(b)); }

// 32 × 32 → 64-bit product.
fn mul_wide(a: u32, b: u32) -> vec2u {
  let al = a & 0xffffu; let ah = a >> 16u;
  let bl = b & 0xffffu; let bh = b >> 16u;
  let ll = al * bl;
  let hl = ah * bl;
  let mid = al * bh + (ll >> 16u) + (hl & 0xffffu);
  return vec2u((mid << 16u) | (ll & 0xffffu), ah * bh + (mid >> 16u) + (hl >> 16u));
}

fn f64_mul(a: vec2u, b: vec2u) -> vec2u {
  if (f64_is_zero(a) || f64_is_zero(b)) { return vec2u(0u); }
  let A = f64_unpack(a);
  let B = f64_unpack(b);
  // The 106-bit product of the mantissas as four words w3:w2:w1:w0.
  let p0 = mul_wide(A.m.x, B.m.x);
  let p1 = mul_wide(A.m.x, B.m.y);
  let p2 = mul_wide(A.m.y, B.m.x);
  let p3 = mul_wide(A.m.y, B.m.y);
  let w1 = add64(add64(vec2u(p0.y, 0u), vec2u(p1.x, 0u)), vec2u(p2.x, 0u));
  let w2 = add64(add64(add64(vec2u(p1.y, 0u), vec2u(p2.y, 0u)), vec2u(p3.x, 0u)), vec2u(w1.y, 0u));
  let hi = vec2u(w2.x, p3.y + w2.y);
  let lo = vec2u(p0.x, w1.x);
  // product ≥ 2^104: its top 64 bits are product >> 42; the 42 bits below only round (sticky).
  let x = shl64(hi, 22u) | shr64(lo, 42u);
  let sticky = lo.x != 0u || (lo.y & 0x3ffu) != 0u;
  return f64_round(A.s ^ B.s, A.e + B.e + 42, x, sticky);
}

fn f32_of64(a: vec2u) -> f32 { return f32(a.y) * 4294967296.0 + f32(a.x); }

// a / b for b ≠ 0: q = floor(A.m · 2^55 / B.m) (55 or 56 bits) by long division in digits of 11 bits — the
// remainder (< B.m < 2^53) shifted by 11 still fits 64 bits. Each digit is estimated in f32 (relative error a few
// 2^−24, so at most 1 off for a digit below 2^11, whatever rounding the backend's f32 division has) and corrected
// exactly in integers. The remainder only rounds (sticky). About a fifth of the bit-by-bit division's work.
fn f64_div(a: vec2u, b: vec2u) -> vec2u {
  if (f64_is_zero(a)) { return vec2u(0u); }
  let A = f64_unpack(a);
  let B = f64_unpack(b);
  let bm = B.m;
  let bf = f32_of64(bm);
  var rem = A.m;
  var q = vec2u(0u);
  if (le64(bm, rem)) { rem = sub64(rem, bm); q = vec2u(1u, 0u); }
  for (var i = 0u; i < 5u; i++) {
    let n = vec2u(rem.x << 11u, (rem.y << 11u) | (rem.x >> 21u));
    var d = u32(clamp(f32_of64(n) / bf, 0.0, 2047.0));
    var p = add64(mul64(d, bm.x), vec2u(0u, d * bm.y));
    if (lt64(n, p)) { d -= 1u; p = sub64(p, bm); }
    rem = sub64(n, p);
    if (le64(bm, rem)) { d += 1u; rem = sub64(rem, bm); }
    q = vec2u((q.x << 11u) | d, (q.y << 11u) | (q.x >> 21u));
  }
  return f64_round(A.s ^ B.s, A.e - B.e - 55, q, !is_zero64(rem));
}
`;

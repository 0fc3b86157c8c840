import { f64Wgsl } from '../../core/gpu/wgsl/f64.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** The Otsu kernel's parameters (per_thread = bins / 256, maxv = bins − 1). */
export const OtsuParams = defineUniforms('Params', { total: 'u32', bins: 'u32', per_thread: 'u32', maxv: 'u32' });

/**
 * Otsu's threshold of an 8-bit image on the GPU from its 256-bin histogram, then the binarization LUT, in one
 * workgroup of 256 invocations (invocation t owns bin t). The threshold is OpenCV's getThreshVal_Otsu_8u
 * (imgproc/src/thresh.cpp; global.ts otsuThreshold is the same code on the host) on every histogram: σ of two bins
 * can be equal in exact arithmetic and differ in doubles, or the reverse, and only OpenCV's doubles settle such
 * ties as OpenCV does (an f32 evaluation took bin 87 instead of 90 on np.arange(0, 181, 3)). Two paths:
 *
 * Fast (histograms whose largest σ is clear): exact integer prefix sums (counts N1, Σ i·h_i in 64 bits) by a
 * workgroup scan, then σ of every bin in parallel from those integers, as OpenCV's doubles define it:
 * - skip rule: OpenCV skips bins with min(q1, q2) < FLT_EPSILON (or max > 1 − FLT_EPSILON, the same bins), i.e.
 *   min(N1, N2)·2^23 < N; the valid bins are one interval [a, b] (q1 is monotone);
 * - OpenCV's μ1 recurrence drops the i·h_i of the skipped bins before a (its μ1 stays 0 there), so its class
 *   sums are D1 = S1 − L and D2 = S − D1, with L = Σ_{i<a} i·h_i; μ1 = D1/N1 ≤ t and μ2 = D2/N2 ≥ t + 1, so
 *   d = μ2 − μ1 = 1 + E1/N1 + E2/N2 with exact non-negative 64-bit E1 = t·N1 − D1, E2 = D2 − (t+1)·N2 (no
 *   cancellation), and σ·N² = (N1·N2·d)² / (N1·N2) is evaluated in (parallel) software doubles to ~1e-15;
 *   f32 was not enough: neighbouring bins at a smooth histogram's peak differ by ~1e-5 relative;
 * - the largest σ is OpenCV's bin if it beats every other valid bin by more than both evaluations' errors:
 *   tol(t) = 2^−40 (this evaluation: ~1000× its bound) + 2^−30 / min(q1, q2) (OpenCV's doubles: its
 *   μ2 = (μ − q1·μ1)/q2 divides an absolute error of ~1e-11 by q2, up to 1e-4 relative where q2 ≈ FLT_EPSILON,
 *   ~1e-10 at q2 = ½; 2^−30/q2 is ≥ 20× that), i.e. σ_top·(1 − tol_top) > σ_j·(1 + tol_j) for every other
 *   valid j; and no bin lies within 2^−10 (relative) of the skip boundary, where this evaluation and OpenCV's
 *   could classify it differently. No valid bin (constant image) gives 0, as OpenCV's σ > max from max = 0 does.
 * Exact (near and exact ties — every histogram with an empty bin between two values has a plateau of equal σ,
 * e.g. np.arange(0, 181, 3), few-valued images — and skip-boundary histograms): OpenCV's code
 * operation for operation in software double precision (core/gpu/wgsl/f64.ts):
 * 1. in parallel: p_i = h_i·scale and i·p_i; μ = (Σ i·h_i, exact)·scale;
 * 2. invocation 0 runs the recurrence, which is sequential in OpenCV too: μ1 ·= q1; q1 += p_i; q2 = 1 − q1;
 *    skipped bins as above (μ1 is not divided there); otherwise μ1 = (μ1 + i·p_i) / q1;
 * 3. in parallel: μ2 = (μ − q1·μ1) / q2 and σ = q1·q2·(μ1 − μ2)·(μ1 − μ2);
 * 4. a tree reduction keeps the largest σ, ties to the lowest bin: OpenCV's first strict maximum (σ > max, from
 *    max = 0; no valid bin gives 0).
 * The choice is uniform (workgroupUniformLoad). Then lut[i] = i > T ? maxv : 0; result[0] = T for the host,
 * result[1] = the path taken (0 fast, 1 exact; tests read it). The exact path's serial recurrence on one
 * invocation is what costs (0.46 ms for the whole kernel on an H100, where an f32 kernel took 0.011 ms).
 */
export const otsuWgsl = /* wgsl */ `
${f64Wgsl}
${OtsuParams.wgsl}
@group(0) @binding(0) var<storage, read> hist: array<u32>;
@group(0) @binding(1) var<storage, read_write> lut: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
var<workgroup> sums: array<vec2u, 256>; // prefix Σ i·h_i, then σ (reductions)
var<workgroup> p: array<vec2u, 256>;    // p_i, then q2 at bin i
var<workgroup> ip: array<vec2u, 256>;   // i·p_i, then μ1 at bin i
var<workgroup> q1s: array<vec2u, 256>;  // q1 at bin i
var<workgroup> valid: array<u32, 256>;  // prefix count N1 (fast path); bin i not skipped (both paths)
var<workgroup> best: array<u32, 256>;   // reductions: the bin of the largest σ
var<workgroup> lost: vec2u;             // fast path: L = Σ i·h_i over the skipped bins before the first valid one
var<workgroup> near_edge: atomic<u32>;  // fast path: some bin lies near the skip boundary
var<workgroup> use_exact: u32;
var<workgroup> fast_T: u32;

const ONE = vec2u(0u, 0x3ff00000u);
const FLT_EPSILON = vec2u(0u, 0x3e800000u);        // 2^−23
const ONE_MINUS_EPS = vec2u(0xe0000000u, 0x3fefffffu); // 1 − 2^−23

// Index of the largest sums[] (σ ≥ 0 as doubles: bit patterns order like values), ties to the lowest bin, into
// best[0] / sums[0] (slots do not stay in bin order as winners move left, so ties compare bin numbers).
fn argmax_sums(t: u32) {
  best[t] = t;
  workgroupBarrier();
  for (var half = 128u; half > 0u; half >>= 1u) {
    if (t < half) {
      let a = sums[t];
      let b = sums[t + half];
      if (lt64(a, b) || (all(a == b) && best[t + half] < best[t])) { sums[t] = b; best[t] = best[t + half]; }
    }
    workgroupBarrier();
  }
}

// A positive normal f32 as a double.
fn f64_from_f32(x: f32) -> vec2u {
  let b = bitcast<u32>(x);
  let m = b & 0x7fffffu;
  return vec2u(m << 29u, ((((b >> 23u) & 0xffu) + 896u) << 20u) | (m >> 3u));
}

// Fast path (header): sets use_exact, and fast_T where it is 0; returns Σ i·h_i.
fn fast_otsu(t: u32, h: u32) -> vec2u {
  valid[t] = h;
  sums[t] = mul64(t, h);
  workgroupBarrier();
  for (var off = 1u; off < 256u; off <<= 1u) {
    var c = valid[t];
    var s = sums[t];
    if (t >= off) { c += valid[t - off]; s = add64(s, sums[t - off]); }
    workgroupBarrier();
    valid[t] = c;
    sums[t] = s;
    workgroupBarrier();
  }
  let n = valid[255];
  let S = sums[255];
  let n1 = valid[t];
  let n2 = n - n1;
  let s1 = sums[t];
  let prev = select(vec2u(0u), sums[max(t, 1u) - 1u], t > 0u);
  // min(q1, q2) against FLT_EPSILON: exact N1, N2 make it a ratio of integers; f32 resolves it 2^−10 away.
  let edge = f32(min(n1, n2)) * 8388608.0 / f32(n);
  let ok = edge >= 1.0;
  if (abs(edge - 1.0) < 0.0009765625) { atomicOr(&near_edge, 1u); }
  workgroupBarrier();
  valid[t] = select(0u, 1u, ok);
  workgroupBarrier();
  if (ok && (t == 0u || valid[t - 1u] == 0u)) { lost = prev; }
  workgroupBarrier();
  // key = σ·N² = num² / (N1·N2), num = N1·N2·d (see header); 0 on skipped bins (a valid σ is > 0).
  var key = vec2u(0u);
  var tol = vec2u(0u);
  if (ok) {
    let d1 = sub64(s1, lost);
    let e1 = sub64(mul64(t, n1), d1);
    let e2 = sub64(sub64(S, d1), mul64(t + 1u, n2));
    let n1d = f64_from_u32(n1);
    let n2d = f64_from_u32(n2);
    let num = f64_add(f64_mul(n1d, n2d), f64_add(f64_mul(f64_from_u64(e1), n2d), f64_mul(f64_from_u64(e2), n1d)));
    key = f64_div(f64_mul(num, num), f64_mul(n1d, n2d));
    tol = f64_mul(key, f64_from_f32(9.094947e-13 + 9.313226e-10 * f32(n) / f32(min(n1, n2))));
  }
  workgroupBarrier();
  sums[t] = key;
  argmax_sums(t);
  let top = best[0];
  workgroupBarrier();
  // The other valid bins' σ at the top of their error range.
  sums[t] = select(f64_add(key, tol), vec2u(0u), t == top || !ok);
  argmax_sums(t);
  if (t == top) {
    let clear = f64_is_zero(key) || f64_lt(sums[0], f64_sub(key, tol)); // no valid bin: T = 0
    use_exact = select(1u, 0u, clear && atomicLoad(&near_edge) == 0u);
    fast_T = select(top, 0u, f64_is_zero(key));
  }
  return S;
}

// Exact path (header): OpenCV's doubles; returns T.
fn exact_otsu(t: u32, h: u32, S: vec2u) -> u32 {
  let scale = f64_div(ONE, f64_from_u32(P.total));
  p[t] = f64_mul(f64_from_u32(h), scale);
  ip[t] = f64_mul(f64_from_u32(t), p[t]);
  let mu = f64_mul(f64_from_u64(S), scale);
  workgroupBarrier();
  if (t == 0u) {
    var mu1 = vec2u(0u);
    var q1 = vec2u(0u);
    for (var i = 0u; i < 256u; i++) {
      mu1 = f64_mul(mu1, q1);
      q1 = f64_add(q1, p[i]);
      let q2 = f64_sub(ONE, q1);
      let skip = f64_lt(q1, FLT_EPSILON) || f64_lt(q2, FLT_EPSILON) || f64_lt(ONE_MINUS_EPS, q1) || f64_lt(ONE_MINUS_EPS, q2);
      if (!skip) { mu1 = f64_div(f64_add(mu1, ip[i]), q1); }
      valid[i] = select(1u, 0u, skip);
      q1s[i] = q1;
      p[i] = q2;
      ip[i] = mu1;
    }
  }
  workgroupBarrier();
  var sigma = vec2u(0u);
  if (valid[t] == 1u) {
    let q1 = q1s[t];
    let q2 = p[t];
    let mu1 = ip[t];
    let mu2 = f64_div(f64_sub(mu, f64_mul(q1, mu1)), q2);
    let d = f64_sub(mu1, mu2);
    sigma = f64_mul(f64_mul(f64_mul(q1, q2), d), d);
  }
  workgroupBarrier();
  sums[t] = sigma;
  argmax_sums(t);
  return best[0];
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32) {
  let h = hist[t];
  let S = fast_otsu(t, h);
  let exact = workgroupUniformLoad(&use_exact);
  var T = fast_T;
  if (exact == 1u) { T = exact_otsu(t, h, S); }
  lut[t] = select(0u, P.maxv, t > T);
  if (t == 0u) {
    result[0] = T;
    result[1] = exact;
  }
}
`;

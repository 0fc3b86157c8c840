import { f64Wgsl } from '../../core/gpu/wgsl/f64.js';

/**
 * Otsu's threshold of an 8-bit image on the GPU from its 256-bin histogram, then the binarization LUT, in one
 * workgroup of 256 invocations (invocation t owns bin t). It evaluates OpenCV's getThreshVal_Otsu_8u
 * (imgproc/src/thresh.cpp; global.ts otsuThreshold is the same code on the host) operation for operation in
 * software double precision (core/gpu/wgsl/f64.ts), so it picks OpenCV's bin on every histogram: σ of two bins
 * can be equal in exact arithmetic and differ in doubles, or the reverse, and only the same doubles settle such
 * ties as OpenCV does (an f32 evaluation took bin 87 instead of 90 on np.arange(0, 181, 3)).
 * 1. in parallel: p_i = h_i·scale and i·p_i; the total Σ i·h_i (exact, 64-bit) gives μ = Σ·scale;
 * 2. invocation 0 runs the recurrence, which is sequential in OpenCV too: μ1 ·= q1; q1 += p_i; q2 = 1 − q1;
 *    bins with min(q1, q2) < FLT_EPSILON or max(q1, q2) > 1 − FLT_EPSILON are skipped (μ1 is not divided
 *    there); otherwise μ1 = (μ1 + i·p_i) / q1;
 * 3. in parallel: μ2 = (μ − q1·μ1) / q2 and σ = q1·q2·(μ1 − μ2)·(μ1 − μ2);
 * 4. a tree reduction keeps the largest σ, ties to the lowest bin: OpenCV's first strict maximum (σ > max, from
 *    max = 0; no valid bin gives 0);
 * 5. lut[i] = i > T ? maxv : 0, and T is written for the host.
 */
export const otsuWgsl = /* wgsl */ `
${f64Wgsl}
struct Params { total: u32, bins: u32, per_thread: u32, maxv: u32 }
@group(0) @binding(0) var<storage, read> hist: array<u32>;
@group(0) @binding(1) var<storage, read_write> lut: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
var<workgroup> sums: array<vec2u, 256>; // Σ i·h_i (reduction), then σ
var<workgroup> p: array<vec2u, 256>;    // p_i, then q2 at bin i
var<workgroup> ip: array<vec2u, 256>;   // i·p_i, then μ1 at bin i
var<workgroup> q1s: array<vec2u, 256>;  // q1 at bin i
var<workgroup> valid: array<u32, 256>;  // bin i not skipped
var<workgroup> best: array<u32, 256>;   // reduction: the bin of the largest σ

const ONE = vec2u(0u, 0x3ff00000u);
const FLT_EPSILON = vec2u(0u, 0x3e800000u);        // 2^−23
const ONE_MINUS_EPS = vec2u(0xe0000000u, 0x3fefffffu); // 1 − 2^−23

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32) {
  let h = hist[t];
  sums[t] = mul64(t, h);
  let scale = f64_div(ONE, f64_from_u32(P.total));
  p[t] = f64_mul(f64_from_u32(h), scale);
  ip[t] = f64_mul(f64_from_u32(t), p[t]);
  workgroupBarrier();
  for (var half = 128u; half > 0u; half >>= 1u) {
    if (t < half) { sums[t] = add64(sums[t], sums[t + half]); }
    workgroupBarrier();
  }
  let mu = f64_mul(f64_from_u64(sums[0]), scale);
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
  // σ ≥ 0, so its bit patterns order like its values.
  sums[t] = sigma;
  best[t] = t;
  workgroupBarrier();
  for (var half = 128u; half > 0u; half >>= 1u) {
    if (t < half) {
      let a = sums[t];
      let b = sums[t + half];
      // Larger σ wins; on equal σ the lower bin (slots do not stay in bin order as winners move left).
      if (lt64(a, b) || (all(a == b) && best[t + half] < best[t])) { sums[t] = b; best[t] = best[t + half]; }
    }
    workgroupBarrier();
  }
  let T = best[0];
  lut[t] = select(0u, P.maxv, t > T);
  if (t == 0u) { result[0] = T; }
}
`;

import { u64Wgsl } from '../../core/gpu/wgsl/u64.js';

/**
 * Otsu's threshold on the GPU from a histogram buffer, then the binarization LUT, in one workgroup of 256
 * invocations (bins = 256·K; invocation t owns bins [t·K, (t+1)·K)):
 * 1. each invocation sums its bins' counts and intensities (64-bit, as u32 pairs: Σ i·h exceeds 2^32 for
 *    large images);
 * 2. a Hillis–Steele exclusive scan over the 256 partial sums gives every bin's cumulative n1 and s1;
 * 3. each invocation walks its bins: σ(t) = n1·n2·(μ1 − μ2)² (OpenCV's q1·q2·(μ1 − μ2)² times N²), skipping
 *    bins where min(q1, q2) < FLT_EPSILON as OpenCV does, keeping its first strict maximum;
 * 4. a tree reduction picks the largest σ, ties to the lowest bin (OpenCV keeps the first strict maximum;
 *    opencv_contrib #3970 was a race on exactly these ties);
 * 5. lut[i] = i > T ? maxv : 0, and T is written for the host.
 * σ is evaluated in f32 from exact integer sums; OpenCV uses double. They can only disagree when two bins'
 * σ agree to ~1e-6 relative: none of the test photographs or random 8-bit images does, but 16-bit noise over
 * 65536 bins does, so threshold() uses this kernel for 8-bit images only (it is written for any 256·K bins).
 */
export const otsuWgsl = /* wgsl */ `
${u64Wgsl}
struct Params { total: u32, bins: u32, per_thread: u32, maxv: u32 }
@group(0) @binding(0) var<storage, read> hist: array<u32>;
@group(0) @binding(1) var<storage, read_write> lut: array<u32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
var<workgroup> cnt: array<u32, 256>;
var<workgroup> sum: array<vec2u, 256>;
var<workgroup> best_sigma: array<f32, 256>;
var<workgroup> best_bin: array<u32, 256>;

const FLT_EPSILON: f32 = 1.1920928955078125e-7;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32) {
  let base = li * P.per_thread;
  var c = 0u;
  var s = vec2u(0u);
  for (var k = 0u; k < P.per_thread; k++) {
    let h = hist[base + k];
    c += h;
    s = add64(s, mul64(base + k, h));
  }
  cnt[li] = c;
  sum[li] = s;
  workgroupBarrier();
  for (var off = 1u; off < 256u; off <<= 1u) {
    var vc = 0u;
    var vs = vec2u(0u);
    if (li >= off) { vc = cnt[li - off]; vs = sum[li - off]; }
    workgroupBarrier();
    cnt[li] += vc;
    sum[li] = add64(sum[li], vs);
    workgroupBarrier();
  }
  let N = P.total;
  let S = sum[255];
  let fN = f32(N);
  var n1 = cnt[li] - c;
  var s1 = sub64(sum[li], s);
  var my_sigma = 0.0;
  var my_bin = 0u;
  for (var k = 0u; k < P.per_thread; k++) {
    let i = base + k;
    let h = hist[i];
    n1 += h;
    s1 = add64(s1, mul64(i, h));
    let n2 = N - n1;
    let f1 = f32(n1);
    let f2 = f32(n2);
    if (min(f1, f2) < FLT_EPSILON * fN) { continue; }
    let mu1 = f32_of(s1) / f1;
    let mu2 = f32_of(sub64(S, s1)) / f2;
    let sigma = f1 * f2 * (mu1 - mu2) * (mu1 - mu2);
    if (sigma > my_sigma) { my_sigma = sigma; my_bin = i; }
  }
  best_sigma[li] = my_sigma;
  best_bin[li] = my_bin;
  workgroupBarrier();
  for (var half = 128u; half > 0u; half >>= 1u) {
    if (li < half) {
      let a = best_sigma[li];
      let b = best_sigma[li + half];
      // Larger σ wins; on equal σ the lower bin (slots do not stay in bin order as winners move left).
      // σ = 0 means "no valid bin" and loses to any valid one.
      let bb = best_bin[li + half];
      if (b > a || (b == a && b > 0.0 && bb < best_bin[li])) { best_sigma[li] = b; best_bin[li] = bb; }
    }
    workgroupBarrier();
  }
  let t = best_bin[0];
  for (var k = 0u; k < P.per_thread; k++) {
    let i = base + k;
    lut[i] = select(0u, P.maxv, i > t);
  }
  if (li == 0u) { result[0] = t; }
}
`;

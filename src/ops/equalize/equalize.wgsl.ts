import { exactFloatWgsl } from '../../core/gpu/wgsl/exact-float.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';
import { workgroupScanWgsl } from '../../core/gpu/wgsl/scan.js';

export const LutParams = defineUniforms('LutParams', { total: 'u32', bins: 'u32', per_thread: 'u32', maxv: 'u32' });

/**
 * Equalization LUT on the GPU, straight from the histogram kernel's output (no host round trip):
 * build_lut runs one workgroup of 256 invocations; invocation t owns bins [t·K, (t+1)·K) (K = bins / 256),
 *   sums them, a Hillis–Steele scan over the 256 partial sums gives every bin's cumulative count, and the
 *   first non-zero bin comes from a workgroup atomicMin. The LUT formula is OpenCV's, evaluated with the
 *   exact integer-based division and conversion of exact-float.ts, so it matches the CPU path bit for bit.
 */
export const equalizeLutWgsl = /* wgsl */ `
${exactFloatWgsl}
${LutParams.wgsl}
@group(0) @binding(0) var<storage, read> hist: array<u32>;
@group(0) @binding(1) var<storage, read_write> lut: array<u32>;
@group(0) @binding(2) var<uniform> L: LutParams;
var<workgroup> partial: array<u32, 256>;
var<workgroup> first_nz: atomic<u32>;

@compute @workgroup_size(256)
fn build_lut(@builtin(local_invocation_index) li: u32) {
  if (li == 0u) { atomicStore(&first_nz, 0xffffffffu); }
  workgroupBarrier();
  let base = li * L.per_thread;
  var s = 0u;
  var first = 0xffffffffu;
  for (var k = 0u; k < L.per_thread; k++) {
    let h = hist[base + k];
    if (h != 0u && first == 0xffffffffu) { first = base + k; }
    s += h;
  }
  atomicMin(&first_nz, first);
  partial[li] = s;
  ${workgroupScanWgsl('partial', 'li', 256)}
  let i0 = atomicLoad(&first_nz);
  if (i0 == 0xffffffffu) { return; }
  let h0 = hist[i0];
  if (h0 == L.total) {
    for (var k = 0u; k < L.per_thread; k++) { lut[base + k] = i0; }
    return;
  }
  // scale = (bins - 1).f / f32(total - h0): f32(d) = m·2^s, so the quotient is div_rn(maxv, m)·2^-s.
  let d = split_rn(L.total - h0);
  let scale = ldexp(div_rn(L.maxv, d.x), -i32(d.y));
  var cum = partial[li] - s;
  for (var k = 0u; k < L.per_thread; k++) {
    let i = base + k;
    cum += hist[i];
    if (i <= i0) { lut[i] = 0u; continue; }
    let v = round(u32_to_f32_rn(cum - h0) * scale);
    lut[i] = u32(clamp(v, 0.0, f32(L.maxv)));
  }
}
`;

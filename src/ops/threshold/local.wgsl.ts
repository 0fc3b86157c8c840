import { exactFmaWgsl } from '../../core/gpu/wgsl/exact-float.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** The local threshold kernels' parameters; `zero` is 0, a value the kernels cannot know (exact-float.ts). */
export const LocalParams = defineUniforms('L', { w: 'u32', h: 'u32', r: 'u32', idelta: 'i32', n: 'u32', zero: 'u32' });

/**
 * Local (adaptive) thresholds on the GPU, cv2.adaptiveThreshold semantics (see local-kernels.ts, the CPU
 * twin, which these mirror operation for operation):
 * - box_rows / box_cols: window sums with replicated borders as running sums — each invocation slides along
 *   a segment of SEG pixels (a row segment, then a column segment with consecutive invocations on
 *   consecutive columns, so loads coalesce): cost per pixel does not grow with the window;
 *   mean = round(sum / k²) in integers (k² odd: no ties);
 * - gauss_rows / gauss_cols: OpenCV's separable float Gaussian, taps in a storage buffer, fused multiply-adds in
 *   OpenCV's order (row: k0·x0 then fma; column: centre, then symmetric pairs), mean rounded half to even. The
 *   fma must be exactly rounded: WGSL's fma() need not fuse — on lavapipe it rounds the product first, which
 *   moved 4/3/11/46 pixels of 1000×1000 noise for windows 11/15/31/101. Two variants of the source: the
 *   software fma (exact-float.ts fma_rn, 2.3–2.9× slower passes on the H100) and, where GpuContext.fusedFma()
 *   found fma() fused, the native one (localThresholdWgslNativeFma; dispatches 'threshold.gaussian.*.fma');
 * - binarize: 4 pixels per invocation, packed: src − mean > −ceil(C) ? 255 : 0.
 * 8-bit data is read as packed u32 words.
 */
const localWgsl = (fmaWgsl: string) => /* wgsl */ `
${gridWgsl}
${fmaWgsl}
const SEG: u32 = 64u;
// zero: 0 (the uniform's padding), which the compiler cannot know: it keeps products opaque (software fma_rn).
${LocalParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<uniform> P: L;

fn px(p: u32) -> u32 { return (src[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu; }
fn cx(x: i32) -> u32 { return u32(clamp(x, 0i, i32(P.w) - 1i)); }
fn cy(y: i32) -> u32 { return u32(clamp(y, 0i, i32(P.h) - 1i)); }
fn lin(wid: vec3u, nwg: vec3u, li: u32) -> u32 { return linear_group_id(wid, nwg) * 256u + li; }

@group(0) @binding(2) var<storage, read_write> row_sums: array<u32>;
@compute @workgroup_size(256)
fn box_rows(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let segs = (P.w + SEG - 1u) / SEG;
  let idx = lin(wid, nwg, li);
  if (idx >= segs * P.h) { return; }
  let y = idx / segs;
  let x0 = (idx % segs) * SEG;
  let x1 = min(P.w, x0 + SEG);
  let row = y * P.w;
  let r = i32(P.r);
  var s = 0u;
  for (var d = -r; d <= r; d++) { s += px(row + cx(i32(x0) + d)); }
  row_sums[row + x0] = s;
  for (var x = x0 + 1u; x < x1; x++) {
    s = s + px(row + cx(i32(x) + r)) - px(row + cx(i32(x) - r - 1i));
    row_sums[row + x] = s;
  }
}

@group(0) @binding(3) var<storage, read_write> means: array<u32>;
@compute @workgroup_size(256)
fn box_cols(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let segs = (P.h + SEG - 1u) / SEG;
  let idx = lin(wid, nwg, li);
  if (idx >= segs * P.w) { return; }
  let x = idx % P.w;
  let y0 = (idx / P.w) * SEG;
  let y1 = min(P.h, y0 + SEG);
  let r = i32(P.r);
  let k2 = (2u * P.r + 1u) * (2u * P.r + 1u);
  var s = 0u;
  for (var d = -r; d <= r; d++) { s += row_sums[cy(i32(y0) + d) * P.w + x]; }
  for (var y = y0; y < y1; y++) {
    means[y * P.w + x] = (2u * s + k2) / (2u * k2);
    s = s + row_sums[cy(i32(y) + r + 1i) * P.w + x] - row_sums[cy(i32(y) - r) * P.w + x];
  }
}

@group(0) @binding(4) var<storage, read> taps: array<f32>;
@group(0) @binding(5) var<storage, read_write> rows: array<f32>;
@compute @workgroup_size(256)
fn gauss_rows(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let p = lin(wid, nwg, li);
  if (p >= P.n) { return; }
  let x = i32(p % P.w);
  let row = p - u32(x);
  let r = i32(P.r);
  var s = mul_rn(taps[0], f32(px(row + cx(x - r))), P.zero);
  for (var k = 1i; k <= 2i * r; k++) { s = fma_rn_small(taps[k], f32(px(row + cx(x - r + k))), s, P.zero); }
  rows[p] = s;
}

@compute @workgroup_size(256)
fn gauss_cols(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let p = lin(wid, nwg, li);
  if (p >= P.n) { return; }
  let x = p % P.w;
  let y = i32(p / P.w);
  let r = i32(P.r);
  var s = mul_rn(taps[r], rows[p], P.zero);
  for (var k = 1i; k <= r; k++) {
    let pair = rows[cy(y + k) * P.w + x] + rows[cy(y - k) * P.w + x];
    s = fma_rn(taps[r + k], pair, s, P.zero);
  }
  means[p] = u32(clamp(round(s), 0.0, 255.0));
}

@group(0) @binding(6) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256)
fn binarize(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let q = lin(wid, nwg, li);
  if (q * 4u >= P.n) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j++) {
    let p = q * 4u + j;
    if (p < P.n && i32(px(p)) - i32(means[p]) > -P.idelta) { word |= 0xffu << (j * 8u); }
  }
  dst[q] = word;
}
`;

/** fma_rn, fma_rn_small and mul_rn (exact-float.ts) as WGSL's own fma() and ×, for adapters whose fma() fuses. */
const nativeFmaWgsl = /* wgsl */ `
fn fma_rn(a: f32, b: f32, c: f32, zero: u32) -> f32 { return fma(a, b, c); }
fn fma_rn_small(a: f32, x: f32, c: f32, zero: u32) -> f32 { return fma(a, x, c); }
fn mul_rn(a: f32, b: f32, zero: u32) -> f32 { return a * b; }
`;

/** The local threshold kernels with the fma computed in software: exact on every adapter. */
export const localThresholdWgsl = localWgsl(exactFmaWgsl);
/** The same with WGSL's fma(): exact only where it fuses (GpuContext.fusedFma()). */
export const localThresholdWgslNativeFma = localWgsl(nativeFmaWgsl);

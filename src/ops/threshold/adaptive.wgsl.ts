import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { u64Wgsl } from '../../core/gpu/wgsl/u64.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

export const AdaptiveParams = defineUniforms('A', { w: 'u32', h: 'u32', r: 'u32', contrast: 'u32', fallback: 'u32', n: 'u32' });

/**
 * Adaptive isodata segmentation on the GPU (the rule and fallback: adaptive-kernels.ts, whose integer
 * arithmetic this mirrors, with 64-bit products as u32 pairs). Pixels are independent; two schemes:
 * - adaptive_naive: one invocation per pixel rebuilds its window histogram from W² reads — O(W²) per pixel;
 * - adaptive_sliding: one invocation per run of SEG pixels of a row builds the histogram once and slides it
 *   (one column out, one in) — O(W²/SEG + W) per pixel; fewer invocations, so less parallelism on small
 *   images. Both are benchmarked (bench/run.ts).
 * Each writes the per-pixel threshold t(p); local.wgsl.ts's binarize kernel then sets src > t(p).
 * The private 256-bin histogram lives in function memory (registers spill to local memory: it is the
 * per-invocation state the scheme needs).
 */
export const adaptiveWgsl = /* wgsl */ `
${gridWgsl}
${u64Wgsl}
const SEG: u32 = 32u;
${AdaptiveParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<uniform> P: A;
@group(0) @binding(2) var<storage, read_write> thresholds: array<u32>;

fn px(p: u32) -> u32 { return (src[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu; }

fn isodata_of(h: ptr<function, array<u32, 256>>) -> u32 {
  var lo = 0u;
  while ((*h)[lo] == 0u) { lo++; }
  var hi = 255u;
  while ((*h)[hi] == 0u) { hi--; }
  if (hi - lo < P.contrast) { return P.fallback; }
  var n = 0u;
  var s = 0u;
  for (var v = lo; v <= hi; v++) { n += (*h)[v]; s += v * (*h)[v]; }
  var n1 = 0u;
  var s1 = 0u;
  for (var t = lo; t < hi; t++) {
    n1 += (*h)[t];
    s1 += t * (*h)[t];
    let n2 = n - n1;
    let s2 = s - s1;
    let nn = n1 * n2;
    let mid = add64(mul64(n2, s1), mul64(n1, s2));
    let lhs = mul64(2u * t, nn);
    let rhs = add64(lhs, mul64(2u, nn));
    if (le64(lhs, mid) && lt64(mid, rhs)) { return t; }
  }
  return P.fallback;
}

@compute @workgroup_size(64)
fn adaptive_naive(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let p = linear_group_id(wid, nwg) * 64u + li;
  if (p >= P.n) { return; }
  let x = p % P.w;
  let y = p / P.w;
  let xa = max(i32(x) - i32(P.r), 0i);
  let xb = min(i32(x) + i32(P.r), i32(P.w) - 1i);
  let ya = max(i32(y) - i32(P.r), 0i);
  let yb = min(i32(y) + i32(P.r), i32(P.h) - 1i);
  var h: array<u32, 256>;
  for (var yy = ya; yy <= yb; yy++) {
    for (var xx = xa; xx <= xb; xx++) { h[px(u32(yy) * P.w + u32(xx))] += 1u; }
  }
  thresholds[p] = isodata_of(&h);
}

@compute @workgroup_size(64)
fn adaptive_sliding(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let segs = (P.w + SEG - 1u) / SEG;
  let idx = linear_group_id(wid, nwg) * 64u + li;
  if (idx >= segs * P.h) { return; }
  let y = idx / segs;
  let x0 = (idx % segs) * SEG;
  let x1 = min(P.w, x0 + SEG);
  let r = i32(P.r);
  let ya = u32(max(i32(y) - r, 0i));
  let yb = u32(min(i32(y) + r, i32(P.h) - 1i));
  var h: array<u32, 256>;
  let xa = u32(max(i32(x0) - r, 0i));
  let xb = u32(min(i32(x0) + r, i32(P.w) - 1i));
  for (var yy = ya; yy <= yb; yy++) {
    for (var xx = xa; xx <= xb; xx++) { h[px(yy * P.w + xx)] += 1u; }
  }
  for (var x = x0; x < x1; x++) {
    if (x > x0) {
      let out_x = i32(x) - r - 1i;
      let in_x = i32(x) + r;
      if (out_x >= 0i) { for (var yy = ya; yy <= yb; yy++) { h[px(yy * P.w + u32(out_x))] -= 1u; } }
      if (in_x < i32(P.w)) { for (var yy = ya; yy <= yb; yy++) { h[px(yy * P.w + u32(in_x))] += 1u; } }
    }
    thresholds[y * P.w + x] = isodata_of(&h);
  }
}
`;

import { bytesWgsl } from '../../core/gpu/wgsl/bytes.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

export const ApplyParams = defineUniforms('ApplyParams', { vecs: 'u32' });

/**
 * Applies a look-up table to every pixel (equalization, global thresholds):
 * - apply_u8: the 256-entry LUT staged in workgroup memory, 16 pixels per vec4<u32> load and store.
 * - apply_u16: the 65536-entry LUT read from global memory (it does not fit workgroup memory), 8 pixels per vector.
 * Whole vectors are mapped, padding included: the padding of the output is never read back.
 */
export const applyLutWgsl = /* wgsl */ `
${gridWgsl}
${bytesWgsl()}
override WG: u32 = 256u;
${ApplyParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4u>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<uniform> A: ApplyParams;
var<workgroup> wlut: array<u32, 256>;

fn map4(w: u32) -> u32 {
  return pack4(wlut[byte_of(w, 0u)], wlut[byte_of(w, 1u)], wlut[byte_of(w, 2u)], wlut[byte_of(w, 3u)]);
}

@compute @workgroup_size(WG)
fn apply_u8(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  for (var b = li; b < 256u; b += WG) { wlut[b] = table[b]; }
  workgroupBarrier();
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < A.vecs; i += stride) {
    let v = src[i];
    dst[i] = vec4u(map4(v.x), map4(v.y), map4(v.z), map4(v.w));
  }
}

fn map2(w: u32) -> u32 {
  return table[w & 0xffffu] | (table[w >> 16u] << 16u);
}

@compute @workgroup_size(WG)
fn apply_u16(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < A.vecs; i += stride) {
    let v = src[i];
    dst[i] = vec4u(map2(v.x), map2(v.y), map2(v.z), map2(v.w));
  }
}
`;

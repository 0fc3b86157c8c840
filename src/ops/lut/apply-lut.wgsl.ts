import { bytesWgsl } from '../../core/gpu/wgsl/bytes.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

export const ApplyParams = defineUniforms('ApplyParams', { vecs: 'u32' });

/**
 * Applies a look-up table to every pixel (equalization, global thresholds):
 * - apply_u8: the 256-entry LUT staged in workgroup memory, 16 pixels per vec4<u32> load and store.
 * - apply_u16: the 65536-entry LUT read from global memory (it does not fit workgroup memory), 8 pixels per vector.
 * - apply_u8_inplace, apply_u16_inplace: the same over one buffer, read and written (`data`): an output written over
 *   an input its caller gives up (RunOptions.inPlace) — one buffer bound twice, read-only and writable, is a usage
 *   conflict in WebGPU.
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
@group(0) @binding(4) var<storage, read_write> data: array<vec4u>;
var<workgroup> wlut: array<u32, 256>;

fn map4(w: u32) -> u32 {
  return pack4(wlut[byte_of(w, 0u)], wlut[byte_of(w, 1u)], wlut[byte_of(w, 2u)], wlut[byte_of(w, 3u)]);
}

fn map2(w: u32) -> u32 {
  return table[w & 0xffffu] | (table[w >> 16u] << 16u);
}
${entry('apply_u8', 'map4', 'src', 'dst')}
${entry('apply_u16', 'map2', 'src', 'dst')}
${entry('apply_u8_inplace', 'map4', 'data', 'data')}
${entry('apply_u16_inplace', 'map2', 'data', 'data')}
`;

/** One entry point: `map` (map4 stages the 8-bit LUT in workgroup memory first) over the vectors of `from` into `to`. */
function entry(name: string, map: 'map4' | 'map2', from: string, to: string): string {
  const stage = map === 'map4' ? `for (var b = li; b < 256u; b += WG) { wlut[b] = table[b]; }
  workgroupBarrier();` : '';
  return /* wgsl */ `
@compute @workgroup_size(WG)
fn ${name}(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  ${stage}
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < A.vecs; i += stride) {
    let v = ${from}[i];
    ${to}[i] = vec4u(${map}(v.x), ${map}(v.y), ${map}(v.z), ${map}(v.w));
  }
}`;
}

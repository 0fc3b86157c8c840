import { defineUniforms } from '../uniforms.js';
import { gridWgsl } from './grid.js';

/** The layout kernels' parameters: the image's width in elements, words per aligned row, rows, words to write. */
export const PackParams = defineUniforms('Params', { width: 'u32', rw: 'u32', rows: 'u32', words: 'u32' });

/**
 * Between an image's layout (row stride = width) and the aligned one (rows padded to whole u32 words, stride = rw
 * words: a word never holds pixels of two rows, so kernels can own whole output words): one invocation per
 * destination word, reading its elements wherever they are (reads may straddle words; writes never do). Used by
 * morphology (every kernel on the aligned layout) and the fused mean threshold (its output rows).
 */
export function alignedPackWgsl({ epw, bits, mask }: { epw: number; bits: number; mask: string }): string {
  return /* wgsl */ `
${gridWgsl}
${PackParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
fn el(i: u32) -> u32 { return (src[i / EPW] >> ((i % EPW) * BITS)) & ${mask}; }

// Image layout → aligned: destination word w is row w / rw, elements x0 … x0 + EPW − 1 (x < width).
@compute @workgroup_size(256)
fn to_aligned(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w >= P.words) { return; }
  let row = w / P.rw;
  let x0 = (w - row * P.rw) * EPW;
  var out = 0u;
  for (var l = 0u; l < EPW && x0 + l < P.width; l++) { out |= el(row * P.width + x0 + l) << (l * BITS); }
  dst[w] = out;
}

// Aligned → image layout: destination word w holds linear elements w·EPW … (row-major, stride width).
@compute @workgroup_size(256)
fn from_aligned(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w >= P.words) { return; }
  var out = 0u;
  for (var l = 0u; l < EPW; l++) {
    let p = w * EPW + l;
    let row = p / P.width;
    if (row >= P.rows) { break; }
    out |= el(row * P.rw * EPW + (p - row * P.width)) << (l * BITS);
  }
  dst[w] = out;
}
`;
}

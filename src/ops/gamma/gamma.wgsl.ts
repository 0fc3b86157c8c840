import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

export const GammaParams = defineUniforms('GammaParams', { vecs: 'u32', gamma: 'f32', gain: 'f32' });

/**
 * float32 gamma correction, x^gamma · gain per value (4 per invocation). WGSL's pow is exp2(gamma·log2(x)) with
 * the precision of those builtins, so results may differ from the CPU's (and skimage's) powf by a few ulp
 * (docs/gamma.md); 8/16-bit images never come here (they go through the exact LUT).
 */
export const gammaF32Wgsl = /* wgsl */ `
${gridWgsl}
override WG: u32 = 256u;
${GammaParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4f>;
@group(0) @binding(2) var<uniform> P: GammaParams;

@compute @workgroup_size(WG)
fn gamma_f32(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < P.vecs; i += stride) {
    dst[i] = pow(src[i], vec4f(P.gamma)) * P.gain;
  }
}
`;

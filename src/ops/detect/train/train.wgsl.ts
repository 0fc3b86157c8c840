import { defineUniforms } from '../../../core/gpu/uniforms.js';
import { gridWgsl } from '../../../core/gpu/wgsl/grid.js';

/**
 * Training kernels. `codes`: a thread per (feature, 4 samples) computes the MB-LBP codes of the samples' integral
 * images (the detector's code: bits 128…1 for cells (0,0) (0,1) (0,2) (1,2) (2,2) (2,1) (2,0) (1,0), cell ≥ centre,
 * sums in wrapping i32 as the CPU's `| 0`) and packs them into a u32, feature-major. `histograms`: a workgroup per
 * feature adds the samples' integer weights into 512 bins in workgroup memory (positives' codes, then negatives')
 * with integer atomics — exact and order-free, so the bins equal the CPU's whatever the scheduling — and writes them.
 */
export const CodeParams = defineUniforms('CodeParams', { n: 'u32', words: 'u32', features: 'u32', stride: 'u32', size: 'u32' });
export const HistParams = defineUniforms('HistParams', { n: 'u32', words: 'u32', features: 'u32' });

export const CODES_WG = 64;
export const HIST_WG = 256;

export const codesWgsl = /* wgsl */ `
${gridWgsl}
${CodeParams.wgsl}
@group(0) @binding(0) var<uniform> P: CodeParams;
@group(0) @binding(1) var<storage, read> ii: array<i32>;
@group(0) @binding(2) var<storage, read> feats: array<vec4i>;
@group(0) @binding(3) var<storage, read_write> codes: array<u32>;

fn lbp(base: i32, f: vec4i) -> u32 {
  let s = i32(P.stride);
  let o = base + f.y * s + f.x;
  let r1 = o + f.w * s; let r2 = r1 + f.w * s; let r3 = r2 + f.w * s;
  let c1 = f.z; let c2 = 2 * f.z; let c3 = 3 * f.z;
  let p00 = ii[o]; let p01 = ii[o + c1]; let p02 = ii[o + c2]; let p03 = ii[o + c3];
  let p10 = ii[r1]; let p11 = ii[r1 + c1]; let p12 = ii[r1 + c2]; let p13 = ii[r1 + c3];
  let p20 = ii[r2]; let p21 = ii[r2 + c1]; let p22 = ii[r2 + c2]; let p23 = ii[r2 + c3];
  let p30 = ii[r3]; let p31 = ii[r3 + c1]; let p32 = ii[r3 + c2]; let p33 = ii[r3 + c3];
  let c = p11 - p12 - p21 + p22;
  return select(0u, 128u, p00 - p01 - p10 + p11 >= c) | select(0u, 64u, p01 - p02 - p11 + p12 >= c)
    | select(0u, 32u, p02 - p03 - p12 + p13 >= c) | select(0u, 16u, p12 - p13 - p22 + p23 >= c)
    | select(0u, 8u, p22 - p23 - p32 + p33 >= c) | select(0u, 4u, p21 - p22 - p31 + p32 >= c)
    | select(0u, 2u, p20 - p21 - p30 + p31 >= c) | select(0u, 1u, p10 - p11 - p20 + p21 >= c);
}

@compute @workgroup_size(${CODES_WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let t = linear_group_id(wid, nwg) * ${CODES_WG}u + lid;
  if (t >= P.words * P.features) { return; }
  let f = t / P.words;
  let w = t % P.words;
  let feat = feats[f];
  var word = 0u;
  for (var k = 0u; k < 4u; k++) {
    let i = 4u * w + k;
    if (i < P.n) { word |= lbp(i32(i * P.size), feat) << (8u * k); }
  }
  codes[t] = word;
}
`;

export const histogramsWgsl = /* wgsl */ `
${gridWgsl}
${HistParams.wgsl}
@group(0) @binding(0) var<uniform> P: HistParams;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
/** A sample's quantised weight, bit 31 set for a negative. */
@group(0) @binding(2) var<storage, read> weights: array<u32>;
@group(0) @binding(3) var<storage, read_write> hist: array<u32>;
var<workgroup> bins: array<atomic<u32>, 512>;

@compute @workgroup_size(${HIST_WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let f = linear_group_id(wid, nwg);
  for (var k = lid; k < 512u; k += ${HIST_WG}u) { atomicStore(&bins[k], 0u); }
  workgroupBarrier();
  if (f < P.features) {
    for (var i = lid; i < P.n; i += ${HIST_WG}u) {
      let wq = weights[i];
      let q = wq & 0x7fffffffu;
      if (q != 0u) {
        let code = (codes[f * P.words + i / 4u] >> (8u * (i % 4u))) & 0xffu;
        atomicAdd(&bins[code + select(0u, 256u, (wq >> 31u) != 0u)], q);
      }
    }
  }
  workgroupBarrier();
  if (f < P.features) {
    for (var k = lid; k < 512u; k += ${HIST_WG}u) { hist[f * 512u + k] = atomicLoad(&bins[k]); }
  }
}
`;

import { gridWgsl } from '../../core/gpu/wgsl/grid.js';

/**
 * Histogram kernels, method "atomic" (privatized workgroup histograms; OpenCV CUDA hist.cu, cuda-samples
 * histogram256): every workgroup counts its pixels into COPIES replicated 256-bin histograms in workgroup
 * memory — replication spreads the atomics of neighbouring invocations, which in real photographs often
 * see the same value, over different addresses — then adds each non-zero bin to the global histogram
 * with one atomic. Pixels are read 16 (8-bit) per vec4<u32> load; the buffer is padded to 16 bytes and the
 * last partial vector is counted pixel by pixel so padding never counts.
 * 16-bit images: 65536 bins do not fit workgroup memory (16 KiB guaranteed), so they count straight into
 * the global histogram; natural 16-bit data spreads over many bins, which keeps contention low.
 */
export const histogramWgsl = /* wgsl */ `
${gridWgsl}
override WG: u32 = 256u;
override COPIES: u32 = 8u;
struct Params { n: u32, vecs: u32, _p0: u32, _p1: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> P: Params;
var<workgroup> local: array<atomic<u32>, 256u * COPIES>;

fn count4(w: u32, copy: u32) {
  atomicAdd(&local[((w & 0xffu) * COPIES) + copy], 1u);
  atomicAdd(&local[(((w >> 8u) & 0xffu) * COPIES) + copy], 1u);
  atomicAdd(&local[(((w >> 16u) & 0xffu) * COPIES) + copy], 1u);
  atomicAdd(&local[((w >> 24u) * COPIES) + copy], 1u);
}

@compute @workgroup_size(WG)
fn hist_u8(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  for (var b = li; b < 256u * COPIES; b += WG) { atomicStore(&local[b], 0u); }
  workgroupBarrier();
  let copy = li % COPIES;
  let full = P.n / 16u;
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < full; i += stride) {
    let v = src[i];
    count4(v.x, copy); count4(v.y, copy); count4(v.z, copy); count4(v.w, copy);
  }
  if (linear_group_id(wid, nwg) == 0u && li == 0u) {
    let v = src[min(full, P.vecs - 1u)];
    for (var k = 0u; k < P.n % 16u; k++) {
      let byte = (v[k / 4u] >> ((k % 4u) * 8u)) & 0xffu;
      atomicAdd(&local[byte * COPIES + copy], 1u);
    }
  }
  workgroupBarrier();
  for (var b = li; b < 256u; b += WG) {
    var c = 0u;
    for (var k = 0u; k < COPIES; k++) { c += atomicLoad(&local[b * COPIES + k]); }
    if (c != 0u) { atomicAdd(&hist[b], c); }
  }
}

@compute @workgroup_size(WG)
fn hist_u16(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let full = P.n / 8u;
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < full; i += stride) {
    let v = src[i];
    for (var k = 0u; k < 4u; k++) {
      atomicAdd(&hist[v[k] & 0xffffu], 1u);
      atomicAdd(&hist[v[k] >> 16u], 1u);
    }
  }
  if (linear_group_id(wid, nwg) == 0u && li == 0u) {
    let v = src[min(full, P.vecs - 1u)];
    for (var k = 0u; k < P.n % 8u; k++) {
      atomicAdd(&hist[(v[k / 2u] >> ((k % 2u) * 16u)) & 0xffffu], 1u);
    }
  }
}
`;

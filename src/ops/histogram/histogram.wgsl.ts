import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** The histogram kernels' parameters (part_base: the first partial histogram of this dispatch, sub-histograms). */
export const HistogramParams = defineUniforms('Params', { n: 'u32', vecs: 'u32', bins: 'u32', per_invocation: 'u32', bin_groups: 'u32', part_base: 'u32' });
export const SumParams = defineUniforms('SumParams', { bins: 'u32', chunks: 'u32' });

/**
 * Histogram kernels, generated per variant (dtype, mask, where the counters live) so every variant is
 * straight-line code: pixels are read 16 (8-bit) or 8 (16-bit) per vec4<u32> load, unrolled below.
 * Binning over the dtype's range: bin = (v · bins) >> bits, i.e. np.histogram(img, bins, range=(0, 2^bits)).
 * The buffers are padded to 16 bytes; the last partial vector is counted pixel by pixel so padding never counts.
 * A mask (8-bit, same pixel count; non-zero = counted, as cv2.calcHist) is read in step with the pixels.
 */
export interface HistogramKernelSpec {
  dtype: 'uint8' | 'uint16';
  masked: boolean;
}

const BITS = { uint8: 8, uint16: 16 } as const;
/** Pixels per vec4<u32>. */
export const PIXELS_PER_VEC = { uint8: 16, uint16: 8 } as const;

/** Shared declarations: parameters, pixel/mask extraction, binning. */
function common(spec: HistogramKernelSpec, maskBinding: number): string {
  const ppv = PIXELS_PER_VEC[spec.dtype];
  const pixel = spec.dtype === 'uint8'
    ? 'return (v[k / 4u] >> ((k % 4u) * 8u)) & 0xffu;'
    : 'return (v[k / 2u] >> ((k % 2u) * 16u)) & 0xffffu;';
  // The mask is 8-bit: for 16-bit data, two data vectors share one mask vector.
  const maskFns = !spec.masked
    ? 'fn mask_vec(i: u32) -> vec4u { return vec4u(0u); }\nfn counted(m: vec4u, i: u32, k: u32) -> bool { return true; }'
    : spec.dtype === 'uint8'
      ? 'fn mask_vec(i: u32) -> vec4u { return mask[i]; }\nfn counted(m: vec4u, i: u32, k: u32) -> bool { return ((m[k / 4u] >> ((k % 4u) * 8u)) & 0xffu) != 0u; }'
      : 'fn mask_vec(i: u32) -> vec4u { return mask[i / 2u]; }\nfn counted(m: vec4u, i: u32, k: u32) -> bool { let kk = (i % 2u) * 8u + k; return ((m[kk / 4u] >> ((kk % 4u) * 8u)) & 0xffu) != 0u; }';
  return `
${gridWgsl}
const PPV: u32 = ${ppv}u;
${HistogramParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<vec4u>;
${spec.masked ? `@group(0) @binding(${maskBinding}) var<storage, read> mask: array<vec4u>;` : ''}
fn pixel(v: vec4u, k: u32) -> u32 { ${pixel} }
${maskFns}
fn bin_of(v: u32) -> u32 { return (v * P.bins) >> ${BITS[spec.dtype]}u; }
`;
}

/** Unrolled "for each pixel k of vector v (index i) that the mask keeps: BODY(bin)". */
function eachPixel(body: (bin: string) => string, ppv: number): string {
  let s = '';
  for (let k = 0; k < ppv; k++) s += `    if (counted(m, i, ${k}u)) { ${body(`bin_of(pixel(v, ${k}u))`)} }\n`;
  return s;
}

/**
 * Method "atomic" (privatized histograms; OpenCV CUDA hist.cu, cuda-samples histogram256): each workgroup
 * counts into `copies` replicated histograms in workgroup memory, then adds its non-zero bins to the global
 * histogram with one atomic each. With `localBins` = 0 (bins too many for workgroup memory, e.g. 65536)
 * pixels count straight into the global histogram.
 */
export function atomicHistogramWgsl(spec: HistogramKernelSpec, localBins: number, copies: number): string {
  const ppv = PIXELS_PER_VEC[spec.dtype];
  const local = localBins > 0;
  const count = (bin: string) => (local ? `atomicAdd(&local[(${bin}) * COPIES + copy], 1u);` : `atomicAdd(&hist[${bin}], 1u);`);
  return `${common(spec, 3)}
override WG: u32 = 256u;
const COPIES: u32 = ${copies}u;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> P: Params;
${local ? `var<workgroup> local: array<atomic<u32>, ${localBins * copies}u>;` : ''}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  ${local ? 'for (var b = li; b < P.bins * COPIES; b += WG) { atomicStore(&local[b], 0u); }\n  workgroupBarrier();' : ''}
  let copy = li % COPIES;
  let full = P.n / PPV;
  let stride = linear_group_count(nwg) * WG;
  for (var i = linear_group_id(wid, nwg) * WG + li; i < full; i += stride) {
    let v = src[i];
    let m = mask_vec(i);
${eachPixel(count, ppv)}  }
  if (linear_group_id(wid, nwg) == 0u && li == 0u && P.n % PPV != 0u) {
    let i = full;
    let v = src[i];
    let m = mask_vec(i);
    for (var k = 0u; k < P.n % PPV; k++) {
      if (counted(m, i, k)) { ${count('bin_of(pixel(v, k))')} }
    }
  }
  ${local ? `workgroupBarrier();
  for (var b = li; b < P.bins; b += WG) {
    var c = 0u;
    for (var k = 0u; k < COPIES; k++) { c += atomicLoad(&local[b * COPIES + k]); }
    if (c != 0u) { atomicAdd(&hist[b], c); }
  }` : ''}
}
`;
}

/**
 * Method "subhist" (no atomics anywhere; clEsperanto histogram.cl): every invocation counts its own pixels
 * (vectors li, li + WG, … of its workgroup's chunk, so loads stay coalesced) into a private SUB-bin
 * histogram; the workgroup sums the invocations' histograms CHUNK bins at a time through workgroup memory
 * (a reduction tree would need as many barriers; a column sum per bin is conflict-free) and writes one
 * partial histogram per workgroup. A second kernel (sum_partials) adds the partials per bin. More bins than
 * SUB (16-bit full range) are split into bin groups, each a workgroup that reads the chunk again: the
 * private histogram must stay small, so data is re-read instead — the price of avoiding atomics. An image
 * beyond one binding runs as several dispatches over ranges of it; part_base places each range's partials
 * after the previous ones, and one sum covers them all.
 */
export const SUB_BINS = 256;
const CHUNK = 32;
export function subHistogramWgsl(spec: HistogramKernelSpec): string {
  const ppv = PIXELS_PER_VEC[spec.dtype];
  const count = (bin: string) => `let b = ${bin} - base; if (b < SUB) { h[b] += 1u; }`;
  return `${common(spec, 3)}
override WG: u32 = 64u;
const SUB: u32 = ${SUB_BINS}u;
const CHUNK: u32 = ${CHUNK}u;
@group(0) @binding(1) var<storage, read_write> partials: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
var<workgroup> stage: array<u32, ${CHUNK}u * 64u>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let chunk = g / P.bin_groups;
  let base = (g % P.bin_groups) * SUB;
  let full = P.n / PPV;
  var h: array<u32, SUB>;
  let first = chunk * P.per_invocation * WG;
  for (var j = 0u; j < P.per_invocation; j++) {
    let i = first + j * WG + li;
    if (i < full) {
      let v = src[i];
      let m = mask_vec(i);
${eachPixel(count, ppv)}    } else if (i == full && P.n % PPV != 0u) {
      let v = src[i];
      let m = mask_vec(i);
      for (var k = 0u; k < P.n % PPV; k++) {
        if (counted(m, i, k)) { ${count('bin_of(pixel(v, k))')} }
      }
    }
  }
  let chunks = (P.vecs + P.per_invocation * WG - 1u) / (P.per_invocation * WG);
  if (chunk >= chunks) { return; }
  for (var r = 0u; r < SUB / CHUNK; r++) {
    for (var k = 0u; k < CHUNK; k++) { stage[k * WG + li] = h[r * CHUNK + k]; }
    workgroupBarrier();
    if (li < CHUNK) {
      var s = 0u;
      for (var t = 0u; t < WG; t++) { s += stage[li * WG + t]; }
      let bin = base + r * CHUNK + li;
      if (bin < P.bins) { partials[(P.part_base + chunk) * P.bins + bin] = s; }
    }
    workgroupBarrier();
  }
}
`;
}

/** Sums the per-workgroup partial histograms of "subhist", one invocation per bin (coalesced, no atomics). */
export const sumPartialsWgsl = /* wgsl */ `
${gridWgsl}
${SumParams.wgsl}
@group(0) @binding(0) var<storage, read> partials: array<u32>;
@group(0) @binding(1) var<storage, read_write> hist: array<u32>;
@group(0) @binding(2) var<uniform> S: SumParams;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let b = linear_group_id(wid, nwg) * 256u + li;
  if (b >= S.bins) { return; }
  var s = 0u;
  for (var c = 0u; c < S.chunks; c++) { s += partials[c * S.bins + b]; }
  hist[b] = s;
}
`;

import { defineUniforms } from '../../../core/gpu/uniforms.js';
import { bytesWgsl } from '../../../core/gpu/wgsl/bytes.js';
import { gridWgsl } from '../../../core/gpu/wgsl/grid.js';
import { islowWgsl } from '../islow.wgsl.js';

/**
 * One band of MCU rows: the image rows [y0, …) bound from a byte offset (`inDelta` bytes before row y0's first
 * byte); per component c (`cN`): (blocks per MCU row of the layout, first block's index in an MCU row of all
 * components, horizontal expansion, vertical expansion) — expansion 2 for a subsampled chroma component.
 */
export const JpegEncodeParams = defineUniforms('JpegEncodeParams', {
  width: 'u32', height: 'u32', channels: 'u32', perRow: 'u32', rows: 'u32', y0: 'u32', inDelta: 'u32', maxV: 'u32', r0: 'u32',
  c0: 'vec4u', c1: 'vec4u', c2: 'vec4u',
});

/**
 * The arithmetic of libjpeg's compressor up to the entropy coder, one 8×8 block per invocation, each integer step
 * as libjpeg-turbo 2.1 does it (its SIMD paths give the C code's results):
 * - jccolor.c rgb_ycc_convert: 16-bit fixed-point weights FIX(x) = round(x·65536), Y rounded by ONE_HALF, Cb/Cr
 *   offset by 128·65536 + ONE_HALF − 1; gray is taken as it is;
 * - jcsample.c: rows and columns past the image replicate its last one (expand_right_edge, and jcprepct's
 *   expand_bottom_edge — which for a vertically subsampled component replicates the last *downsampled* row);
 *   h2v1 averages (a + b + bias) >> 1 with bias 0,1,0,1…, h2v2 (a + b + c + d + bias) >> 2 with bias 1,2,1,2…;
 * - jcdctmgr.c convsamp (sample − 128) and jfdctint.c jpeg_fdct_islow (13-bit constants, PASS1_BITS 2, DESCALE
 *   rounding half up by arithmetic shift);
 * - jcdctmgr.c quantize: |x| plus the correction, times the reciprocal, shifted right (compute_reciprocal of
 *   quantval << 3, made on the host: Q holds (reciprocal, correction, shift) per table entry), sign restored.
 * Coefficients are written in natural (row-major) order, two int16 per u32, MCU row by MCU row and, within one,
 * component by component: the layout native/coef-encode.c copies into libjpeg's coefficient arrays.
 */
export const jpegEncodeWgsl = /* wgsl */ `
${gridWgsl}
override WG: u32 = 64u;
${JpegEncodeParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> Q: array<vec4u>;
@group(0) @binding(3) var<uniform> P: JpegEncodeParams;
${bytesWgsl('src')}

// Component c of the pixel at image row y (>= y0), column x: jccolor.c's fixed-point RGB->YCbCr, or the gray value.
fn sample(c: u32, y: u32, x: u32) -> i32 {
  let i = ((y - P.y0) * P.width + x) * P.channels + P.inDelta;
  if (P.channels == 1u) { return i32(byte_at(i)); }
  let r = i32(byte_at(i));
  let g = i32(byte_at(i + 1u));
  let b = i32(byte_at(i + 2u));
  if (c == 0u) { return (19595 * r + 38470 * g + 7471 * b + 32768) >> 16u; }
  if (c == 1u) { return (-11059 * r - 21709 * g + 32768 * b + 8421375) >> 16u; }
  return (32768 * r - 27439 * g - 5329 * b + 8421375) >> 16u;
}

// The downsampled sample (cy, cx) of component c, expanded hexp x vexp: jcsample.c with jcprepct.c's edge rules.
fn downsampled(c: u32, hexp: u32, vexp: u32, cy: u32, cx: u32) -> i32 {
  let cyLast = (P.height + vexp - 1u) / vexp - 1u;
  let cyIn = min(cy, cyLast);
  var s = 0;
  for (var dy = 0u; dy < vexp; dy++) {
    let y = min(vexp * cyIn + dy, P.height - 1u);
    for (var dx = 0u; dx < hexp; dx++) {
      s += sample(c, y, min(hexp * cx + dx, P.width - 1u));
    }
  }
  let n = hexp * vexp;
  if (n == 1u) { return s; }
  let odd = i32(cx & 1u);
  if (n == 2u) { return (s + odd) >> 1u; }
  return (s + 1 + odd) >> 2u;
}

${islowWgsl}

var<private> d: array<i32, 64>;

// jpeg_fdct_islow's butterfly over 8 values of d at (o, o + s, …, o + 7s); pass 0 (rows) keeps PASS1_BITS more bits,
// pass 1 (columns) removes them.
fn fdct8(o: u32, s: u32, cols: u32) {
  let tmp0 = d[o] + d[o + 7u * s];
  let tmp7 = d[o] - d[o + 7u * s];
  let tmp1 = d[o + s] + d[o + 6u * s];
  let tmp6 = d[o + s] - d[o + 6u * s];
  let tmp2 = d[o + 2u * s] + d[o + 5u * s];
  let tmp5 = d[o + 2u * s] - d[o + 5u * s];
  let tmp3 = d[o + 3u * s] + d[o + 4u * s];
  let tmp4 = d[o + 3u * s] - d[o + 4u * s];

  let tmp10 = tmp0 + tmp3;
  let tmp13 = tmp0 - tmp3;
  let tmp11 = tmp1 + tmp2;
  let tmp12 = tmp1 - tmp2;
  // CONST_BITS - PASS1_BITS for rows, CONST_BITS + PASS1_BITS for columns.
  let sh = select(CONST_BITS + PASS1_BITS, CONST_BITS - PASS1_BITS, cols == 0u);
  if (cols == 0u) {
    d[o] = (tmp10 + tmp11) << PASS1_BITS;
    d[o + 4u * s] = (tmp10 - tmp11) << PASS1_BITS;
  } else {
    d[o] = descale(tmp10 + tmp11, PASS1_BITS);
    d[o + 4u * s] = descale(tmp10 - tmp11, PASS1_BITS);
  }
  let z1 = (tmp12 + tmp13) * FIX_0_541196100;
  d[o + 2u * s] = descale(z1 + tmp13 * FIX_0_765366865, sh);
  d[o + 6u * s] = descale(z1 - tmp12 * FIX_1_847759065, sh);

  let z5 = (tmp4 + tmp6 + tmp5 + tmp7) * FIX_1_175875602;
  let t4 = tmp4 * FIX_0_298631336;
  let t5 = tmp5 * FIX_2_053119869;
  let t6 = tmp6 * FIX_3_072711026;
  let t7 = tmp7 * FIX_1_501321110;
  let y1 = -(tmp4 + tmp7) * FIX_0_899976223;
  let y2 = -(tmp5 + tmp6) * FIX_2_562915447;
  let y3 = -(tmp4 + tmp6) * FIX_1_961570560 + z5;
  let y4 = -(tmp5 + tmp7) * FIX_0_390180644 + z5;
  d[o + 7u * s] = descale(t4 + y1 + y3, sh);
  d[o + 5u * s] = descale(t5 + y2 + y4, sh);
  d[o + 3u * s] = descale(t6 + y2 + y3, sh);
  d[o + s] = descale(t7 + y1 + y4, sh);
}

// jcdctmgr.c quantize with compute_reciprocal's (reciprocal, correction, shift).
fn quantize(x: i32, e: vec4u) -> i32 {
  let q = i32(((u32(abs(x)) + e.y) * e.x) >> e.z);
  return select(q, -q, x < 0);
}

@compute @workgroup_size(WG)
fn jpeg_encode(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let gid = linear_group_id(wid, nwg) * WG + li;
  if (gid >= P.rows * P.perRow) { return; }
  let rr = gid / P.perRow;
  let k = gid % P.perRow;
  var c = 0u;
  var comp = P.c0;
  if (P.channels == 3u && k >= P.c2.y) { c = 2u; comp = P.c2; } else if (P.channels == 3u && k >= P.c1.y) { c = 1u; comp = P.c1; }
  let kk = k - comp.y;
  let v = P.maxV / comp.w;
  let by = (P.r0 + rr) * v + kk / comp.x;
  let bx = kk % comp.x;
  for (var i = 0u; i < 8u; i++) {
    for (var j = 0u; j < 8u; j++) {
      d[i * 8u + j] = downsampled(c, comp.z, comp.w, by * 8u + i, bx * 8u + j) - 128;
    }
  }
  for (var i = 0u; i < 8u; i++) { fdct8(i * 8u, 1u, 0u); }
  for (var j = 0u; j < 8u; j++) { fdct8(j, 8u, 1u); }
  let t = min(c, 1u) * 64u;
  let o = gid * 32u;
  for (var i = 0u; i < 32u; i++) {
    let a = quantize(d[2u * i], Q[t + 2u * i]);
    let b = quantize(d[2u * i + 1u], Q[t + 2u * i + 1u]);
    dst[o + i] = (u32(a) & 0xffffu) | (u32(b) << 16u);
  }
}
`;

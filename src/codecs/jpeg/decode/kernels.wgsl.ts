import { defineUniforms } from '../../../core/gpu/uniforms.js';
import { bytesWgsl } from '../../../core/gpu/wgsl/bytes.js';
import { gridWgsl } from '../../../core/gpu/wgsl/grid.js';
import { islowWgsl } from '../islow.wgsl.js';

/**
 * The GPU half of the JPEG decoder (jpeg-gpu-decode.ts), each step computed exactly as libjpeg-turbo 2.1 does it on
 * the CPU, so that the pixels are cv2.imread's bit for bit:
 * - idct_islow: dequantization and jidctint.c's jpeg_idct_islow (CONST_BITS 13, PASS1_BITS 2, DESCALE rounding,
 *   the post-IDCT range-limit table) — one invocation per 8×8 block, writing its samples 4 to a u32;
 * - jpeg_gray / jpeg_ycc: one invocation per 4 output pixels (1 or 3 u32 of the interleaved image): jdsample.c's upsampling
 *   ("fancy" h2v1/h2v2 triangle filters with their rounding biases, or the box filter where libjpeg uses it) and
 *   jdcolor.c's YCbCr→RGB fixed-point tables (SCALEBITS 16, ONE_HALF, clamped).
 * All integer: i32 arithmetic as libjpeg's JLONG for 8-bit data (exact: idct_islow checks that its inputs stay
 * where no result reaches 2^31, and where libjpeg-turbo's SIMD IDCT agrees with its C one, and flags a block that
 * does not: the caller then hands the file to libjpeg).
 */

export const IdctParams = defineUniforms('IdctParams', { blocksW: 'u32', blocks: 'u32', stride: 'u32' });

/**
 * expand_coefs: the compact coefficients of one component (native/coef-decode.c: per block 3 u32 — the index of its
 * first nonzero value, the 64-bit mask of its nonzero coefficients — and the int16 values, two to a word) written out
 * as the plain form idct_islow reads (32 u32 a block, int16 pairs, the even one low). One invocation per block.
 */
export const expandWgsl = /* wgsl */ `
${gridWgsl}
override WG: u32 = 64u;
${IdctParams.wgsl}
@group(0) @binding(0) var<storage, read> headers: array<u32>;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> coefs: array<u32>;
@group(0) @binding(3) var<uniform> P: IdctParams;

// Value i as its 16 bits.
fn value16(i: u32) -> u32 { return (values[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu; }

@compute @workgroup_size(WG)
fn expand_coefs(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let b = linear_group_id(wid, nwg) * WG + li;
  if (b >= P.blocks) { return; }
  let slot = (b / P.blocksW) * P.stride + b % P.blocksW;
  var next = headers[slot * 3u];
  let mask = vec2u(headers[slot * 3u + 1u], headers[slot * 3u + 2u]);
  for (var w = 0u; w < 32u; w++) {
    // Coefficients 2w and 2w + 1: bits (2w) & 31 and the next of mask word w / 16.
    let m = (mask[w >> 4u] >> ((w & 15u) * 2u)) & 3u;
    var lo = 0u;
    var hi = 0u;
    if ((m & 1u) != 0u) { lo = value16(next); next++; }
    if ((m & 2u) != 0u) { hi = value16(next); next++; }
    coefs[slot * 32u + w] = lo | (hi << 16u);
  }
}
`;

export const ColourParams = defineUniforms('ColourParams', {
  // The stored image's width and height, and the output's width (the stored height when the EXIF orientation
  // transposes), the orientation (1–8) applied as cv2.imread applies it.
  width: 'u32',
  height: 'u32',
  outWidth: 'u32',
  orientation: 'u32',
  channels: 'u32',
  y0: 'u32',
  bandBytes: 'u32',
  wordBase: 'u32',
  words: 'u32',
  // Per plane (component) p: gp = first sample row held, row stride in u32 words, samples per row and rows (libjpeg's
  // downsampled_width/height: the edge is replicated from the last real sample, not the block padding); up = its
  // upsampling: horizontal and vertical factors (max_h / h, max_v / v) and the method (UPSAMPLE_*).
  g0: 'vec4u',
  g1: 'vec4u',
  g2: 'vec4u',
  u0: 'vec4u',
  u1: 'vec4u',
  u2: 'vec4u',
});

/**
 * jdsample.c's upsampling methods, as jinit_upsampler picks them per component (libjpeg-turbo 2.1, fancy upsampling,
 * which cv2.imread leaves on; merged upsampling, jdmerge.c, runs only without it): replication (fullsize_upsample,
 * int_upsample for any integral factors, and h2v1/h2v2_upsample where a plane is 2 samples wide or less), and the
 * triangle filters h2v1_fancy_upsample, h1v2_fancy_upsample (since 2.0.3 with h2v1's alternating bias) and
 * h2v2_fancy_upsample.
 */
export const UPSAMPLE_REPLICATE = 0, UPSAMPLE_H2V1 = 1, UPSAMPLE_H1V2 = 2, UPSAMPLE_H2V2 = 3;

/** The method jinit_upsampler picks for a component upsampled hs × vs whose plane is `samplesW` samples wide. */
export function upsampleMethod(hs: number, vs: number, samplesW: number): number {
  if (hs === 1 && vs === 2) return UPSAMPLE_H1V2;
  if (hs !== 2 || vs > 2 || samplesW <= 2) return UPSAMPLE_REPLICATE;
  return vs === 1 ? UPSAMPLE_H2V1 : UPSAMPLE_H2V2;
}

export const idctWgsl = /* wgsl */ `
${gridWgsl}
${bytesWgsl()}
override WG: u32 = 64u;
${IdctParams.wgsl}
@group(0) @binding(0) var<storage, read> coefs: array<u32>;
@group(0) @binding(1) var<storage, read> quant: array<u32>;
@group(0) @binding(2) var<storage, read_write> plane: array<u32>;
@group(0) @binding(3) var<uniform> P: IdctParams;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;

${islowWgsl}
// libjpeg-turbo's x86 SIMD islow IDCT (what cv2.imread runs) dequantizes with 16-bit multiplies, sums pairs of
// inputs in 16 bits, saturates each pass's outputs to 16 bits and clamps its samples, where its C version (the
// arithmetic below) uses wide integers and a range-limit table that wraps: the two agree only while no value leaves
// those ranges. A block is exact here where every dequantized coefficient and every pass-1 output is within
// ±INPUT_LIMIT (so no 16-bit sum wraps, no pass saturates, and no 32-bit sum of either version overflows) and every
// sample before range-limiting is within [-512, 511] (where the table equals a clamp). A photo's blocks are far
// inside (its dequantized values are at most about 8 · 1024); a block outside sets the status word, and the file is
// decoded by libjpeg instead (jpeg-gpu-decode.ts): damaged or hostile data never gives other pixels.
const INPUT_LIMIT = 16383;
fn exact_input(v: i32) -> bool { return abs(v) <= INPUT_LIMIT; }
fn exact_sample(x: i32) -> bool { return x >= -512 && x <= 511; }

// The post-IDCT range-limit table (jdmaster.c prepare_range_limit_table) indexed by x & RANGE_MASK (1023): x + 128
// for x in [-128, 127], 255 above up to 511, 0 below down to -512, and wrapping beyond, as the table does.
fn range_limit(x: i32) -> u32 {
  let i = u32(x) & 1023u;
  if (i < 128u) { return i + 128u; }
  if (i < 512u) { return 255u; }
  if (i < 896u) { return 0u; }
  return i - 896u;
}

// One 1-D pass of jpeg_idct_islow on x[0..7] (already dequantized or pass-1 values): its eight outputs before
// DESCALE, in order 0..7 (tmp10 + tmp3, tmp11 + tmp2, …, tmp10 - tmp3).
fn idct8(x: array<i32, 8>) -> array<i32, 8> {
  // Even part.
  var z2 = x[2];
  var z3 = x[6];
  var z1 = (z2 + z3) * FIX_0_541196100;
  var tmp2 = z1 + z3 * -FIX_1_847759065;
  var tmp3 = z1 + z2 * FIX_0_765366865;
  var tmp0 = (x[0] + x[4]) << CONST_BITS;
  var tmp1 = (x[0] - x[4]) << CONST_BITS;
  let tmp10 = tmp0 + tmp3;
  let tmp13 = tmp0 - tmp3;
  let tmp11 = tmp1 + tmp2;
  let tmp12 = tmp1 - tmp2;
  // Odd part.
  tmp0 = x[7];
  tmp1 = x[5];
  tmp2 = x[3];
  tmp3 = x[1];
  var z4 = tmp1 + tmp3;
  z3 = tmp0 + tmp2;
  z2 = tmp1 + tmp2;
  z1 = tmp0 + tmp3;
  let z5 = (z3 + z4) * FIX_1_175875602;
  tmp3 = tmp3 * FIX_1_501321110;
  tmp2 = tmp2 * FIX_3_072711026;
  tmp1 = tmp1 * FIX_2_053119869;
  tmp0 = tmp0 * FIX_0_298631336;
  z4 = z4 * -FIX_0_390180644 + z5;
  z3 = z3 * -FIX_1_961570560 + z5;
  z1 = z1 * -FIX_0_899976223;
  z2 = z2 * -FIX_2_562915447;
  tmp3 += z1 + z4;
  tmp2 += z2 + z3;
  tmp1 += z2 + z4;
  tmp0 += z1 + z3;
  return array<i32, 8>(tmp10 + tmp3, tmp11 + tmp2, tmp12 + tmp1, tmp13 + tmp0, tmp13 - tmp0, tmp12 - tmp1, tmp11 - tmp2, tmp10 - tmp3);
}

// Coefficient k (natural order) of the block at word \`base\`, dequantized: int16 pairs, the even one low.
fn dequant(base: u32, k: u32) -> i32 {
  let w = coefs[base + (k >> 1u)];
  let c = select(i32(w << 16u) >> 16u, i32(w) >> 16u, (k & 1u) == 1u);
  return c * i32(quant[k]);
}

@compute @workgroup_size(WG)
fn idct_islow(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let b = linear_group_id(wid, nwg) * WG + li;
  if (b >= P.blocks) { return; }
  let bx = b % P.blocksW;
  let by = b / P.blocksW;
  let base = (by * P.stride + bx) * 32u;
  // Pass 1: columns, scaled up by 2^PASS1_BITS. (libjpeg's shortcut for all-zero AC columns and rows gives the
  // same values as the full computation, so it is not repeated here.)
  var ws: array<i32, 64>;
  var exact = true;
  for (var c = 0u; c < 8u; c++) {
    var col: array<i32, 8>;
    for (var r = 0u; r < 8u; r++) {
      col[r] = dequant(base, r * 8u + c);
      exact = exact && exact_input(col[r]);
    }
    let o = idct8(col);
    for (var r = 0u; r < 8u; r++) {
      ws[r * 8u + c] = descale(o[r], CONST_BITS - PASS1_BITS);
      exact = exact && exact_input(ws[r * 8u + c]);
    }
  }
  // Pass 2: rows, descaled by 8 and 2^PASS1_BITS, range-limited, packed 4 samples to a word.
  let stride = P.stride * 2u;
  for (var r = 0u; r < 8u; r++) {
    var row: array<i32, 8>;
    for (var c = 0u; c < 8u; c++) { row[c] = ws[r * 8u + c]; }
    let o = idct8(row);
    var s: array<u32, 8>;
    for (var c = 0u; c < 8u; c++) {
      let x = descale(o[c], CONST_BITS + PASS1_BITS + 3u);
      exact = exact && exact_sample(x);
      s[c] = range_limit(x);
    }
    let at = (by * 8u + r) * stride + bx * 2u;
    plane[at] = pack4(s[0], s[1], s[2], s[3]);
    plane[at + 1u] = pack4(s[4], s[5], s[6], s[7]);
  }
  if (!exact) { atomicOr(&status[0], 1u); }
}
`;

/**
 * Plane p's sample for output pixel (y, x), upsampled as jdsample.c (UPSAMPLE_*): replication; h2v1's
 * (3·near + far + 1 or 2) >> 2 across, h1v2's the same down; h2v2's (3·colsum + neighbour colsum + 8 or 7) >> 4,
 * colsum = 3·nearer row + farther row. Edges replicate the last real sample, which is what libjpeg's special cases
 * for the first and last columns and its duplicated context rows amount to. (WGSL passes no storage pointers to
 * functions: one function per plane.)
 */
function upsampleWgsl(p: number): string {
  return /* wgsl */ `
fn sample${p}(y: u32, x: u32) -> i32 { return i32(byte_of(plane${p}[(y - P.g${p}.x) * P.g${p}.y + (x >> 2u)], x)); }

fn colsum${p}(j: u32, j2: u32, i: u32) -> i32 { return 3 * sample${p}(j, i) + sample${p}(j2, i); }

fn upsampled${p}(y: u32, x: u32) -> i32 {
  let sw = P.g${p}.z;
  let sh = P.g${p}.w;
  let up = P.u${p};
  // The neighbour across (left for an even pixel, right for an odd one) and down (above, below), edges replicated.
  let i = x >> 1u;
  let across = select(min(i + 1u, sw - 1u), max(i, 1u) - 1u, (x & 1u) == 0u);
  let j = y >> 1u;
  let down = select(min(j + 1u, sh - 1u), max(j, 1u) - 1u, (y & 1u) == 0u);
  switch (up.z) {
    case ${UPSAMPLE_H2V1}u: { return (3 * sample${p}(y, i) + sample${p}(y, across) + 1 + i32(x & 1u)) >> 2u; }
    case ${UPSAMPLE_H1V2}u: { return (3 * sample${p}(j, x) + sample${p}(down, x) + 1 + i32(y & 1u)) >> 2u; }
    case ${UPSAMPLE_H2V2}u: { return (3 * colsum${p}(j, down, i) + colsum${p}(j, down, across) + 8 - i32(x & 1u)) >> 4u; }
    default: { return sample${p}(y / up.y, x / up.x); }
  }
}
`;
}

export const colourWgsl = /* wgsl */ `
${gridWgsl}
${bytesWgsl()}
override WG: u32 = 256u;
${ColourParams.wgsl}
@group(0) @binding(0) var<storage, read> plane0: array<u32>;
@group(0) @binding(1) var<storage, read> plane1: array<u32>;
@group(0) @binding(2) var<storage, read> plane2: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<uniform> P: ColourParams;

${upsampleWgsl(0)}
${upsampleWgsl(1)}
${upsampleWgsl(2)}
// Output pixel (y, x) in RGB: jdcolor.c's ycc_rgb_convert, its tables' entries computed (FIX(1.40200) = 91881,
// FIX(1.77200) = 116130, FIX(0.71414) = 46802, FIX(0.34414) = 22554, ONE_HALF = 32768), then range_limit (a clamp
// to 0..255).
fn ycc_rgb(y: u32, x: u32) -> vec3u {
  let Y = upsampled0(y, x);
  let cb = upsampled1(y, x) - 128;
  let cr = upsampled2(y, x) - 128;
  let r = Y + ((91881 * cr + 32768) >> 16u);
  let g = Y + ((-22554 * cb + 32768 - 46802 * cr) >> 16u);
  let b = Y + ((116130 * cb + 32768) >> 16u);
  return vec3u(clamp(vec3i(r, g, b), vec3i(0), vec3i(255)));
}

// The stored pixel (row, column) shown at output pixel (oy, ox) under EXIF orientation P.orientation (io/jpeg.ts orient).
fn stored(oy: u32, ox: u32) -> vec2u {
  let W = P.width - 1u;
  let H = P.height - 1u;
  switch (P.orientation) {
    case 2u: { return vec2u(oy, W - ox); }
    case 3u: { return vec2u(H - oy, W - ox); }
    case 4u: { return vec2u(H - oy, ox); }
    case 5u: { return vec2u(ox, oy); }
    case 6u: { return vec2u(H - ox, oy); }
    case 7u: { return vec2u(H - ox, W - oy); }
    case 8u: { return vec2u(ox, W - oy); }
    default: { return vec2u(oy, ox); }
  }
}

// The band's output pixel p (row-major from the band's first row) is the stored pixel stored(…).
fn band_pixel(p: u32) -> vec2u { return stored(P.y0 + p / P.outWidth, p % P.outWidth); }

// Invocation i: the band's pixels 4i..4i+3, whole (their 12 bytes are 3 words), so each pixel's chroma is upsampled
// once; pixels past the band's end are 0 and words past it are not written.
@compute @workgroup_size(WG)
fn jpeg_ycc(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  let pixels = P.bandBytes / 3u;
  if (i * 4u >= pixels) { return; }
  var c: array<vec3u, 4>;
  for (var k = 0u; k < 4u; k++) {
    if (i * 4u + k < pixels) {
      let at = band_pixel(i * 4u + k);
      c[k] = ycc_rgb(at.x, at.y);
    }
  }
  let w = array<u32, 3>(pack4(c[0].x, c[0].y, c[0].z, c[1].x), pack4(c[1].y, c[1].z, c[2].x, c[2].y), pack4(c[2].z, c[3].x, c[3].y, c[3].z));
  for (var k = 0u; k < 3u; k++) {
    if (i * 3u + k < P.words) { dst[P.wordBase + i * 3u + k] = w[k]; }
  }
}

// Invocation i: the band's gray pixels 4i..4i+3, one word.
@compute @workgroup_size(WG)
fn jpeg_gray(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  if (i >= P.words) { return; }
  var v = array<u32, 4>(0u, 0u, 0u, 0u);
  for (var k = 0u; k < 4u; k++) {
    if (i * 4u + k < P.bandBytes) {
      let at = band_pixel(i * 4u + k);
      v[k] = u32(upsampled0(at.x, at.y));
    }
  }
  dst[P.wordBase + i] = pack4(v[0], v[1], v[2], v[3]);
}
`;

import { YCRCB } from '../../colour.js';
import { defineUniforms } from '../uniforms.js';
import { grayWgsl } from './gray.js';
import { gridWgsl } from './grid.js';

/**
 * OpenCV's integer colour conversions of resident 8- and 16-bit images (cv2.cvtColor), the WGSL twins of
 * core/image.ts toGray and core/colour.ts (same weights, same rounding: integer arithmetic, so the bytes are the
 * CPU's on any adapter):
 * - `to_gray`: RGB(A) → COLOR_RGB2GRAY (15-bit weights, gray.ts);
 * - `to_luma`: RGB(A) → the Y of COLOR_RGB2YCrCb (14-bit weights);
 * - `from_luma`: a processed Y with the chroma of the original RGB(A) → COLOR_YCrCb2RGB, alpha copied. Cr and Cb are
 *   recomputed from the original (still resident) instead of being kept in a buffer of their own: they are a
 *   function of its pixels, and the conversion back reads them where it reads the alpha anyway;
 * - `to_channel`: channel `k` of an RGB(A) image as a plane, `set_channel`: a plane written as channel `k` of the
 *   colour image `dst` (the other channels from `src` on the first pass, `first`, else kept): the 'planes' colour rule
 *   (filters and morphology per channel, as OpenCV works on a 3-channel image) without leaving the device;
 * - `replicate`: a plane as every channel of a c-channel image (a gray photo as cv2.imread(IMREAD_COLOR) gives it).
 * Samples lie packed in u32 words (8-bit: four a word, 16-bit: two); an invocation makes one output word of a plane
 * (PER pixels) or one group of PER colour pixels (C words). `n` pixels of `c` channels; words beyond the output's are
 * never written (a buffer holds whole 16-byte vectors, no more).
 */
export const ColourParams = defineUniforms('ColourParams', { n: 'u32', c: 'u32', words: 'u32', k: 'u32', first: 'u32' });

export function colourWgsl(dtype: 'uint8' | 'uint16'): string {
  const bits = dtype === 'uint8' ? 8 : 16;
  const per = 32 / bits, max = (1 << bits) - 1, half = 1 << (bits - 1);
  const { shift, r2y, g2y, b2y, y2cr, y2cb, cr2r, cr2g, cb2g, cb2b } = YCRCB;
  const round = 1 << (shift - 1);
  return /* wgsl */ `
${gridWgsl}
${grayWgsl}
override WG: u32 = 256u;
const PER: u32 = ${per}u;
const BITS: u32 = ${bits}u;
const MASK: u32 = ${max}u;
${ColourParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> luma: array<u32>;
@group(0) @binding(3) var<uniform> P: ColourParams;

fn sample(i: u32) -> u32 { return (src[i / PER] >> ((i % PER) * BITS)) & MASK; }
fn luma_at(i: u32) -> u32 { return (luma[i / PER] >> ((i % PER) * BITS)) & MASK; }
fn descale(x: i32) -> i32 { return (x + ${round}) >> ${shift}u; }
fn clamp_sample(x: i32) -> u32 { return u32(clamp(x, 0, ${max})); }
fn y_of(r: u32, g: u32, b: u32) -> u32 { return (r * ${r2y}u + g * ${g2y}u + b * ${b2y}u + ${round}u) >> ${shift}u; }

/** Y, Cr, Cb of pixel p (OpenCV's RGB2YCrCb_i). */
fn ycrcb(p: u32) -> vec3i {
  let s = p * P.c;
  let r = i32(sample(s));
  let b = i32(sample(s + 2u));
  let y = i32(y_of(u32(r), sample(s + 1u), u32(b)));
  let cr = i32(clamp_sample(descale((r - y) * ${y2cr} + ${half << shift})));
  let cb = i32(clamp_sample(descale((b - y) * ${y2cb} + ${half << shift})));
  return vec3i(y, cr, cb);
}

/** One word of channel P.k's plane: its PER pixels' samples of that channel. */
fn channel_word(w: u32) -> u32 {
  var packed = 0u;
  for (var q = 0u; q < PER; q++) {
    let p = w * PER + q;
    if (p < P.n) { packed |= sample(p * P.c + P.k) << (q * BITS); }
  }
  return packed;
}

@compute @workgroup_size(WG)
fn to_channel(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var w = linear_group_id(wid, nwg) * WG + li; w < P.words; w += stride) { dst[w] = channel_word(w); }
}

/** One word of the colour image: its samples of channel P.k from the plane, the others from src (first) or kept. */
@compute @workgroup_size(WG)
fn set_channel(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var w = linear_group_id(wid, nwg) * WG + li; w < P.words; w += stride) {
    let old = select(dst[w], src[w], P.first == 1u);
    var packed = 0u;
    for (var q = 0u; q < PER; q++) {
      let s = w * PER + q;
      let v = select((old >> (q * BITS)) & MASK, luma_at(s / P.c), s % P.c == P.k && s < P.n * P.c);
      packed |= v << (q * BITS);
    }
    dst[w] = packed;
  }
}

/** One word of the c-channel image whose every channel is the plane \`luma\`. */
@compute @workgroup_size(WG)
fn replicate(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var w = linear_group_id(wid, nwg) * WG + li; w < P.words; w += stride) {
    var packed = 0u;
    for (var q = 0u; q < PER; q++) {
      let s = w * PER + q;
      if (s < P.n * P.c) { packed |= luma_at(s / P.c) << (q * BITS); }
    }
    dst[w] = packed;
  }
}

/** One word of a plane: PER pixels weighed by \`gray\` (true: RGB2GRAY, false: YCrCb's Y). */
fn plane_word(w: u32, gray: bool) -> u32 {
  var packed = 0u;
  for (var k = 0u; k < PER; k++) {
    let p = w * PER + k;
    if (p < P.n) {
      let s = p * P.c;
      let r = sample(s);
      let g = sample(s + 1u);
      let b = sample(s + 2u);
      let v = select(y_of(r, g, b), gray_of(r, g, b), gray);
      packed |= v << (k * BITS);
    }
  }
  return packed;
}

@compute @workgroup_size(WG)
fn to_gray(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var w = linear_group_id(wid, nwg) * WG + li; w < P.words; w += stride) { dst[w] = plane_word(w, true); }
}

@compute @workgroup_size(WG)
fn to_luma(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  for (var w = linear_group_id(wid, nwg) * WG + li; w < P.words; w += stride) { dst[w] = plane_word(w, false); }
}

/** Samples of the PER pixels of group g back in colour (OpenCV's YCrCb2RGB_i on the new Y), then its C words. */
fn from_luma_group(g: u32) {
  var v: array<u32, 16>;
  for (var k = 0u; k < PER; k++) {
    let p = g * PER + k;
    if (p < P.n) {
      let o = ycrcb(p);
      let y = i32(luma_at(p));
      let dr = o.y - ${half};
      let db = o.z - ${half};
      v[k * P.c] = clamp_sample(y + descale(dr * ${cr2r}));
      v[k * P.c + 1u] = clamp_sample(y + descale(db * ${cb2g} + dr * ${cr2g}));
      v[k * P.c + 2u] = clamp_sample(y + descale(db * ${cb2b}));
      if (P.c == 4u) { v[k * P.c + 3u] = sample(p * P.c + 3u); }
    }
  }
  for (var j = 0u; j < P.c; j++) {
    let w = g * P.c + j;
    if (w < P.words) {
      var packed = 0u;
      for (var q = 0u; q < PER; q++) { packed |= v[j * PER + q] << (q * BITS); }
      dst[w] = packed;
    }
  }
}

@compute @workgroup_size(WG)
fn from_luma(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let stride = linear_group_count(nwg) * WG;
  let groups = (P.n + PER - 1u) / PER;
  for (var g = linear_group_id(wid, nwg) * WG + li; g < groups; g += stride) { from_luma_group(g); }
}
`;
}

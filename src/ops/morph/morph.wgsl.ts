import { reflectWgsl } from '../../core/gpu/wgsl/border.js';
import { f32ToBits } from '../../core/gpu/recording.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { identity } from './plan.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';
import { alignedPackWgsl, PackParams } from '../../core/gpu/wgsl/aligned.js';

export { PackParams };

export const DirectParams = defineUniforms('Params', { width: 'u32', height: 'u32', depth: 'u32', rw: 'u32', count: 'u32', reflect: 'u32', fill: 'u32', words: 'u32' });
export const SubtractParams = defineUniforms('Params', { words: 'u32' });

/**
 * Morphology kernels, generated per element type and window. Data is in an *aligned* layout: rows padded to
 * whole u32 words (stride S elements; 4 u8, 2 u16 or 1 f32 per word), so that a word never holds pixels of two
 * rows and every kernel can own whole output words (no two invocations write one word). The `pack` kernels
 * move between the image's own layout and the aligned one when the width is not a multiple of the word.
 *
 * - vhgw_lines: van Herk/Gil-Werman along y (or z), one invocation per (word column, segment of SEG outputs):
 *   consecutive invocations own consecutive words, so every load and store is coalesced, and the four (two)
 *   pixels of a word are processed as lanes. Per block of K padded rows: suffix min backwards into a private
 *   array, then prefix min forwards combined with it — three comparisons per pixel whatever K.
 * - vhgw_rows: the same along x, one invocation per (row, segment of SEG pixels), pixels as scalars.
 * - direct: any element, one invocation per output word, min/max over the element's offsets (buffer).
 * - subtract: a − b, saturating at 0 for integers (gradient, top-hat, black-hat).
 */

export type MorphDtype = 'uint8' | 'uint16' | 'float32';

export interface LaneType {
  /** Elements per u32 word. */
  epw: number;
  bits: number;
  /** WGSL literal of one element's bit mask. */
  mask: string;
}

/** A pixel value as the u32 the kernels hold it in (float32: its bits). */
const elementBits = (dtype: MorphDtype, v: number): number => (dtype === 'float32' ? f32ToBits(v) : v);

export function lanes(dtype: MorphDtype): LaneType {
  return dtype === 'uint8' ? { epw: 4, bits: 8, mask: '0xffu' } : dtype === 'uint16' ? { epw: 2, bits: 16, mask: '0xffffu' } : { epw: 1, bits: 32, mask: '0xffffffffu' };
}

/**
 * WGSL for combining two words lane by lane (min or max), and for one scalar element. `swar` (u8): the four
 * bytes compared in place with integer arithmetic (SIMD within a register: a per-byte borrow-free subtraction
 * gives each byte's a < b in its top bit, widened to a byte mask that selects a or b) instead of unpacked to
 * four lanes and packed again.
 */
export function laneOps(dtype: MorphDtype, isMin: boolean, swar = false): string {
  const f = isMin ? 'min' : 'max';
  if (dtype === 'float32') {
    return `
fn op1(a: u32, b: u32) -> u32 { return bitcast<u32>(${f}(bitcast<f32>(a), bitcast<f32>(b))); }
fn opw(a: u32, b: u32) -> u32 { return op1(a, b); }`;
  }
  if (dtype === 'uint16') {
    return `
fn op1(a: u32, b: u32) -> u32 { return ${f}(a, b); }
fn opw(a: u32, b: u32) -> u32 {
  return ${f}(a & 0xffffu, b & 0xffffu) | (${f}(a >> 16u, b >> 16u) << 16u);
}`;
  }
  if (swar) {
    return `
fn op1(a: u32, b: u32) -> u32 { return ${f}(a, b); }
fn opw(a: u32, b: u32) -> u32 {
  let d = (a | 0x80808080u) - (b & 0x7f7f7f7fu); // top bit of each byte: low 7 bits of a ≥ those of b
  let lt = ((~a & b) | (~(a ^ b) & ~d)) & 0x80808080u; // top bit of each byte: a < b
  let m = (lt - (lt >> 7u)) | lt; // 0xff where a < b
  return ${isMin ? '(a & m) | (b & ~m)' : '(b & m) | (a & ~m)'};
}`;
  }
  return `
fn op1(a: u32, b: u32) -> u32 { return ${f}(a, b); }
fn opw(a: u32, b: u32) -> u32 {
  let m = ${f}(vec4u(a, a >> 8u, a >> 16u, a >> 24u) & vec4u(0xffu), vec4u(b, b >> 8u, b >> 16u, b >> 24u) & vec4u(0xffu));
  return m.x | (m.y << 8u) | (m.z << 16u) | (m.w << 24u);
}`;
}



export interface LineKernel {
  dtype: MorphDtype;
  isMin: boolean;
  /** Window length along the axis. */
  k: number;
  /** Outputs per invocation. */
  seg: number;
  /** u8: packed-byte min/max (laneOps). */
  swar?: boolean;
}

/** The line kernels' parameters (fill: the neutral value's bits, per lane or per word). */
export const LineParams = defineUniforms('Params', {
  n: 'u32', inner: 'u32', outer: 'u32', a: 'i32', reflect: 'u32', fill: 'u32', segs: 'u32', lines: 'u32', width: 'u32',
});

/** What the line kernels declare: helpers, parameters, window constants, bindings and the min/max ops. */
/** `word`: the storage arrays' element (vec4u: the y kernel's strips of four words, one load or store each). */
export function lineHeader(kn: LineKernel, word = 'u32'): string {
  const { epw, bits, mask } = lanes(kn.dtype);
  return /* wgsl */ `
${gridWgsl}
${reflectWgsl}
${LineParams.wgsl}
const K: u32 = ${kn.k}u;
const SEG: u32 = ${kn.seg}u;
// Suffix entries kept: a segment's outputs read hb[r] only for r < min(K, SEG) (see blockSuffix).
const HB: u32 = ${Math.min(kn.k, kn.seg)}u;
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
const MASK: u32 = ${mask};
@group(0) @binding(0) var<storage, read> src: array<${word}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${word}>;
@group(0) @binding(2) var<uniform> P: Params;
${laneOps(kn.dtype, kn.isMin, kn.swar)}`;
}

/**
 * The suffix min of block [bk, bk + K) of the padded segment into the private array hb (both line kernels). A
 * segment's outputs read only its first min(K, SEG) entries, so a window longer than the segment keeps just those:
 * a private array of K entries failed to compile beyond 65535 (rect:100000x100000) and spilled long before.
 */
function blockSuffix(kn: LineKernel, op: string, line: string): string {
  if (kn.k <= kn.seg) {
    return `var acc = load(${line}, s0, bk + K - 1u);
    hb[K - 1u] = acc;
    for (var r = i32(K) - 2i; r >= 0i; r--) {
      acc = ${op}(load(${line}, s0, bk + u32(r)), acc);
      hb[r] = acc;
    }`;
  }
  return `var acc = load(${line}, s0, bk + K - 1u);
    for (var r = i32(K) - 2i; r >= 0i; r--) {
      acc = ${op}(load(${line}, s0, bk + u32(r)), acc);
      if (r < i32(HB)) { hb[r] = acc; }
    }`;
}

/** vHGW along a strided axis: element (o, p, c) of the word grid lives at o·n·inner + p·inner + c. */
export function vhgwLinesWgsl(kn: LineKernel): string {
  return /* wgsl */ `
${lineHeader(kn)}

@compute @workgroup_size(64)
fn vhgw_lines(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let id = linear_group_id(wid, nwg) * 64u + li;
  // Word columns fastest: neighbouring invocations touch neighbouring words.
  let c = id % P.inner;
  let rest = id / P.inner;
  let o = rest % P.outer;
  let s = rest / P.outer;
  if (s >= P.segs) { return; }
  let base = o * P.n * P.inner + c;
  let s0 = s * SEG;
  let tn = min(SEG, P.n - s0);
  var hb: array<u32, HB>;
  for (var bk = 0u; bk < tn; bk += K) {
${blockSuffix(kn, 'opw', 'base')}
    dst[base + (s0 + bk) * P.inner] = hb[0];
    var g = 0u;
    for (var r = 1u; r < K && bk + r < tn; r++) {
      let v = load(base, s0, bk + K + r - 1u);
      g = select(opw(g, v), v, r == 1u);
      dst[base + (s0 + bk + r) * P.inner] = opw(hb[r], g);
    }
  }
}

// Padded position q of the segment starting at s0: input position s0 + q − a along the axis.
fn load(base: u32, s0: u32, q: u32) -> u32 {
  let p = i32(s0 + q) - P.a;
  if (p >= 0i && p < i32(P.n)) { return src[base + u32(p) * P.inner]; }
  if (P.reflect == 0u) { return P.fill; }
  return src[base + reflect(p, P.n) * P.inner];
}
`;
}

/** vHGW along x in the aligned layout: one invocation per (row, SEG pixels); SEG is a multiple of the word. */
export function vhgwRowsWgsl(kn: LineKernel): string {
  const { epw } = lanes(kn.dtype);
  return /* wgsl */ `
${lineHeader(kn)}

// Element x of the row starting at word rw (x < width). The last word read is kept: a row is walked pixel by
// pixel, so each word is loaded once per walk instead of once per pixel (4× fewer loads for u8, and the
// invocations of a warp cross word boundaries together because their segments start on words).
var<private> cached_at: u32 = 0xffffffffu;
var<private> cached: u32;
fn px(rw: u32, x: u32) -> u32 {
  let wi = rw + x / EPW;
  if (wi != cached_at) {
    cached_at = wi;
    cached = src[wi];
  }
  return ${epw === 1 ? 'cached' : '(cached >> ((x % EPW) * BITS)) & MASK'};
}

fn load(rw: u32, s0: u32, q: u32) -> u32 {
  let p = i32(s0 + q) - P.a;
  if (p >= 0i && p < i32(P.width)) { return px(rw, u32(p)); }
  if (P.reflect == 0u) { return P.fill; }
  return px(rw, reflect(p, P.width));
}

@compute @workgroup_size(64)
fn vhgw_rows(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let id = linear_group_id(wid, nwg) * 64u + li;
  let s = id % P.segs;
  let row = id / P.segs;
  if (row >= P.lines) { return; }
  let rw = row * P.inner;
  let s0 = s * SEG;
  let tn = min(SEG, P.width - s0);
  var hb: array<u32, HB>;
  var word = 0u;
  for (var bk = 0u; bk < tn; bk += K) {
${blockSuffix(kn, 'op1', 'rw')}
    var g = 0u;
    for (var r = 0u; r < K && bk + r < tn; r++) {
      var out = hb[0];
      if (r > 0u) {
        let v = load(rw, s0, bk + K + r - 1u);
        g = select(op1(g, v), v, r == 1u);
        out = op1(hb[r], g);
      }
      let t = bk + r;
      ${epw === 1 ? 'dst[rw + s0 + t] = out;' : `word |= out << ((t % EPW) * BITS);
      if (t % EPW == EPW - 1u || t + 1u == tn) {
        dst[rw + (s0 + t) / EPW] = word;
        word = 0u;
      }`}
    }
  }
}
`;
}

/** Direct morphology with an arbitrary element: one invocation per output word of the aligned layout. */
export function directWgsl(dtype: MorphDtype, isMin: boolean): string {
  const { epw, bits, mask } = lanes(dtype);
  const start = elementBits(dtype, identity(isMin ? 'erode' : 'dilate', dtype));
  return /* wgsl */ `
${gridWgsl}
${reflectWgsl}
${DirectParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<i32>;
@group(0) @binding(3) var<uniform> P: Params;
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
${laneOps(dtype, isMin)}

fn px(z: u32, y: u32, x: u32) -> u32 {
  let row = (z * P.height + y) * P.rw;
  return ${epw === 1 ? 'src[row + x]' : `(src[row + x / EPW] >> ((x % EPW) * BITS)) & ${mask}`};
}

@compute @workgroup_size(64)
fn direct(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * 64u + li;
  if (w >= P.words) { return; }
  let row = w / P.rw;
  let z = row / P.height;
  let y = row - z * P.height;
  let x0 = (w - row * P.rw) * EPW;
  var out = 0u;
  for (var l = 0u; l < EPW; l++) {
    let x = x0 + l;
    if (x >= P.width) { break; }
    var acc = ${start}u; // the identity of the operation (±inf for float32); the constant border is P.fill
    for (var e = 0u; e < P.count; e++) {
      var zz = i32(z) + offsets[3u * e];
      var yy = i32(y) + offsets[3u * e + 1u];
      var xx = i32(x) + offsets[3u * e + 2u];
      if (zz < 0i || zz >= i32(P.depth) || yy < 0i || yy >= i32(P.height) || xx < 0i || xx >= i32(P.width)) {
        if (P.reflect == 0u) {
          acc = op1(acc, P.fill);
          continue;
        }
        zz = i32(reflect(zz, P.depth));
        yy = i32(reflect(yy, P.height));
        xx = i32(reflect(xx, P.width));
      }
      acc = op1(acc, px(u32(zz), u32(yy), u32(xx)));
    }
    out |= ${epw === 1 ? 'acc' : 'acc << (l * BITS)'};
  }
  dst[w] = out;
}
`;
}

/** Lane-wise a − b, saturating at 0 for integers. */
export function subtractWgsl(dtype: MorphDtype): string {
  const body = dtype === 'float32'
    ? 'return bitcast<u32>(bitcast<f32>(a) - bitcast<f32>(b));'
    : dtype === 'uint16'
      ? 'return (max(a & 0xffffu, b & 0xffffu) - (b & 0xffffu)) | ((max(a >> 16u, b >> 16u) - (b >> 16u)) << 16u);'
      : `let x = vec4u(a, a >> 8u, a >> 16u, a >> 24u) & vec4u(0xffu);
  let y = vec4u(b, b >> 8u, b >> 16u, b >> 24u) & vec4u(0xffu);
  let d = max(x, y) - y;
  return d.x | (d.y << 8u) | (d.z << 16u) | (d.w << 24u);`;
  return /* wgsl */ `
${gridWgsl}
${SubtractParams.wgsl}
@group(0) @binding(0) var<storage, read> a_in: array<u32>;
@group(0) @binding(1) var<storage, read> b_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
fn sub(a: u32, b: u32) -> u32 {
  ${body}
}
@compute @workgroup_size(256)
fn subtract(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w < P.words) { dst[w] = sub(a_in[w], b_in[w]); }
}
`;
}

/** The layout kernels (core/gpu/wgsl/aligned.ts) for one element type. */
export const packWgsl = (dtype: MorphDtype): string => alignedPackWgsl(lanes(dtype));

/**
 * Short windows along x without vHGW: one invocation per output word, min/max over the K words of its window,
 * funnel-shifted out of the row (all lanes at once) with coalesced loads (neighbouring invocations, neighbouring
 * words); words whose window reaches past the row take each pixel with the border rule. K − 1 comparisons per
 * word against vHGW's three per pixel, but no per-invocation walk along the row: on the H100 (clock held) the
 * x pass of a 3×3 erosion at 8K went from about 0.12 to 0.05 ms (bench/results/h100-morph-search-direct-held.jsonl).
 * Params as vhgw_rows (n = width, inner = words per row, lines = rows, fill = a pixel's neutral value).
 */
export function directRowsWgsl(kn: Omit<LineKernel, 'seg'>): string {
  const { epw } = lanes(kn.dtype);
  return /* wgsl */ `
${lineHeader({ ...kn, seg: 1 })}
// Element p of the row starting at word rb, the border applied.
fn pix(rb: u32, p: i32) -> u32 {
  var q = p;
  if (p < 0i || p >= i32(P.n)) {
    if (P.reflect == 0u) { return P.fill; }
    q = i32(reflect(p, P.n));
  }
  return (src[rb + u32(q) / EPW] >> ((u32(q) % EPW) * BITS)) & MASK;
}

// The EPW elements from element p of the row at word rb (p + EPW − 1 inside the row).
fn span(rb: u32, p: u32) -> u32 {
  let w = rb + p / EPW;
  let sh = (p % EPW) * BITS;
  if (sh == 0u) { return src[w]; }
  return (src[w] >> sh) | (src[w + 1u] << (32u - sh));
}

@compute @workgroup_size(256)
fn direct_rows(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w >= P.lines * P.inner) { return; }
  let rb = (w / P.inner) * P.inner;
  let x0 = (w - rb) * EPW;
  let s = i32(x0) - P.a;
  if (s >= 0i && s + i32(K + EPW) - 1i <= i32(P.n)) {
    var acc = span(rb, u32(s));
    for (var d = 1u; d < K; d++) { acc = opw(acc, span(rb, u32(s) + d)); }
    dst[w] = acc;
    return;
  }
  var out = 0u;
  for (var l = 0u; l < EPW; l++) {
    if (x0 + l >= P.n) { break; }
    var acc = pix(rb, s + i32(l));
    for (var d = 1u; d < K; d++) { acc = op1(acc, pix(rb, s + i32(l + d))); }
    out |= ${epw === 1 ? 'acc' : 'acc << (l * BITS)'};
  }
  dst[w] = out;
}
`;
}

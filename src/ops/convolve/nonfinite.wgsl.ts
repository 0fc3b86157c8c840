import type { BorderMode } from '../../core/border.js';
import { borderMapWgsl } from '../../core/gpu/wgsl/border.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { CountParams, Geo } from './conv.wgsl.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** One line pass of the running rule: the axis geometry, or this slab's piece of it. */
export const LineParams = defineUniforms('Line', {
  nIn: 'i32', nOut: 'i32', off: 'i32', lo: 'i32', hi: 'i32', k: 'i32', inner: 'u32', lines: 'u32', start: 'i32', total: 'i32', save: 'i32', load: 'u32', end: 'i32',
});

/**
 * The GPU side of nonfinite.ts: scipy's spreading of NaN and ±inf, patched into a filter's float32 result.
 * Everything tests bits, not floats (a NaN compares false, and a compiler that assumes no NaNs may fold the
 * tests away): exponent all ones = non-finite, with a non-zero mantissa = NaN. Classes are f32 values: 0 for
 * finite, else the NaN or infinity itself. Every kernel but `scan` returns at once unless `scan` found a
 * non-finite input (flag[0] ≠ 0), and walks its work in a grid-stride loop over a few workgroups: a finite
 * image pays the scan (one read of the input) and a few empty dispatches.
 */
const COMMON = /* wgsl */ `
${gridWgsl}
const NAN_BITS: u32 = 0x7fc00000u;
const POS_INF: u32 = 0x7f800000u;
const NEG_INF: u32 = 0xff800000u;
fn non_finite(b: u32) -> bool { return (b & 0x7f800000u) == 0x7f800000u; }
fn is_nan(b: u32) -> bool { return non_finite(b) && (b & 0x7fffffu) != 0u; }
fn first_id(wid: vec3u, nwg: vec3u, li: u32) -> u32 { return linear_group_id(wid, nwg) * 256u + li; }
fn stride(nwg: vec3u) -> u32 { return nwg.x * nwg.y * 256u; }
`;

/** flag[0] |= 1 if src holds a non-finite value (P.n elements). */
export const scanWgsl = /* wgsl */ `
${COMMON}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
${CountParams.wgsl}
@group(0) @binding(2) var<uniform> P: Count;
@compute @workgroup_size(256)
fn scan(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  var found = false;
  for (var i = first_id(wid, nwg, li); i < P.n; i += stride(nwg)) { found = found || non_finite(src[i]); }
  if (found) { atomicOr(&flag[0], 1u); }
}`;

/**
 * Rule 'taps': each output's class from every tap of its window (weights as given, zeros included), written over
 * the output where non-finite. taps: (dx, dy, dz, weight bits), all of them.
 */
export function tapsWgsl(mode: BorderMode): string {
  const outside = mode === 'constant' ? 'if (x < g.lo.x || x >= g.hi.x || y < g.lo.y || y >= g.hi.y || z < g.lo.z || z >= g.hi.z) { continue; }' : '';
  return /* wgsl */ `
${COMMON}
${Geo.wgsl}
${borderMapWgsl(mode)}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> taps: array<vec4<i32>>;
@group(0) @binding(3) var<uniform> g: Geo;
@group(0) @binding(4) var<storage, read> flag: array<u32>;
@compute @workgroup_size(256)
fn taps_patch(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  if (flag[0] == 0u) { return; }
  let nx = u32(g.nOut.x);
  let ny = u32(g.nOut.y);
  for (var i = first_id(wid, nwg, li); i < g.total; i += stride(nwg)) {
    let ox = i32(i % nx);
    let oy = i32((i / nx) % ny);
    let oz = i32(i / (nx * ny));
    var nan = false;
    var pos = false;
    var neg = false;
    for (var t = 0u; t < g.ntaps; t++) {
      let tp = taps[t];
      let x = ox + g.off.x + tp.x;
      let y = oy + g.off.y + tp.y;
      let z = oz + g.off.z + tp.z;
      ${outside}
      let p = (u32(bmap(z, g.nIn.z)) * u32(g.nIn.y) + u32(bmap(y, g.nIn.y))) * u32(g.nIn.x) + u32(bmap(x, g.nIn.x));
      let v = src[p];
      if (!non_finite(v)) { continue; }
      let w = bitcast<u32>(tp.w);
      if (is_nan(v) || (w & 0x7fffffffu) == 0u) { nan = true; break; }
      if (((v ^ w) >> 31u) == 0u) { pos = true; } else { neg = true; }
    }
    if (nan || (pos && neg)) { dst[i] = NAN_BITS; } else if (pos) { dst[i] = POS_INF; } else if (neg) { dst[i] = NEG_INF; }
  }
}`;
}

/**
 * Rule 'running': one pass of classes along an axis, one invocation per line (see nonfinite.ts runningLine).
 * The volume is [outer][nIn][inner] in, [outer][nOut][inner] out. Positions are those of the whole line: this
 * piece holds its rows [start, start + nIn) of a line of `total` (a resident image in slabs, core/gpu/slabs.ts;
 * start 0 and total nIn otherwise). The first occurrences of NaN, +inf and −inf before the piece come from
 * `state` (load), and those before position `save` of the border-extended line go there for the next piece — a
 * running sum crosses slabs. Extended positions [e0, end) are walked.
 */
export function runningWgsl(mode: BorderMode): string {
  const outside = mode === 'constant' ? 'if (p < P.lo || p >= P.hi) { return 0u; }' : '';
  return /* wgsl */ `
${COMMON}
${borderMapWgsl(mode)}
${LineParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> P: Line;
@group(0) @binding(3) var<storage, read> flag: array<u32>;
// Per line: first NaN, +inf, −inf positions + 1 (0: none yet).
@group(0) @binding(4) var<storage, read_write> state: array<vec4<i32>>;

// Element e of the border-extended line starting at sb: its bits if non-finite, else 0.
fn element(sb: u32, e: i32) -> u32 {
  let p = e + P.off;
  ${outside}
  let v = src[sb + u32(bmap(p, P.total) - P.start) * P.inner];
  return select(0u, v, non_finite(v));
}

@compute @workgroup_size(256)
fn running(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  if (flag[0] == 0u) { return; }
  let never = 0x7fffffff;
  for (var l = first_id(wid, nwg, li); l < P.lines; l += stride(nwg)) {
    let ou = l / P.inner;
    let inn = l % P.inner;
    let sb = ou * u32(P.nIn) * P.inner + inn;
    let db = ou * u32(P.nOut) * P.inner + inn;
    var first_nan = never;
    var first_pos = never;
    var first_neg = never;
    var e0 = 0;
    if (P.load == 1u) {
      let s = state[l];
      first_nan = select(never, s.x - 1, s.x > 0);
      first_pos = select(never, s.y - 1, s.y > 0);
      first_neg = select(never, s.z - 1, s.z > 0);
      e0 = P.start - P.off;
    }
    for (var e = e0; e < P.end; e++) {
      if (e == P.save) {
        state[l] = vec4<i32>(select(0, first_nan + 1, first_nan != never), select(0, first_pos + 1, first_pos != never), select(0, first_neg + 1, first_neg != never), 0);
      }
      let v = element(sb, e);
      if (v != 0u) {
        if (is_nan(v)) { first_nan = min(first_nan, e); } else if ((v >> 31u) == 0u) { first_pos = min(first_pos, e); } else { first_neg = min(first_neg, e); }
      }
      let o = e - (P.k - 1) - P.start;
      if (o < 0 || o >= P.nOut) { continue; }
      let first = min(first_nan, min(first_pos, first_neg));
      var c = 0u;
      if (first <= e) {
        if (first_nan <= e || (first_pos <= e && first_neg <= e) || first < o + P.start) { c = NAN_BITS; } else if (first_pos <= e) { c = POS_INF; } else { c = NEG_INF; }
      }
      dst[db + u32(o) * P.inner] = c;
    }
  }
}`;
}

/** dst[i] = classes[i] where the class is non-finite. */
export const patchWgsl = /* wgsl */ `
${COMMON}
@group(0) @binding(0) var<storage, read> classes: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
${CountParams.wgsl}
@group(0) @binding(2) var<uniform> P: Count;
@group(0) @binding(3) var<storage, read> flag: array<u32>;
@compute @workgroup_size(256)
fn patch_classes(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  if (flag[0] == 0u) { return; }
  for (var i = first_id(wid, nwg, li); i < P.n; i += stride(nwg)) {
    let c = classes[i];
    if (c != 0u) { dst[i] = c; }
  }
}`;

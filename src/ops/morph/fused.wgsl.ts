import { defineUniforms } from '../../core/gpu/uniforms.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { lanes, laneOps, type MorphDtype } from './morph.wgsl.js';
import { mirrorWgsl, rowsPlan, rowWordsCode, rowWordWgsl, slidingCode, unpackWgsl } from './segments.wgsl.js';

/**
 * Both passes of a rectangle (x then y) in one kernel, so that the x pass's result never goes to memory: a
 * workgroup owns a tile of TW words × R rows of the output. It computes the x pass for the R + ky − 1 rows the
 * tile's windows read (the y halo is computed again by the tile above and below: (R + ky − 1) / R times the x
 * work) into workgroup memory, batch by batch — a batch's input rows and x halo are staged in workgroup memory
 * with coalesced loads while the batch before is computed — then the y pass from workgroup memory, storing each
 * output word once (coalesced: TW consecutive words of a row). The y border is applied to whole rows of the x
 * result (a reflected row, or the fill word for OpenCV's constant border), as the two-pass path reads them.
 *
 * Shape: `threads` invocations; along x TW / xs invocations a row, each xs output words (rowWordsCode, as
 * seg_rows); along y threads / TW segments of ys rows a word column (slidingCode, as seg_lines).
 */

/** The fused kernel's parameters: width in pixels, rows, words a row; fill: the border's element, fillw: its word. */
export const FusedParams = defineUniforms('Params', {
  n: 'u32', h: 'u32', rw: 'u32', reflect: 'u32', fill: 'u32', fillw: 'u32', tilesX: 'u32', tilesY: 'u32', planes: 'u32',
});

export interface FusedShape {
  /** Output words a tile row (a power of 2, ≥ 32 / threads' share: threads a multiple of tw). */
  tw: number;
  /** x: output words per invocation (divides tw). */
  xs: number;
  /** y: output rows per invocation. */
  ys: number;
  /** Invocations a workgroup. */
  threads: number;
  /** x: lanes unpacked to vectors (rowWordsCode). */
  unpacked?: boolean;
}

export interface FusedKernel extends FusedShape {
  dtype: MorphDtype;
  isMin: boolean;
  swar?: boolean;
  /** x window and anchor */
  kx: number;
  ax: number;
  /** y window and anchor */
  ky: number;
  ay: number;
}

/** The derived sizes of a fused kernel: rows a tile, rows of x result, staging, workgroup memory. */
export function fusedLayout(kn: FusedKernel) {
  const { epw } = lanes(kn.dtype);
  const { d } = rowsPlan(epw, kn.kx, kn.ax);
  const { span } = rowWordsCode(kn.dtype, kn.kx, kn.ax, kn.xs, (t) => t);
  const xpr = kn.tw / kn.xs; // x invocations a row
  const rb = kn.threads / xpr; // rows a batch
  const iw = kn.tw + span - kn.xs; // input words a row: the tile's and the x halo
  // Odd strides: the invocations of a warp read rows rb apart in the staging area and xs words apart in a row.
  const iwp = iw | 1;
  const twp = kn.tw + 1;
  const r = (kn.threads / kn.tw) * kn.ys; // output rows a tile
  const xr = r + kn.ky - 1; // rows of x result a tile reads
  const bytes = (xr * twp + rb * iwp) * 4;
  return { d, xpr, rb, iw, iwp, twp, r, xr, batches: Math.ceil(xr / rb), loads: Math.ceil((rb * iw) / kn.threads), bytes };
}

export function fusedWgsl(kn: FusedKernel): string {
  const { epw, bits, mask } = lanes(kn.dtype);
  const L = fusedLayout(kn);
  const x = rowWordsCode(kn.dtype, kn.kx, kn.ax, kn.xs, (t) => `stage[lb + ${t}]`, kn.unpacked);
  const y = slidingCode((t) => `xres[(y0 + ${t}) * TWP + c]`, kn.ky, kn.ys, 'opw', 'u');
  const slot = (j: number) => `li + ${j * kn.threads}u`;
  const partial = (j: number) => (j + 1) * kn.threads > L.rb * L.iw;
  // Batch `bb`'s staging words into registers: slot j holds word (j·threads + li) of the batch, row-major.
  const prefetch = (bb: string) => Array.from({ length: L.loads }, (_, j) => `s${j} = ldw(${bb}, ${partial(j) ? `min(${slot(j)}, SW - 1u)` : slot(j)}, r0, pb, q0, inside);`).join('\n    ');
  const stash = Array.from({ length: L.loads }, (_, j) => (partial(j) ? `if (${slot(j)} < SW) { stage[st(${slot(j)})] = s${j}; }` : `stage[st(${slot(j)})] = s${j};`)).join('\n    ');
  return /* wgsl */ `
${gridWgsl}
${FusedParams.wgsl}
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
const MASK: u32 = ${mask};
const TW: u32 = ${kn.tw}u;
const TWP: u32 = ${L.twp}u;
const XS: u32 = ${kn.xs}u;
const XPR: u32 = ${L.xpr}u;
const RB: u32 = ${L.rb}u;
const IW: u32 = ${L.iw}u;
const IWP: u32 = ${L.iwp}u;
const SW: u32 = ${L.rb * L.iw}u;
const R: u32 = ${L.r}u;
const XR: u32 = ${L.xr}u;
const YS: u32 = ${kn.ys}u;
const AY: i32 = ${kn.ay}i;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
${laneOps(kn.dtype, kn.isMin, kn.swar)}
${kn.unpacked ? unpackWgsl(kn.dtype, kn.isMin) : ''}
${mirrorWgsl}
${rowWordWgsl(epw)}
var<workgroup> stage: array<u32, ${L.rb * L.iwp}>;
var<workgroup> xres: array<u32, ${L.xr * L.twp}>;

/** Staging index of batch word i (row-major, IW a row) in rows of IWP. */
fn st(i: u32) -> u32 { return (i / IW) * IWP + i % IW; }

/** Input row of x-result row xrow of the tile at r0: reflected into the image (clamped: rows no output reads). */
fn srcRow(r0: u32, xrow: u32) -> u32 { return u32(bmap(i32(r0 + xrow) - AY, i32(P.h))); }

/** Word i of batch b's staging area: the input word of its row, q0 + i % IW. */
fn ldw(b: u32, i: u32, r0: u32, pb: u32, q0: i32, inside: bool) -> u32 {
  let rb = pb + srcRow(r0, b * RB + i / IW) * P.rw;
  let q = q0 + i32(i % IW);
  if (inside) { return src[rb + u32(q)]; }
  return ldc(rb, q);
}

@compute @workgroup_size(${kn.threads})
fn fused(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let plane = g / (P.tilesX * P.tilesY);
  if (plane >= P.planes) { return; }
  let w0 = (g % P.tilesX) * TW;
  let r0 = ((g / P.tilesX) % P.tilesY) * R;
  let pb = plane * P.h * P.rw;
  let q0 = i32(w0) + ${L.d}i;
  let inside = q0 >= 0i && (q0 + i32(IW)) * i32(EPW) <= i32(P.n);
  ${Array.from({ length: L.loads }, (_, j) => `var s${j}: u32;`).join(' ')}
  ${prefetch('0u')}
  let xrow = li / XPR;
  let lb = xrow * IWP + (li % XPR) * XS;
  let xc = (li % XPR) * XS;
  for (var b = 0u; b < ${L.batches}u; b++) {
    workgroupBarrier();
    ${stash}
    workgroupBarrier();
    // The next batch's loads in flight while this one is computed.
    if (b + 1u < ${L.batches}u) {
      ${prefetch('b + 1u')}
    }
    let xt = b * RB + xrow;
    if (xt < XR) {
      ${x.code.join('\n      ')}
      // OpenCV's constant border: rows outside the image are the fill word, whatever the x pass gave.
      let edge = P.reflect == 0u && (i32(r0 + xt) - AY < 0i || i32(r0 + xt) - AY >= i32(P.h));
      ${x.outs.map((o, i) => `xres[xt * TWP + xc + ${i}u] = select(${o}, P.fillw, edge);`).join('\n      ')}
    }
  }
  workgroupBarrier();
  let c = li % TW;
  let y0 = (li / TW) * YS;
  ${y.code}
  let col = w0 + c;
  if (col < P.rw) {
    ${y.outs.map((o, i) => `if (r0 + y0 + ${i}u < P.h) { dst[pb + (r0 + y0 + ${i}u) * P.rw + col] = ${o}; }`).join('\n    ')}
  }
}
`;
}

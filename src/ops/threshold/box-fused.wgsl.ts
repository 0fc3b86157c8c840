import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** The fused box threshold's parameters: rw = output words per row (the aligned layout), tiles_x = tiles per tile row. */
export const FusedBoxParams = defineUniforms('F', { w: 'u32', h: 'u32', rw: 'u32', tiles_x: 'u32', idelta: 'i32' });

/** The fused box threshold's tile: what one workgroup (256 invocations) computes, and how the work is split in it. */
export interface BoxTile {
  /** Output words (4 pixels each) per tile row: the tile is 4·words pixels wide. */
  words: number;
  /** Output rows per tile. */
  rows: number;
  /** Column pass: rows each invocation slides its column sums down. */
  segRows: number;
  /** Row pass: output words each invocation slides its row sums along. */
  run: number;
  /**
   * Load the tile's input rows (halo included) into workgroup memory first, every invocation issuing its loads at
   * once, and take the column sums from there; else the column pass reads the input itself as it slides.
   */
  stage: boolean;
}

/** Halo words on each side of a tile row for window radius r (the column sums of whole words). */
export const haloWords = (r: number) => Math.ceil(r / 4);

/**
 * Workgroup memory of a tile: its column sums, two u32 (even and odd bytes) per word column and row, and where
 * staged, its input words with the halo rows.
 */
export function fusedBoxSharedBytes(r: number, t: BoxTile): number {
  const lw = t.words + 2 * haloWords(r);
  return t.rows * lw * 8 + (t.stage ? (t.rows + 2 * r) * lw * 4 : 0);
}

const WG = 256;

/**
 * cv2.adaptiveThreshold(ADAPTIVE_THRESH_MEAN_C, THRESH_BINARY) of one tile per workgroup, in one pass over memory
 * (the separable kernels of local.wgsl.ts moved a u32 per pixel through two buffers; this reads the 8-bit input and
 * writes the packed output once):
 * 1. column pass: for each word column of the tile and its halo (4 pixels: bytes as 16-bit lanes of two u32, even
 *    and odd bytes), the sums of the k rows around each tile row, sliding down `segRows` rows (one row in, one
 *    out), into workgroup memory. The input words come with coalesced loads (neighbouring invocations, neighbouring
 *    words; rows and columns clamped: BORDER_REPLICATE), staged (the tile's rows and halo loaded into workgroup
 *    memory first: the H100 default) or as the pass slides (less workgroup memory; each invocation then waits on
 *    its loads one after another, 2.3× slower at 8K). A lane holds at most 255·k < 2¹⁶ for k ≤ 257;
 *    the lanes are added and subtracted as whole words (exact modulo 2³², every lane ends in range);
 * 2. row pass: each invocation slides the k-wide sums of the column sums along `run` output words of one row,
 *    and binarizes as the CPU twin does (local-kernels.ts boxThresholdRows): mean = ⌊(2·sum + k²)/(2k²)⌋ and
 *    src − mean > −ceil(C) ⇔ 2·sum + k² < 2k²·(src + ceil(C)), with src + ceil(C) clamped to [0, 256] (outside it
 *    the answer is the same: never below 1, always above 255), so every product fits a u32.
 * The radius is a constant of the generated code: the row pass's reads and lane extractions are unrolled.
 * Output rows are whole words (rw per row: the aligned layout of core/gpu/wgsl/aligned.ts), written once each.
 */
export function fusedBoxWgsl(r: number, t: BoxTile): string {
  const hw = haloWords(r);
  const lw = t.words + 2 * hw;
  const k = 2 * r + 1;
  const k2 = k * k;
  const runsPerRow = t.words / t.run;
  const groups = Math.ceil(t.rows / t.segRows);
  const staged = (t.rows + 2 * r) * lw;
  return /* wgsl */ `
${gridWgsl}
${FusedBoxParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<uniform> P: F;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
const R: i32 = ${r}i;
const TW: u32 = ${t.words}u;
const TH: u32 = ${t.rows}u;
const HW: u32 = ${hw}u;
const LW: u32 = ${lw}u;
const SEG: u32 = ${t.segRows}u;
const K2: u32 = ${k2}u;
const LANES: u32 = 0x00ff00ffu;
var<workgroup> ve: array<u32, ${t.rows * lw}>;
var<workgroup> vo: array<u32, ${t.rows * lw}>;
${t.stage ? `var<workgroup> tin: array<u32, ${staged}>;` : ''}

fn px(p: u32) -> u32 { return (src[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu; }
fn row_at(y: i32) -> u32 { return u32(clamp(y, 0i, i32(P.h) - 1i)) * P.w; }

// Pixels x … x + 3 of the row starting at byte \`row\` as one word, columns clamped to the image (BORDER_REPLICATE).
fn load4(row: u32, x: i32) -> u32 {
  if (x >= 0i && x + 3i < i32(P.w)) {
    let p = row + u32(x);
    let s = (p & 3u) * 8u;
    let a = src[p >> 2u];
    if (s == 0u) { return a; }
    return (a >> s) | (src[(p >> 2u) + 1u] << (32u - s));
  }
  var v = 0u;
  for (var b = 0i; b < 4i; b++) { v |= px(row + u32(clamp(x + b, 0i, i32(P.w) - 1i))) << (u32(b) * 8u); }
  return v;
}

${t.stage ? stagedWgsl(staged) : directWgsl}

@compute @workgroup_size(${WG})
fn box_fused(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let tile = linear_group_id(wid, nwg);
  let c0 = (tile % P.tiles_x) * TW;
  let y0 = (tile / P.tiles_x) * TH;
  let rows = min(TH, P.h - min(P.h, y0));
${t.stage ? '  stage(c0, y0, li);\n  workgroupBarrier();' : ''}
  // 1. Column sums of the tile rows, word columns c0 − HW … c0 + TW + HW − 1.
  for (var task = li; task < LW * ${groups}u; task += ${WG}u) {
    let j = task % LW;
    let ty0 = (task / LW) * SEG;
    let ty1 = min(ty0 + SEG, rows);
    if (ty0 >= ty1) { continue; }
    var se = 0u;
    var so = 0u;
    for (var d = -R; d <= R; d++) {
      let v = word_at(c0, y0, i32(ty0) + d, j);
      se += v & LANES;
      so += (v >> 8u) & LANES;
    }
    for (var ty = ty0; ty < ty1; ty++) {
      ve[ty * LW + j] = se;
      vo[ty * LW + j] = so;
      if (ty + 1u < ty1) {
        let a = word_at(c0, y0, i32(ty) + R + 1i, j);
        let b = word_at(c0, y0, i32(ty) - R, j);
        se += (a & LANES) - (b & LANES);
        so += ((a >> 8u) & LANES) - ((b >> 8u) & LANES);
      }
    }
  }
  workgroupBarrier();
  // 2. Row sums of the column sums, mean and comparison, one packed word per 4 pixels.
  for (var task = li; task < TH * ${runsPerRow}u; task += ${WG}u) {
    let ty = task / ${runsPerRow}u;
    let first = (task % ${runsPerRow}u) * ${t.run}u;
    let c = c0 + first;
    if (ty >= rows || c >= P.rw) { continue; }
    let y = y0 + ty;
    let b = ty * LW + first + HW;
${rowPass(r, t.run)}
  }
}
`;
}

/**
 * The unrolled row pass of one invocation: its words' column sums (the lanes of ve/vo around word b), the k-wide
 * sum of the first pixel, then one pixel in and one out per step; each word binarized and stored while in range.
 */
function rowPass(r: number, run: number): string {
  const lines: string[] = [];
  const lo = Math.floor(-r / 4), hi = Math.floor((4 * run - 1 + r) / 4);
  const name = (j: number) => (j < 0 ? `m${-j}` : `p${j}`);
  const at = (j: number) => (j < 0 ? `b - ${-j}u` : `b + ${j}u`);
  for (let j = lo; j <= hi; j++) lines.push(`let e_${name(j)} = ve[${at(j)}];`, `let o_${name(j)} = vo[${at(j)}];`);
  // The column sum of pixel d (relative to the first pixel of word b): lane (d mod 4) of its word.
  const val = (d: number) => {
    const j = Math.floor(d / 4), lane = d - 4 * j;
    const w = `${lane & 1 ? 'o' : 'e'}_${name(j)}`;
    return lane >> 1 ? `(${w} >> 16u)` : `(${w} & 0xffffu)`;
  };
  const first: string[] = [];
  for (let d = -r; d <= r; d++) first.push(val(d));
  lines.push(`var s = ${first.join(' + ')};`);
  for (let m = 0; m < run; m++) {
    lines.push(`if (c + ${m}u < P.rw) {`, `  let v = word_at(c0, y0, i32(ty), first + HW + ${m}u);`, '  var word = 0u;');
    for (let i = 0; i < 4; i++) {
      const d = 4 * m + i;
      if (d > 0) lines.push(`  s = s + ${val(d + r)} - ${val(d - 1 - r)};`);
      lines.push(`  let t${i} = u32(clamp(i32((v >> ${8 * i}u) & 0xffu) + P.idelta, 0i, 256i));`,
        `  if ((c + ${m}u) * 4u + ${i}u < P.w && 2u * s + K2 < 2u * K2 * t${i}) { word |= 0xffu << ${8 * i}u; }`);
    }
    lines.push(`  dst[y * P.rw + c + ${m}u] = word;`, '}');
  }
  return lines.map((l) => `    ${l}`).join('\n');
}

/** The column pass reads the input itself: word column j (tile-relative, halo first) of tile row ty. */
const directWgsl = /* wgsl */ `
fn word_at(c0: u32, y0: u32, ty: i32, j: u32) -> u32 { return load4(row_at(i32(y0) + ty), i32(c0 + j) * 4i - i32(HW) * 4i); }`;

/**
 * The staged tile: n input words (rows ty = −R … TH + R − 1, word columns c0 − HW … c0 + TW + HW − 1) loaded by all
 * invocations, each issuing its loads before storing any (no load waits for another); aligned rows inside the
 * image are read as they are, the rest (borders, widths not multiples of 4) through load4.
 */
function stagedWgsl(n: number): string {
  const per = Math.ceil(n / WG);
  return /* wgsl */ `
const STAGED: u32 = ${n}u;
fn word_at(c0: u32, y0: u32, ty: i32, j: u32) -> u32 { return tin[u32(ty + R) * LW + j]; }
fn stage(c0: u32, y0: u32, li: u32) {
  var v: array<u32, ${per}>;
  let interior = P.w % 4u == 0u && c0 >= HW && (c0 + TW + HW) * 4u <= P.w;
  if (interior) {
    for (var m = 0u; m < ${per}u; m++) {
      let i = min(li + m * ${WG}u, STAGED - 1u);
      v[m] = src[(row_at(i32(y0) - R + i32(i / LW)) >> 2u) + c0 - HW + i % LW];
    }
  } else {
    for (var m = 0u; m < ${per}u; m++) {
      let i = min(li + m * ${WG}u, STAGED - 1u);
      v[m] = load4(row_at(i32(y0) - R + i32(i / LW)), i32(c0 + i % LW) * 4i - i32(HW) * 4i);
    }
  }
  for (var m = 0u; m < ${per}u; m++) {
    let i = li + m * ${WG}u;
    if (i < STAGED) { tin[i] = v[m]; }
  }
}`;
}

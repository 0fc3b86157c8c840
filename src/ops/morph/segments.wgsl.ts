import { borderMapWgsl } from '../../core/gpu/wgsl/border.js';
import { lanes, lineHeader, type LineKernel, type MorphDtype } from './morph.wgsl.js';

/**
 * Register-segment line kernels: one invocation computes a segment of outputs whose window sums are generated as
 * straight-line WGSL (constant indices, so every intermediate stays in a register; the vHGW kernels keep theirs in
 * a private array the compiler places in local memory), loads before stores, and an unchecked path for segments
 * clear of the border.
 *
 * - seg_lines: along y (or z) on whole words, the lanes of a word side by side, as vhgw_lines (coalesced).
 * - seg_rows: along x on whole words. A window of K pixels is cut into M = ⌊K/E⌋ whole words (E pixels a word)
 *   and e = K − E·M pixels: the sliding minimum Z of M words (lane l of Z[q] holds the minimum of pixels
 *   E·(q + m) + l, m < M), then log2 E doublings Z ← min(Z, Z funnel-shifted by 1, 2, … lanes) make lane l of
 *   Z[q] the minimum of the E·M consecutive pixels from E·q + l; an output word is then the minimum of two such
 *   words funnel-shifted to its window's start and to e pixels later. Byte selection (the funnel shift) commutes
 *   with a lane-wise minimum, which is what lets whole words stand for pixels.
 */

/** Loads per iteration of the loop over a long window's middle. */
const UNROLL = 8;

/** op over the expressions as a balanced tree (independent loads, short dependency chains). */
function tree(xs: string[], op: string): string {
  if (xs.length === 1) return xs[0];
  const h = xs.length >> 1;
  return `${op}(${tree(xs.slice(0, h), op)}, ${tree(xs.slice(h), op)})`;
}

/** Code computing `count` sliding minima of `k` consecutive loads: outputs[i] = op(ld(i), …, ld(i + k − 1)). */
export function slidingCode(ld: (t: string) => string, k: number, count: number, op: string, v: string): { code: string; outs: string[] } {
  const lines: string[] = [];
  const outs: string[] = [];
  // Chunks of q ≤ k outputs share the middle [q − 1, k − 1] of their windows: per chunk a suffix over [0, q − 2],
  // the middle, and a prefix over [k, k + q − 2] — about k + 3q operations for q outputs.
  for (let c0 = 0, ch = 0; c0 < count; ch++) {
    const q = Math.min(k, count - c0);
    const p = `${v}${ch}`;
    const at = (t: number) => ld(`${c0 + t}u`);
    for (let i = q - 2; i >= 0; i--) lines.push(`let ${p}l${i} = ${i === q - 2 ? at(i) : `${op}(${at(i)}, ${p}l${i + 1})`};`);
    lines.push(`var ${p}m = ${at(q - 1)};`);
    // The middle 8 loads at a time: a loop of one load per iteration waits for each load in turn (on the H100 the
    // vertical pass at k = 101 took 0.072 ms so, against 0.028 ms at k = 3).
    const body = k - q > 16 ? Math.floor((k - q) / UNROLL) * UNROLL : 0;
    if (body > 0) {
      const vs = Array.from({ length: UNROLL }, (_, j) => ld(`t + ${j}u`));
      lines.push(`for (var t = ${c0 + q}u; t < ${c0 + q + body}u; t += ${UNROLL}u) { ${p}m = ${op}(${p}m, ${tree(vs, op)}); }`);
    }
    for (let t = q + body; t < k; t++) lines.push(`${p}m = ${op}(${p}m, ${at(t)});`);
    for (let i = 0; i < q; i++) {
      if (i >= 1) lines.push(`let ${p}g${i} = ${i === 1 ? at(k) : `${op}(${p}g${i - 1}, ${at(k + i - 1)})`};`);
      const left = i <= q - 2 ? `${op}(${p}l${i}, ${p}m)` : `${p}m`;
      lines.push(`let ${p}y${i} = ${i === 0 ? left : `${op}(${left}, ${p}g${i})`};`);
      outs.push(`${p}y${i}`);
    }
    c0 += q;
  }
  return { code: lines.join('\n    '), outs };
}

/**
 * Position p (−n ≤ p < 2n: windows are at most n long where these kernels run) reflected into the line (dcba|abcd)
 * by core's one-reflection border map, without branches or modulo: every call is inlined at each of the unrolled
 * loads (dozens per kernel), so the border path's code size matters more than its speed.
 */
export const mirrorWgsl = /* wgsl */ `
${borderMapWgsl('reflect')}
fn mirror(p: i32) -> u32 { return u32(bmap(p, i32(P.n))); }`;

/** Loads a segment reads beyond its outputs: `count` outputs of a window of k read count + k − 1 inputs. */
export const reads = (count: number, k: number) => count + k - 1;

/**
 * Along y (z): `seg` output rows per invocation, `cols` word columns a workgroup (a power of 2 ≤ 64). Params as
 * vhgw_lines. `unpacked` (u8, u16): the minima on lanes unpacked once per word read, as rowWordsCode's; `top`: those
 * lanes with their pixel on top (unpackWgsl).
 *
 * `vec4`: an invocation's column is a strip of four adjacent words (16 u8 pixels), read and written with one
 * vec4<u32> access each (the u32 kernel ran at 1.3–1.7× a u32 copy's time; a vec4<u32> copy takes 0.74× a u32
 * copy's, docs/morphology.md). The storage arrays are then of vec4u and P.inner counts strips, so it takes only
 * lines whose word count is a multiple of 4 (gpu.ts falls back to the u32 kernel otherwise); `cols` counts strips.
 * Packed words only (not with `unpacked`). Measured slower than words (docs/morphology.md): a strip's four times the
 * registers hold it to shorter segments, which re-read more rows.
 */
export function segLinesWgsl(kn: LineKernel & { cols: number; unpacked?: boolean; vec4?: boolean; top?: boolean }): string {
  const strips = kn.vec4 === true;
  const vec = !strips && kn.unpacked === true && lanes(kn.dtype).epw > 1;
  const word = strips ? 'vec4u' : 'u32';
  const op = vec ? 'opv' : strips ? 'op4' : 'opw';
  const body = (ld: string) => {
    const load = (t: string) => `${ld}(base, p0, ${t})`;
    const { code, outs } = slidingCode(vec ? (t) => `unpackw(${load(t)})` : load, kn.k, kn.seg, op, 'v');
    const stores = outs.map((o, i) => `if (${i}u < tn) { dst[base + (s0 + ${i}u) * P.inner] = ${vec ? `packw(${o})` : o}; }`);
    return `${code}\n    ${stores.join('\n    ')}`;
  };
  return /* wgsl */ `
${lineHeader(kn, word)}
${vec ? unpackWgsl(kn.dtype, kn.isMin, kn.top) : ''}
${strips ? 'fn op4(a: vec4u, b: vec4u) -> vec4u { return vec4u(opw(a.x, b.x), opw(a.y, b.y), opw(a.z, b.z), opw(a.w, b.w)); }' : ''}
${mirrorWgsl}
const COLS: u32 = ${kn.cols}u;
fn ldf(base: u32, p0: i32, t: u32) -> ${word} { return src[base + u32(p0 + i32(t)) * P.inner]; }
fn ldc(base: u32, p0: i32, t: u32) -> ${word} {
  let p = p0 + i32(t);
  let v = src[base + mirror(p) * P.inner];
  return select(v, ${word}(P.fill), P.reflect == 0u && (p < 0i || p >= i32(P.n)));
}

@compute @workgroup_size(64)
fn seg_lines(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  // A workgroup: COLS word columns side by side (coalesced), 64 / COLS segments of them one below the other, which
  // read overlapping rows: fewer columns, more of those reads served by the workgroup's own cache.
  let g = linear_group_id(wid, nwg);
  let blocks = (P.inner + COLS - 1u) / COLS;
  let c = (g % blocks) * COLS + li % COLS;
  let rest = g / blocks;
  let o = rest % P.outer;
  let s = (rest / P.outer) * (64u / COLS) + li / COLS;
  if (s >= P.segs || c >= P.inner) { return; }
  let base = o * P.n * P.inner + c;
  let s0 = s * SEG;
  let p0 = i32(s0) - P.a;
  let tn = min(SEG, P.n - s0);
  if (p0 >= 0i && p0 + ${reads(kn.seg, kn.k)}i <= i32(P.n)) {
    ${body('ldf')}
  } else {
    ${body('ldc')}
  }
}
`;
}

/** The x kernel's window cut into words (see the file's comment); `a` is the anchor, baked in. */
export function rowsPlan(epw: number, k: number, a: number) {
  const m = Math.floor(k / epw), e = k - epw * m;
  const levels = Math.log2(epw);
  // Output word w starts its window at pixel E·w − a = E·(w + d) + r.
  const d = Math.floor(-a / epw), r = -a - epw * d;
  // The two shifted reads of the doubled Z per output word: word offset from w + d, lane shift.
  const shifts = [...new Set([r, r + e])].map((x) => ({ dq: Math.floor(x / epw), lane: x % epw }));
  return { m, e, levels, d, r, shifts };
}

/**
 * Workgroup-memory index of tile word i: one pad word every 32, so invocations SEG words apart hit distinct banks.
 * For an odd SEG they do without (an odd stride visits all 32 banks), and then the index is i: each access's
 * address is the invocation's base plus a constant, with no skew to compute at each of the span loads.
 */
const skewWgsl = (seg: number) => (seg % 2 === 1 ? 'fn sk(i: u32) -> u32 { return i; }' : 'fn sk(i: u32) -> u32 { return i + (i >> 5u); }');
const skewed = (n: number, seg: number) => (seg % 2 === 1 ? n : n + (n >> 5) + 1);

/**
 * One invocation's share of the x pass on words: `seg` output words from the `span` words ld(0 … span − 1), the
 * first of which is word w + d of the row for output word w (rowsPlan). Returns the code (`let` declarations) and
 * the expressions of the outputs. Shared by seg_rows and the fused kernel.
 *
 * `unpacked` (u8, u16): each word read is unpacked once into a vector of its lanes (unpackWgsl) and the minima are
 * taken lane-wise on vectors (one instruction a lane, where the packed-byte minimum takes eight for four lanes), so
 * that a funnel shift is a swizzle; outputs are packed again.
 */
export function rowWordsCode(dtype: MorphDtype, k: number, a: number, seg: number, ld: (t: string) => string, unpacked = false): { span: number; code: string[]; outs: string[] } {
  const { epw, bits } = lanes(dtype);
  const vec = unpacked && epw > 1;
  const { m, levels, shifts } = rowsPlan(epw, k, a);
  // Doubled Z words needed from w0 + d: outputs i read i + dq and, for a lane shift, i + dq + 1.
  const need = Math.max(...shifts.map((s) => seg - 1 + s.dq + (s.lane ? 1 : 0))) + 1;
  const zCount = need + levels;
  const xyzw = 'xyzw';
  const funnel = (x: string, y: string, lane: number) => {
    if (lane === 0) return x;
    if (!vec) return `((${x} >> ${lane * bits}u) | (${y} << ${32 - lane * bits}u))`;
    // Lanes lane … epw − 1 of x, then 0 … lane − 1 of y.
    return `vec${epw}u(${Array.from({ length: epw }, (_, l) => (l + lane < epw ? `${x}.${xyzw[l + lane]}` : `${y}.${xyzw[l + lane - epw]}`)).join(', ')})`;
  };
  const op = vec ? 'opv' : 'opw';
  const { code, outs: zs } = slidingCode(vec ? (t) => `unpackw(${ld(t)})` : ld, m, zCount, op, 'v');
  const lines = [code];
  let z = zs;
  for (let lv = 0; lv < levels; lv++) {
    const lane = 1 << lv;
    const next = z.slice(0, z.length - 1).map((_, i) => `z${lv}_${i}`);
    next.forEach((n, i) => lines.push(`let ${n} = ${op}(${z[i]}, ${funnel(z[i], z[i + 1], lane)});`));
    z = next;
  }
  const outs = Array.from({ length: seg }, (_, i) => {
    const parts = shifts.map((s) => funnel(z[i + s.dq], z[i + s.dq + 1] ?? (vec ? `vec${epw}u()` : '0u'), s.lane));
    const o = parts.length === 1 ? parts[0] : `${op}(${parts[0]}, ${parts[1]})`;
    return vec ? `packw(${o})` : o;
  });
  return { span: reads(zCount, m), code: lines, outs };
}

/**
 * WGSL for rowWordsCode's unpacked lanes: unpackw, packw and the lane-wise opv on vectors of EPW lanes.
 *
 * `top`: lane l is the word shifted left so that its pixel l sits in the top bits, the pixels below it left in
 * place: an unsigned min/max of two such lanes has the min/max of their top pixels on top (the bits below only
 * break ties), so the lanes need no mask and the top lane is the word itself (E − 1 shifts a word, not E
 * extractions); packw takes the top pixel of each lane.
 */
export function unpackWgsl(dtype: MorphDtype, isMin: boolean, top = false): string {
  const { epw, bits, mask } = lanes(dtype);
  if (epw === 1) return '';
  const l = Array.from({ length: epw }, (_, i) => i);
  const xyzw = 'xyzw';
  if (top) {
    const hi = 32 - bits; // lane l: w << (hi − l·bits)
    const field = (i: number) => `0x${((2 ** bits - 1) * 2 ** (i * bits)).toString(16)}u`;
    const put = (i: number) => (i === 0 ? `(v.x >> ${hi}u)` : i === epw - 1 ? `(v.${xyzw[i]} & ${field(i)})` : `((v.${xyzw[i]} >> ${hi - i * bits}u) & ${field(i)})`);
    return /* wgsl */ `
fn unpackw(w: u32) -> vec${epw}u { return vec${epw}u(${l.map((i) => (i === epw - 1 ? 'w' : `w << ${hi - i * bits}u`)).join(', ')}); }
fn packw(v: vec${epw}u) -> u32 { return ${l.map(put).join(' | ')}; }
fn opv(a: vec${epw}u, b: vec${epw}u) -> vec${epw}u { return ${isMin ? 'min' : 'max'}(a, b); }`;
  }
  return /* wgsl */ `
fn unpackw(w: u32) -> vec${epw}u { return vec${epw}u(${l.map((i) => (i === epw - 1 ? `w >> ${i * bits}u` : `(w >> ${i * bits}u) & ${mask}`)).join(', ')}); }
fn packw(v: vec${epw}u) -> u32 { return ${l.map((i) => (i === 0 ? 'v.x' : `(v.${xyzw[i]} << ${i * bits}u)`)).join(' | ')}; }
fn opv(a: vec${epw}u, b: vec${epw}u) -> vec${epw}u { return ${isMin ? 'min' : 'max'}(a, b); }`;
}

/** WGSL \`ldc(rb, q)\`: word q of the row at word rb, assembled pixel by pixel with the border rule where it is not wholly inside. */
export function rowWordWgsl(epw: number): string {
  return /* wgsl */ `
fn ldc(rb: u32, q: i32) -> u32 {
  if (q >= 0i && (q + 1i) * i32(EPW) <= i32(P.n)) { return src[rb + u32(q)]; }
  var word = 0u;
  for (var l = 0u; l < EPW; l++) {
    let x = q * i32(EPW) + i32(l);
    let y = mirror(x);
    let v = select((src[rb + y / EPW] >> ((y % EPW) * BITS)) & MASK, P.fill, P.reflect == 0u && (x < 0i || x >= i32(P.n)));
    word |= ${epw === 1 ? 'v' : 'v << (l * BITS)'};
  }
  return word;
}`;
}

/**
 * Along x in the aligned layout: `seg` output words per invocation, 64 invocations a workgroup on one row. The
 * workgroup loads its words and their halo into workgroup memory with coalesced loads (the border applied there,
 * once per word), each invocation computes its segment from there, and the outputs go back through workgroup
 * memory to coalesced stores: invocations reading and writing their own segments straight from memory (SEG words
 * apart) were 2–5× slower at 8K. K ≥ 2E (M ≥ 2 words) and K ≤ width (one reflection).
 */
export function segRowsWgsl(kn: LineKernel & { a: number; unpacked?: boolean; top?: boolean }): string {
  const { epw } = lanes(kn.dtype);
  const { d } = rowsPlan(epw, kn.k, kn.a);
  const seg = kn.seg;
  const { span, code, outs } = rowWordsCode(kn.dtype, kn.k, kn.a, seg, (t) => `tile[sk(lb + ${t})]`, kn.unpacked);
  const tileWords = 64 * seg + span - seg; // the workgroup's words and halo
  const perInvocation = Math.ceil(tileWords / 64);
  const idx = (j: number) => `li + ${64 * j}u`;
  const partial = (j: number) => 64 * (j + 1) > tileWords;
  const put = (j: number) => `tile[sk(${idx(j)})] = a${j};`;
  // An invocation's share of the tile: all its loads issued before the first store to workgroup memory (a loop
  // waited for each load in turn: x at k = 101 took 0.115 ms so, 0.089 without).
  const tileLoads = (load: string) => [
    ...Array.from({ length: perInvocation }, (_, j) => `let a${j} = ${partial(j) ? `select(0u, ${load.replace('J', `min(${idx(j)}, TILE - 1u)`)}, ${idx(j)} < TILE)` : load.replace('J', idx(j))};`),
    ...Array.from({ length: perInvocation }, (_, j) => (partial(j) ? `if (${idx(j)} < TILE) { ${put(j)} }` : put(j))),
  ].join('\n    ');
  const lines = [...code, ...outs.map((o, i) => `otile[sk(li * SEG + ${i}u)] = ${o};`)];
  return /* wgsl */ `
${lineHeader(kn)}
${kn.unpacked ? unpackWgsl(kn.dtype, kn.isMin, kn.top) : ''}
${mirrorWgsl}
${skewWgsl(seg)}
const TILE: u32 = ${tileWords}u;
var<workgroup> tile: array<u32, ${skewed(tileWords, seg)}>;
var<workgroup> otile: array<u32, ${skewed(64 * seg, seg)}>;
${rowWordWgsl(epw)}

@compute @workgroup_size(64)
fn seg_rows(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let row = g / P.segs;
  if (row >= P.lines) { return; }
  let rb = row * P.inner;
  let w0 = (g % P.segs) * 64u * SEG;
  let q0 = i32(w0) + ${d}i;
  if (q0 >= 0i && (q0 + i32(TILE)) * i32(EPW) <= i32(P.n)) {
    ${tileLoads('src[rb + u32(q0) + J]')}
  } else {
    ${tileLoads('ldc(rb, q0 + i32(J))')}
  }
  workgroupBarrier();
  let lb = li * SEG;
  ${lines.join('\n  ')}
  workgroupBarrier();
  for (var j = li; j < 64u * SEG && w0 + j < P.inner; j += 64u) { dst[rb + w0 + j] = otile[sk(j)]; }
}
`;
}

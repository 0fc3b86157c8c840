import { defineUniforms } from '../../../core/gpu/uniforms.js';
import { gridWgsl } from '../../../core/gpu/wgsl/grid.js';

/**
 * One band of the entropy coder's blocks, in scan order (the order the coded blocks lie in the file): scan indices
 * [s0, s0 + count) of `n`, whose coefficients are bound from layout block `b0` on. The layout (blockLayout,
 * jpeg-encode-gpu.ts): `perRow` blocks per MCU row, `mcuCols` MCUs across, `bpm` blocks per MCU. Per component c,
 * `cN` = (h, v sampling factors, width and height in blocks: libjpeg's width_in_blocks / height_in_blocks; blocks
 * past them are its dummy blocks) and `dN` = (first block of the component within an MCU, its first block within an
 * MCU row of the layout, its blocks per row of the layout, its Huffman tables: DC | AC << 8). */
export const HuffParams = defineUniforms('HuffParams', {
  n: 'u32', s0: 'u32', count: 'u32', b0: 'u32', perRow: 'u32', mcuCols: 'u32', bpm: 'u32',
  c0: 'vec4u', c1: 'vec4u', c2: 'vec4u', d0: 'vec4u', d1: 'vec4u', d2: 'vec4u',
});

/**
 * Byte stuffing's capacity (`bytes` coded bytes at most, in `words` big-endian words) and where the coded bits'
 * total lies in `bits` (`total`: the block count, the scan's last element).
 */
export const StuffParams = defineUniforms('StuffParams', { bytes: 'u32', words: 'u32', total: 'u32' });

/**
 * Offsets in the `tables` array: DC tables 0 and 1 of 16 symbols, AC tables 0 and 1 of 256, then the zigzag order
 * (64 natural indices; there rather than a WGSL const array, which compilers may copy into each invocation's memory
 * to index it at run time).
 */
export const DC_TABLE = 16;
export const AC_TABLE = 256;
export const AC_BASE = 2 * DC_TABLE;
export const ZIGZAG_BASE = AC_BASE + 2 * AC_TABLE;
export const TABLES_LENGTH = ZIGZAG_BASE + 64;

/**
 * jpeg_natural_order: the natural (row-major) index of the k-th coefficient in zigzag order, walked here along
 * the anti-diagonals (up-right on even ones, down-left on odd ones) rather than copied as a table.
 */
export function zigzagNatural(): number[] {
  const order: number[] = [];
  for (let s = 0; s < 15; s++) {
    const rows = [];
    for (let i = Math.max(0, s - 7); i <= Math.min(7, s); i++) rows.push(i);
    if (s % 2 === 0) rows.reverse();
    for (const i of rows) order.push(i * 8 + (s - i));
  }
  return order;
}

/**
 * jchuff.c encode_one_block for the block at scan index s, as WGSL function `name`, emitting each code through
 * `put(value, bits)` (which counts in one kernel and writes in the other: the walk exists once). The DC
 * difference is taken against the previous block of the same component in scan order; libjpeg's dummy blocks
 * (past the component's width or height in blocks, in the last MCU column or row) code as zero AC with the
 * previous block's DC (jctrans.c compress_output), so the previous *real* block is the scan predecessor with
 * both coordinates clamped into the component. AC: runs of zeros, ZRL (0xF0) per 16, EOB after the last non-zero.
 */
function blockWalkerWgsl(name: string, put: string): string {
  // A Huffman code (table entry e: size << 16 | code) followed by the nbits extra bits of v: one put, at most
  // 16 + 11 bits.
  const code = (e: string, v: string, nbits: string) => `${put}(((${e} & 0xffffu) << ${nbits}) | extra_bits(${v}, ${nbits}), (${e} >> 16u) + ${nbits});`;
  return /* wgsl */ `
fn ${name}(s: u32) {
  let mcu = s / P.bpm;
  let k = s % P.bpm;
  let R = mcu / P.mcuCols;
  let M = mcu % P.mcuCols;
  var c = P.c0;
  var d = P.d0;
  if (k >= P.d2.x) { c = P.c2; d = P.d2; } else if (k >= P.d1.x) { c = P.c1; d = P.d1; }
  let kk = k - d.x;
  let y = kk / c.x;
  let x = kk % c.x;
  let by = R * c.y + y;
  let bx = M * c.x + x;
  let dc = (d.w & 0xffu) * ${DC_TABLE}u;
  let ac = ${AC_BASE}u + (d.w >> 8u) * ${AC_TABLE}u;
  if (bx >= c.z || by >= c.w) {
    // A dummy block: DC difference 0 (category 0, no extra bits), then EOB.
    ${code('tables[dc]', '0', '0u')}
    ${code('tables[ac]', '0', '0u')}
    return;
  }
  let L = layout_block(d, c, by, bx);
  // The scan predecessor of the same component, clamped into the component (its real block).
  var py = by;
  var px = bx;
  var first = false;
  if (x > 0u) { px = bx - 1u; }
  else if (y > 0u) { py = by - 1u; px = M * c.x + c.x - 1u; }
  else if (M > 0u) { py = R * c.y + c.y - 1u; px = M * c.x - 1u; }
  else if (R > 0u) { py = R * c.y - 1u; px = P.mcuCols * c.x - 1u; }
  else { first = true; }
  var pred = 0;
  if (!first) { pred = coef(layout_block(d, c, min(py, c.w - 1u), min(px, c.z - 1u)), 0u); }
  let diff = coef(L, 0u) - pred;
  let dn = category(diff);
  ${code('tables[dc + dn]', 'diff', 'dn')}
  var r = 0u;
  for (var z = 1u; z < 64u; z++) {
    let v = coef(L, tables[${ZIGZAG_BASE}u + z]);
    if (v == 0) { r++; continue; }
    for (; r > 15u; r -= 16u) { ${code('tables[ac + 0xf0u]', '0', '0u')} }
    let nbits = category(v);
    ${code('tables[ac + (r << 4u) + nbits]', 'v', 'nbits')}
    r = 0u;
  }
  if (r > 0u) { ${code('tables[ac]', '0', '0u')} }
}
`;
}

/**
 * The entropy coder's per-block kernels (one invocation per block of a band, in scan order):
 * - `huff_count`: each block's bits, into `bits` (whose exclusive prefix sum then gives every block's bit offset);
 * - `huff_pack`: each block's codes at its bit offset into big-endian u32 `words` (zeroed first): atomicOr where a
 *   word may be shared with the neighbouring blocks (a block's first and last), a store for the words between;
 *   the last block also pads with 1-bits to a byte boundary (jchuff.c flush_bits).
 * Tables: (size << 16 | code) per symbol, from the file's own DHT segments (codecs/jpeg/encode/huffman-encode.ts), and the zigzag order.
 */
export function jpegHuffmanWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
override WG: u32 = 64u;
${HuffParams.wgsl}
@group(0) @binding(0) var<storage, read> coefs: array<u32>;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read_write> bits: array<u32>;
@group(0) @binding(3) var<storage, read_write> words: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> P: HuffParams;

// The layout's index of block (by, bx) of a component (d: its place in the layout, c: its sampling).
fn layout_block(d: vec4u, c: vec4u, by: u32, bx: u32) -> u32 {
  return (by / c.y) * P.perRow + d.y + (by % c.y) * d.z + bx;
}

// Coefficient j (natural order) of layout block L: two int16 per word, the even one low.
fn coef(L: u32, j: u32) -> i32 {
  let w = coefs[(L - P.b0) * 32u + (j >> 1u)];
  return i32(select(w << 16u, w & 0xffff0000u, (j & 1u) == 1u)) >> 16u;
}

// The magnitude category of v: the bits of |v| (jchuff.c's nbits).
fn category(v: i32) -> u32 { return 32u - countLeadingZeros(u32(abs(v))); }

// The extra bits after a code: v itself if positive, v - 1 if negative, its low nbits.
fn extra_bits(v: i32, nbits: u32) -> u32 { return u32(select(v, v - 1, v < 0)) & ((1u << nbits) - 1u); }

var<private> at: u32;   // the next bit's offset
var<private> cur: u32;  // the bits of word at >> 5 so far, from the top
var<private> firstWord: u32;

fn count_put(v: u32, n: u32) { at += n; }

// Writes the word the bits so far fill: shared with the previous block if it is the block's first.
fn store_word(i: u32, w: u32) {
  if (i >= arrayLength(&words)) { return; } // past the capacity guessed: the count says so, the bytes are packed again
  if (i == firstWord) { atomicOr(&words[i], w); } else { atomicStore(&words[i], w); }
}

fn pack_put(v: u32, n: u32) {
  if (n == 0u) { return; }
  let free = 32u - (at & 31u);
  if (n < free) {
    cur |= v << (free - n);
  } else {
    let rest = n - free;
    store_word(at >> 5u, cur | (v >> rest));
    cur = select(0u, v << (32u - rest), rest > 0u);
  }
  at += n;
}

${blockWalkerWgsl('count_block', 'count_put')}
${blockWalkerWgsl('pack_block', 'pack_put')}

@compute @workgroup_size(WG)
fn huff_count(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  if (i >= P.count) { return; }
  let s = P.s0 + i;
  at = 0u;
  count_block(s);
  bits[s] = at;
  if (s == P.n - 1u) { bits[P.n] = 0u; }  // so that the exclusive scan of n + 1 ends with the total
}

@compute @workgroup_size(WG)
fn huff_pack(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  if (i >= P.count) { return; }
  let s = P.s0 + i;
  at = bits[s];
  cur = 0u;
  firstWord = at >> 5u;
  pack_block(s);
  if (s == P.n - 1u) {
    let pad = (8u - (at & 7u)) & 7u;
    pack_put((1u << pad) - 1u, pad);
  }
  if ((at & 31u) != 0u && (at >> 5u) < arrayLength(&words)) { atomicOr(&words[at >> 5u], cur); }
}
`;
}

/**
 * Byte stuffing (every 0xFF of entropy-coded data followed by 0x00), one invocation per big-endian word of the
 * packed bits: `stuff_count` counts its 0xFF bytes into `ff` (then scanned: the stuffed bytes before each word),
 * `stuff_scatter` writes its bytes and a zero after each 0xFF at their stuffed place in `out` (zeroed first; bytes
 * in file order, four to a little-endian word, from byte 8 on: words 0 and 1 are left to the count of stuffed zeros
 * and the coded bits). The coded bytes are the scan's total (so the submission that counts them can stuff them),
 * at most the capacity the buffers were made for.
 */
export function jpegStuffWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
override WG: u32 = 64u;
${StuffParams.wgsl}
@group(0) @binding(0) var<storage, read> words: array<u32>;
@group(0) @binding(1) var<storage, read_write> ff: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> bits: array<u32>;
@group(0) @binding(4) var<uniform> S: StuffParams;

// The coded bytes: the scan's total of bits, rounded up to bytes (the padding), within the capacity.
fn coded_bytes() -> u32 { return min((bits[S.total] + 7u) / 8u, S.bytes); }

// Byte j (0 = the first in the file) of packed word i, or 0 past the coded bytes.
fn coded_byte(i: u32, j: u32, bytes: u32) -> u32 {
  if (4u * i + j >= bytes) { return 0u; }
  return (words[i] >> (24u - 8u * j)) & 0xffu;
}

@compute @workgroup_size(WG)
fn stuff_count(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  if (i > S.words) { return; }
  let bytes = coded_bytes();
  var n = 0u;
  for (var j = 0u; j < 4u && i < S.words; j++) { n += select(0u, 1u, coded_byte(i, j, bytes) == 0xffu); }
  ff[i] = n;  // 0 past the coded words, so the scan's last element is the total
}

@compute @workgroup_size(WG)
fn stuff_scatter(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_group_id(wid, nwg) * WG + li;
  let bytes = coded_bytes();
  if (i >= S.words || 4u * i >= bytes) { return; }
  var p = 8u + 4u * i + ff[i];
  for (var j = 0u; j < 4u && 4u * i + j < bytes; j++) {
    let b = coded_byte(i, j, bytes);
    atomicOr(&out[p >> 2u], b << (8u * (p & 3u)));
    p += select(1u, 2u, b == 0xffu);
  }
}
`;
}

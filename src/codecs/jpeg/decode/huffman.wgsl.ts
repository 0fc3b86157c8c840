import { defineUniforms } from '../../../core/gpu/uniforms.js';
import { gridWgsl } from '../../../core/gpu/wgsl/grid.js';
import { workgroupScanWgsl } from '../../../core/gpu/wgsl/scan.js';

// The GPU JPEG decoder's Huffman decoding (huffman-decode.ts): the scan form of native/coef-decode.c (capture_scan) in,
// the plain coefficient form of the IDCT (jpeg-gpu-decode.ts) out. Word offsets of the scan form; they mirror the
// C #defines, and a test reads a file through both.
export const SCAN_INFO_W = 1024 / 4;
export const SCAN_TABLES_W = 1280 / 4;
export const SCAN_DATA = 21504;
const TBL_LUT = 0, TBL_MAXCODE = 512, TBL_VALOFF = 544, TBL_VAL = 576, TBL_WORDS = 832;
/** Info words (native/coef-decode.c SI_*; huffman-decode.ts scanInfo reads the bit and block counts). */
const SI_BPM = 1, SI_MCU_COLS = 2, SI_BLOCK = 8, SI_COMP = 24, SI_COMP_WORDS = 8, SI_ZIGZAG = 48;

/**
 * Bits per subsequence: each invocation decodes one, from the first codeword boundary at or after its start to the
 * first at or after its end. Long enough that decoding from a wrong boundary has synchronised with the true one
 * within a subsequence or two (Huffman codes resynchronise within a few codewords; the block and coefficient
 * position within a few blocks), short enough for tens of thousands of invocations per photo.
 */
export const SUBSEQ_BITS = 1024;
/** Subsequences per workgroup of the synchronisation kernel: they converge among themselves in workgroup memory. */
export const SYNC_WG = 128;
export const WRITE_WG = 64;
/** Passes of the synchronisation kernel; the last must change nothing (status word STATUS_CHANGED + pass). */
export const SYNC_PASSES = 3;

/** Status words, read back after a decode: error bits of the write pass, then per pass whether a group's outcome changed. */
export const STATUS_ERROR = 0;
export const STATUS_CHANGED = 1;
export const STATUS_WORDS = 4;
/**
 * Error bits: a code no table has; a coefficient past the 64th; data ending before the last block, or bytes after it;
 * a block out of MCU order; a workgroup of huff_sync not settled within its bound of rounds.
 */
export const ERR_CODE = 1, ERR_RANGE = 2, ERR_LENGTH = 4, ERR_ORDER = 8, ERR_SYNC = 16;

/** `n` subsequences of `bits` data bits in the scan buffer (its last data word `lastWord`), `blocks` blocks; `pass` of the sync kernel. */
export const EntropyParams = defineUniforms('EntropyParams', { n: 'u32', bits: 'u32', lastWord: 'u32', blocks: 'u32', round: 'u32', groups: 'u32' });

/** The decoder's shared functions: reading bits, one Huffman code, one step of the block/coefficient state machine. */
const decoderWgsl = /* wgsl */ `
const L: u32 = ${SUBSEQ_BITS}u;

// A decoder's position: the bit, the block within the MCU, the zigzag index of the next coefficient (0: the DC).
struct Dec { pos: u32, b: u32, z: u32 }

// One step's outcome: the zigzag index written (64: none) and its value, whether a block ended, error bits.
struct Step { k: u32, value: i32, done: bool, err: u32 }

fn info(i: u32) -> u32 { return scan[${SCAN_INFO_W}u + i]; }

// The data word i, big-endian (the bytes were uploaded in file order); words past the data read as the zero padding.
fn data_word(i: u32) -> u32 {
  let w = scan[${SCAN_DATA / 4}u + min(i, P.lastWord)];
  return (w << 24u) | ((w << 8u) & 0xff0000u) | ((w >> 8u) & 0xff00u) | (w >> 24u);
}

// The 32 bits from bit \`pos\` on, the first in the top bit.
fn peek(pos: u32) -> u32 {
  let i = pos >> 5u;
  let s = pos & 31u;
  let hi = data_word(i);
  if (s == 0u) { return hi; }
  return (hi << s) | (data_word(i + 1u) >> (32u - s));
}

// (length, symbol) of the Huffman code at the top of \`bits\` in the table at word \`tb\`: a 9-bit lookahead, then
// libjpeg's canonical search (jdhuff.c jpeg_huff_decode) from 10 bits; length 0 where no code matches.
fn huff(bits: u32, tb: u32) -> vec2u {
  let e = scan[tb + ${TBL_LUT}u + (bits >> 23u)];
  if (e != 0u) { return vec2u(e >> 8u, e & 0xffu); }
  for (var l = 10u; l <= 16u; l++) {
    let code = i32(bits >> (32u - l));
    if (code <= bitcast<i32>(scan[tb + ${TBL_MAXCODE}u + l])) {
      let at = clamp(bitcast<i32>(scan[tb + ${TBL_VALOFF}u + l]) + code, 0, 255);
      return vec2u(l, scan[tb + ${TBL_VAL}u + u32(at)] & 0xffu);
    }
  }
  return vec2u(0u, 0u);
}

// libjpeg's HUFF_EXTEND: the s-bit magnitude x as a signed value.
fn extend(x: u32, s: u32) -> i32 {
  if (s == 0u) { return 0; }
  if (x < (1u << (s - 1u))) { return i32(x) - i32(1u << s) + 1; }
  return i32(x);
}

// Decodes one Huffman symbol and its extra bits at d (decode_mcu_slow's loop body) and advances d.
fn step(d: ptr<function, Dec>) -> Step {
  var out = Step(64u, 0, false, 0u);
  let c = info(${SI_BLOCK}u + (*d).b) & 15u;
  let bits = peek((*d).pos);
  let dc = (*d).z == 0u;
  let hs = huff(bits, ${SCAN_TABLES_W}u + (2u * c + select(1u, 0u, dc)) * ${TBL_WORDS}u);
  if (hs.x == 0u) {
    // No code: libjpeg warns (the CPU stage then reports the file). Here it only has to make progress.
    out.err = ${ERR_CODE}u;
    (*d).pos += 16u;
    (*d).z = 64u;
  } else {
    let s = select(hs.y & 15u, hs.y, dc);
    let r = select(hs.y >> 4u, 0u, dc);
    var extra = 0u;
    if (s != 0u) { extra = (bits << hs.x) >> (32u - s); }
    (*d).pos += hs.x + s;
    if (dc) {
      out.k = 0u;
      out.value = extend(extra, s);
      (*d).z = 1u;
    } else if (s != 0u) {
      let k = (*d).z + r;
      if (k > 63u) {
        out.err = ${ERR_RANGE}u;
        (*d).z = 64u;
      } else {
        out.k = k;
        out.value = extend(extra, s);
        (*d).z = k + 1u;
      }
    } else if (r == 15u) {
      (*d).z += 16u; // ZRL; past the 64th coefficient the block ends, as libjpeg's loop does
    } else {
      (*d).z = 64u; // EOB
    }
  }
  if ((*d).z >= 64u) {
    (*d).z = 0u;
    (*d).b += 1u;
    if ((*d).b == info(${SI_BPM}u)) { (*d).b = 0u; }
    out.done = true;
  }
  return out;
}

fn unpack(s: vec2u) -> Dec { return Dec(s.x, s.y & 0xffu, s.y >> 8u); }
fn pack(d: Dec) -> vec2u { return vec2u(d.pos, d.b | (d.z << 8u)); }
`;

/**
 * Synchronisation (Weißenberger & Schmidt's self-synchronising parallel Huffman decoding): invocation t decodes
 * subsequence t from a start state to the first codeword boundary at or past its end, and hands that end state to
 * t + 1 as its start. Pass 0 starts every subsequence from a guess (its first bit, a block's DC), and a workgroup
 * iterates in workgroup memory until no start changes; the next passes give each workgroup the end state of the one
 * before and redo only what changes (a workgroup whose input is unchanged skips). Once a pass changes no
 * workgroup's end state, every start is the one a sequential decoder reaches (by induction from subsequence 0), and
 * each subsequence's tally is exact. `states` per subsequence: its start (pos, b | z << 8); `counts`: its tally (blocks
 * completed; the sums of its DC differences per component); `sync`: per workgroup its end state in two slots (by pass
 * parity) and the start it used.
 */
export function entropySyncWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${EntropyParams.wgsl}
@group(0) @binding(0) var<storage, read> scan: array<u32>;
@group(0) @binding(1) var<storage, read_write> states: array<vec2u>;
@group(0) @binding(2) var<storage, read_write> counts: array<vec4u>;
@group(0) @binding(3) var<storage, read_write> sync: array<vec2u>;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> P: EntropyParams;
${decoderWgsl}
const WG: u32 = ${SYNC_WG}u;
var<workgroup> ws: array<vec2u, WG>;
var<workgroup> dirty: array<u32, WG>;
var<workgroup> changed: u32;
var<workgroup> skip: u32;

// sync[] slots: end states of pass parity 0 and 1, then the starts used.
fn ends(parity: u32, g: u32) -> u32 { return parity * P.groups + g; }
fn used(g: u32) -> u32 { return 2u * P.groups + g; }

@compute @workgroup_size(WG)
fn huff_sync(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let t = g * WG + li;
  let first = P.round == 0u;
  let parity = P.round & 1u;
  if (li == 0u) {
    var s0 = vec2u(t * L, 0u);
    if (g == 0u) { s0 = vec2u(0u, 0u); } else if (!first) { s0 = sync[ends(1u - parity, g - 1u)]; }
    skip = select(0u, 1u, !first && all(sync[used(g)] == s0));
    if (skip == 1u) {
      sync[ends(parity, g)] = sync[ends(1u - parity, g)];
    } else {
      sync[used(g)] = s0;
      states[t] = s0;
    }
    ws[0] = s0;
    dirty[0] = 1u;
  } else if (t < P.n) {
    ws[li] = select(states[t], vec2u(t * L, 0u), first);
    dirty[li] = select(0u, 1u, first);
  } else {
    dirty[li] = 0u;
  }
  if (workgroupUniformLoad(&skip) == 1u) { return; }
  var end = vec2u(0u);
  var tally = vec4u(0u); // blocks completed, then the DC differences of components 0–2 (wrapping u32 sums)
  var computed = false;
  // Bounded: lane 0's start is fixed, and lane li's once lane li - 1's end is, so WG rounds settle any input; a
  // workgroup still changing after them (it cannot) fails the decode rather than spin on the device.
  var settled = false;
  for (var round = 0u; round <= WG; round++) {
    if (li == 0u) { changed = 0u; }
    let go = dirty[li] == 1u && t < P.n;
    let start = ws[li];
    dirty[li] = 0u;
    workgroupBarrier();
    if (go) {
      var d = unpack(start);
      tally = vec4u(0u);
      let stop = (t + 1u) * L;
      for (var i = 0u; d.pos < stop && i < 2u * L; i++) {
        let c = info(${SI_BLOCK}u + d.b) & 3u;
        let s = step(&d);
        if (s.k == 0u) { tally[1u + c] += bitcast<u32>(s.value); }
        if (s.done) { tally.x += 1u; }
      }
      end = pack(d);
      computed = true;
      if (li + 1u < WG && t + 1u < P.n && any(ws[li + 1u] != end)) {
        ws[li + 1u] = end;
        dirty[li + 1u] = 1u;
        changed = 1u;
      }
    }
    let more = workgroupUniformLoad(&changed);
    workgroupBarrier();
    if (more == 0u) {
      settled = true;
      break;
    }
  }
  if (!settled && li == 0u) { atomicOr(&status[${STATUS_ERROR}u], ${ERR_SYNC}u); }
  let last = li == WG - 1u || t + 1u == P.n;
  if (computed) {
    counts[t] = tally;
    if (!last) { states[t + 1u] = end; }
  }
  if (last && t < P.n) {
    let before = sync[ends(1u - parity, g)];
    let now = select(before, end, computed);
    sync[ends(parity, g)] = now;
    if ((first || any(now != before)) && g + 1u < P.groups) { atomicStore(&status[${STATUS_CHANGED}u + P.round], 1u); }
  }
}
`;
}

/** Invocations of the tally scan (one workgroup). */
export const SCAN_WG = 256;

/**
 * The exclusive prefix sum of the subsequences' tallies, in place, in one workgroup (a few hundred thousand
 * subsequences at most: each invocation sums a contiguous run, the runs' sums are scanned in workgroup memory, and
 * each run is walked again): each subsequence's first block and the DC predictors it starts with — one dispatch
 * where a device-wide scan per quantity took several.
 */
export function entropyScanWgsl(): string {
  return /* wgsl */ `
${EntropyParams.wgsl}
@group(0) @binding(0) var<storage, read_write> counts: array<vec4u>;
@group(0) @binding(1) var<uniform> P: EntropyParams;
var<workgroup> lanes: array<vec4u, ${SCAN_WG}>;

@compute @workgroup_size(${SCAN_WG})
fn tally_scan(@builtin(local_invocation_index) li: u32) {
  let per = (P.n + ${SCAN_WG - 1}u) / ${SCAN_WG}u;
  let a = min(li * per, P.n);
  let b = min(a + per, P.n);
  var sum = vec4u(0u);
  for (var i = a; i < b; i++) { sum += counts[i]; }
  lanes[li] = sum;
  ${workgroupScanWgsl('lanes', 'li', SCAN_WG, 'vec4u(0u)')}
  var run = lanes[li] - sum;
  for (var i = a; i < b; i++) {
    let v = counts[i];
    counts[i] = run;
    run += v;
  }
}
`;
}

/**
 * The write pass: invocation t decodes subsequence t again from its synchronised start, with its first block and DC
 * predictors from the scanned tallies (`starts`), and puts each nonzero coefficient in its block of the plain form
 * (atomicOr into zeroed words: a block split between two subsequences shares words between two invocations); the DC
 * values are the running sums of the differences per component, as libjpeg's last_dc_val (cut to 16 bits as its
 * JCOEF store is). The last subsequence decodes until the last block; the data must end within the byte after it.
 */
export function entropyWriteWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${EntropyParams.wgsl}
@group(0) @binding(0) var<storage, read> scan: array<u32>;
@group(0) @binding(1) var<storage, read> states: array<vec2u>;
@group(0) @binding(2) var<storage, read> starts: array<vec4u>;
@group(0) @binding(3) var<storage, read_write> coefs: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> P: EntropyParams;
${decoderWgsl}

fn zigzag(k: u32) -> u32 { return (info(${SI_ZIGZAG}u + (k >> 2u)) >> ((k & 3u) * 8u)) & 0xffu; }

@compute @workgroup_size(${WRITE_WG})
fn huff_write(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = gid.x + gid.y * nwg.x * ${WRITE_WG}u;
  if (t >= P.n) { return; }
  var d = unpack(states[t]);
  let start = starts[t];
  var blk = start.x;
  var pred = start.yzw;
  let stop = (t + 1u) * L;
  let last = t + 1u == P.n;
  let bpm = info(${SI_BPM}u);
  let mcuCols = info(${SI_MCU_COLS}u);
  var err = 0u;
  for (var i = 0u; blk < P.blocks && (last || d.pos < stop) && i < 4u * L; i++) {
    if (d.pos > P.bits) { err |= ${ERR_LENGTH}u; break; }
    let mcu = blk / bpm;
    if (blk % bpm != d.b) { err |= ${ERR_ORDER}u; break; }
    let desc = info(${SI_BLOCK}u + d.b);
    let s = step(&d);
    err |= s.err;
    let c = desc & 3u;
    var value = bitcast<u32>(s.value);
    if (s.k == 0u) {
      pred[c] += value;
      value = pred[c];
    }
    if (s.k < 64u && value != 0u) {
      let ci = ${SI_COMP}u + c * ${SI_COMP_WORDS}u;
      let h = info(ci);
      let row = (mcu / mcuCols) * info(ci + 1u) + ((desc >> 8u) & 15u);
      let col = (mcu % mcuCols) * h + ((desc >> 4u) & 15u);
      if (info(ci + 7u) == 1u && row < info(ci + 3u) && col < info(ci + 2u)) {
        let nat = zigzag(s.k);
        let word = info(ci + 5u) + (row * info(ci + 4u) + col) * 32u + (nat >> 1u);
        atomicOr(&coefs[word], (value & 0xffffu) << ((nat & 1u) * 16u));
      }
    }
    if (s.done) {
      blk += 1u;
      // The last block: only the padding of its byte may follow (libjpeg warns of extraneous bytes otherwise).
      if (blk == P.blocks && (d.pos > P.bits || P.bits - d.pos >= 8u)) { err |= ${ERR_LENGTH}u; }
    }
  }
  if (last && blk < P.blocks) { err |= ${ERR_LENGTH}u; }
  if (err != 0u) { atomicOr(&status[${STATUS_ERROR}u], err); }
}

`;
}

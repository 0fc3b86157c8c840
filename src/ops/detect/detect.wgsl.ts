import { grayWgsl } from '../../core/gpu/wgsl/gray.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { workgroupScanWgsl } from '../../core/gpu/wgsl/scan.js';
import { u64Wgsl } from '../../core/gpu/wgsl/u64.js';
import { fixedWords, type CompiledClassifier } from './compiled.js';

/**
 * The detection kernels: one WGSL module, entry points specialised by override constants (weak classifier
 * ranges, list indices, capacities).
 *
 * Data: `levels` holds LEVEL_WORDS words per pyramid level (see LEVEL_FIELDS); `ii` the integral images of all
 * levels, packed; `weak` WEAK_WORDS words per weak classifier (feature x|y<<8|w<<16|h<<24, reject lo/hi, accept
 * lo/hi, reset); `tables` 256 responses per weak classifier as 64-bit fixed point (lo, hi). Sums are exact
 * two's-complement 64-bit integers, so the order of additions never matters and GPU == CPU == OpenCV.
 *
 * Candidate lists hold vec4u(level, x | y << 16, sum lo, sum hi); `counters` holds list sizes at [j], windows
 * dropped for want of room at [DROPPED + j], detections at [DETS] (dropped: [DETS + 1]) and, when calibrating,
 * the number of windows each weak classifier rejected at [HIST + i] and of windows scanned after stage 0 at [HIST − 1].
 */

/** Words per level in the level table, and their meaning. */
export const LEVEL_WORDS = 16;
export const LEVEL_FIELDS = {
  iiOff: 0, stride: 1, width: 2, height: 3, step: 6, winStart: 7, perRow: 8,
  cxOff: 9, cyOff: 10, maskOff: 11, maskStride: 12, rowStart: 13, blockStart: 14, // 4, 5, 15: unused
} as const;
export const WEAK_WORDS = 8;
/** Counter slots. */
export const COUNTERS = { DROPPED: 8, DETS: 16, HIST: 32 } as const;
/** The most reduction kernels (lists) a plan may have; counter slot LIVE_LIST holds the length of stage 0's survivors. */
export const MAX_LISTS = 7;
export const LIVE_LIST = 7;

/**
 * The module for one plan: the level table as a uniform array (`levels` levels), and `evalRange` — the
 * evaluation of the weak classifiers a kernel runs, generated with their features and thresholds as literals
 * (bakedEvaluation) so that a window's 16 integral reads of a feature issue at once instead of waiting on a
 * feature record.
 */
export function detectWgsl(levels: number, evalRange: string): string {
  return /* wgsl */ `
${gridWgsl}
${grayWgsl}
${u64Wgsl}
override FROM: u32 = 0u;      // first weak classifier this kernel evaluates
override TO: u32 = 0u;        // one past the last
override COUNT: u32 = 1u;     // weak classifiers in the classifier
override FIRST: u32 = 1u;     // end of the first stage (staged cascades)
override STAGED: bool = true; // OpenCV's scan rule and the stage-0 mask
override LIST_IN: u32 = 0u;   // list read (list kernels)
override LIST_OUT: u32 = 0u;  // list written
override CAP_IN: u32 = 0u;
override CAP_OUT: u32 = 0u;
override CAP_DETS: u32 = 0u;
override NLEVELS: u32 = 1u;
override TOTAL: u32 = 0u;     // windows (window kernels), rows (row scan) or column blocks (column scan)
override SRC_W: u32 = 1u;
override SRC_H: u32 = 1u;
override CALIBRATE: bool = false;
override CHANNELS: u32 = 1u;  // input channels: 1 gray, 3 RGB, 4 RGBA

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<uniform> levels: array<vec4u, ${4 * levels}>;
@group(0) @binding(2) var<storage, read> coefs: array<u32>;
@group(0) @binding(3) var<storage, read_write> ii: array<u32>;
@group(0) @binding(4) var<storage, read> weak: array<u32>;
@group(0) @binding(5) var<storage, read> tables: array<vec2u>;
@group(0) @binding(6) var<storage, read_write> mask: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> list_in: array<vec4u>;
@group(0) @binding(8) var<storage, read_write> list_out: array<vec4u>;
@group(0) @binding(9) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> dets: array<vec4u>;
@group(0) @binding(11) var<storage, read_write> accepted: array<atomic<u32>>;
@group(0) @binding(12) var<storage, read_write> live: array<u32>;

fn lv(l: u32, f: u32) -> u32 { return levels[l * 4u + (f >> 2u)][f & 3u]; }

// The level whose range [start field of l, of l + 1) holds i: a binary search over the level table.
fn level_of(i: u32, field: u32) -> u32 {
  var lo = 0u;
  var hi = NLEVELS - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) >> 1u;
    if (lv(mid, field) <= i) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

fn slt64(a: vec2u, b: vec2u) -> bool {
  return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x < b.x);
}

fn src_byte(i: u32) -> u32 { return (src[i >> 2u] >> ((i & 3u) << 3u)) & 255u; }

// An input pixel, gray: RGB(A) input is converted as cv2.cvtColor(RGB2GRAY) does (gray_of, 15-bit fixed point).
fn src_px(x: u32, y: u32) -> u32 {
  let i = (y * SRC_W + x) * CHANNELS;
  if (CHANNELS == 1u) { return src_byte(i); }
  return gray_of(src_byte(i), src_byte(i + 1u), src_byte(i + 2u));
}

// One pixel of a level: bit-exact bilinear (8-bit weights, OpenCV's INTER_LINEAR_EXACT) from the input.
fn level_px(cx: u32, cy: u32) -> u32 {
  let ox = cx >> 9u; let wx = cx & 511u;
  let oy = cy >> 9u; let wy = cy & 511u;
  let ox1 = min(ox + 1u, SRC_W - 1u);
  let oy1 = min(oy + 1u, SRC_H - 1u);
  let h0 = (256u - wx) * src_px(ox, oy) + wx * src_px(ox1, oy);
  let h1 = (256u - wx) * src_px(ox, oy1) + wx * src_px(ox1, oy1);
  return min(255u, ((256u - wy) * h0 + wy * h1 + 32768u) >> 16u);
}

var<workgroup> scan: array<u32, 256>;

// Row pass of the integral pyramid, one workgroup per level row, tiles of 1024 pixels: each thread resizes 4
// neighbouring pixels on the fly (each computed once), their sum is prefix-summed across the workgroup in
// workgroup memory, and the 4 running sums go to integral row y + 1 after the total of the tiles before (row 0
// and column 0 are zeros). Neighbouring threads write neighbouring 16-byte runs.
@compute @workgroup_size(256)
fn integral_rows(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let g0 = linear_group_id(wid, nwg);
  let valid = g0 < TOTAL;
  let g = min(g0, TOTAL - 1u);
  let l = level_of(g, ${LEVEL_FIELDS.rowStart}u);
  let y = g - lv(l, ${LEVEL_FIELDS.rowStart}u);
  let w = lv(l, ${LEVEL_FIELDS.width}u);
  let stride = lv(l, ${LEVEL_FIELDS.stride}u);
  let cy = coefs[lv(l, ${LEVEL_FIELDS.cyOff}u) + y];
  let cx0 = lv(l, ${LEVEL_FIELDS.cxOff}u);
  let row = lv(l, ${LEVEL_FIELDS.iiOff}u) + (y + 1u) * stride;
  var carry = 0u;
  let tiles = (w + 1023u) / 1024u;
  for (var tile = 0u; tile < tiles; tile++) {
    let x0 = tile * 1024u + 4u * t;
    var p = vec4u(0u);
    for (var i = 0u; i < 4u; i++) { if (x0 + i < w) { p[i] = level_px(coefs[cx0 + x0 + i], cy); } }
    let own = p.x + p.y + p.z + p.w;
    scan[t] = own;
    ${workgroupScanWgsl('scan', 't', 256)}
    if (valid) {
      var run = carry + scan[t] - own;
      for (var i = 0u; i < 4u; i++) {
        run += p[i];
        if (x0 + i < w) { ii[row + x0 + i + 1u] = run; }
      }
    }
    carry += scan[255];
    workgroupBarrier();
  }
  if (valid && t == 0u) { ii[row] = 0u; }
  if (valid && y == 0u) {
    for (var x = t; x < stride; x += 256u) { ii[lv(l, ${LEVEL_FIELDS.iiOff}u) + x] = 0u; }
  }
}

var<workgroup> seg: array<u32, 256>;

// Column pass: a workgroup takes 8 columns of one level (a 32-byte sector per row), its 32 rows of threads 32
// segments of the rows; segment totals are scanned in workgroup memory, then each segment is prefix-summed in
// place. Short serial walks (h/32 rows twice) keep enough threads in flight.
@compute @workgroup_size(8, 32)
fn integral_cols(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let g = min(linear_group_id(wid, nwg), TOTAL - 1u);
  let l = level_of(g, ${LEVEL_FIELDS.blockStart}u);
  let blk = g - lv(l, ${LEVEL_FIELDS.blockStart}u);
  let w = lv(l, ${LEVEL_FIELDS.width}u);
  let h = lv(l, ${LEVEL_FIELDS.height}u);
  let stride = lv(l, ${LEVEL_FIELDS.stride}u);
  let x = 1u + blk * 8u + lid.x;
  let len = (h + 31u) / 32u;
  let r0 = 1u + min(lid.y * len, h);
  let r1 = 1u + min((lid.y + 1u) * len, h);
  let base = lv(l, ${LEVEL_FIELDS.iiOff}u) + x;
  let live = x <= w && linear_group_id(wid, nwg) < TOTAL;
  var total = 0u;
  if (live) { for (var r = r0; r < r1; r++) { total += ii[base + r * stride]; } }
  seg[lid.y * 8u + lid.x] = total;
  workgroupBarrier();
  var run = 0u;
  for (var s = 0u; s < lid.y; s++) { run += seg[s * 8u + lid.x]; }
  if (live) {
    for (var r = r0; r < r1; r++) {
      run += ii[base + r * stride];
      ii[base + r * stride] = run;
    }
  }
}

// The MB-LBP code of weak classifier k's feature for the window whose top-left integral index is o.
fn lbp(k: u32, o: u32, s: u32) -> u32 {
  let f = weak[k * ${WEAK_WORDS}u];
  return lbp_at(o + ((f >> 8u) & 255u) * s + (f & 255u), s, (f >> 16u) & 255u, f >> 24u);
}

// The MB-LBP code of the 3×3 cells of fw×fh whose top-left corner is integral index a (row stride s).
fn lbp_at(a: u32, s: u32, fw: u32, fh: u32) -> u32 {
  let b = a + fh * s; let c = b + fh * s; let d = c + fh * s;
  let p00 = ii[a]; let p01 = ii[a + fw]; let p02 = ii[a + 2u * fw]; let p03 = ii[a + 3u * fw];
  let p10 = ii[b]; let p11 = ii[b + fw]; let p12 = ii[b + 2u * fw]; let p13 = ii[b + 3u * fw];
  let p20 = ii[c]; let p21 = ii[c + fw]; let p22 = ii[c + 2u * fw]; let p23 = ii[c + 3u * fw];
  let p30 = ii[d]; let p31 = ii[d + fw]; let p32 = ii[d + 2u * fw]; let p33 = ii[d + 3u * fw];
  // Cell sums wrap like the integral itself; the true sums are small, so the i32 differences are exact.
  let cc = bitcast<i32>(p11 - p12 - p21 + p22);
  return select(0u, 128u, bitcast<i32>(p00 - p01 - p10 + p11) >= cc)
       | select(0u, 64u, bitcast<i32>(p01 - p02 - p11 + p12) >= cc)
       | select(0u, 32u, bitcast<i32>(p02 - p03 - p12 + p13) >= cc)
       | select(0u, 16u, bitcast<i32>(p12 - p13 - p22 + p23) >= cc)
       | select(0u, 8u, bitcast<i32>(p22 - p23 - p32 + p33) >= cc)
       | select(0u, 4u, bitcast<i32>(p21 - p22 - p31 + p32) >= cc)
       | select(0u, 2u, bitcast<i32>(p20 - p21 - p30 + p31) >= cc)
       | select(0u, 1u, bitcast<i32>(p10 - p11 - p20 + p21) >= cc);
}

fn response(k: u32, o: u32, s: u32) -> vec2u { return tables[k * 256u + lbp(k, o, s)]; }
fn reject_t(k: u32) -> vec2u { return vec2u(weak[k * ${WEAK_WORDS}u + 1u], weak[k * ${WEAK_WORDS}u + 2u]); }
fn accept_t(k: u32) -> vec2u { return vec2u(weak[k * ${WEAK_WORDS}u + 3u], weak[k * ${WEAK_WORDS}u + 4u]); }
fn resets(k: u32) -> bool { return weak[k * ${WEAK_WORDS}u + 5u] != 0u; }

// Outcome of evaluating a range of weak classifiers: 0 undecided, 1 rejected, 2 accepted; the sum; and the
// deciding classifier.
struct Eval { state: u32, sum: vec2u, at: u32 }

${evalRange}

fn emit(level: u32, xy: u32, sum: vec2u) {
  let i = atomicAdd(&counters[${COUNTERS.DETS}u], 1u);
  if (i < CAP_DETS) { dets[i] = vec4u(level, xy, sum.x, sum.y); } else { atomicAdd(&counters[${COUNTERS.DETS + 1}u], 1u); }
}

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;

// The block-aggregated compaction of Herout et al.: each kept item gets a slot in the list whose length is
// counters[slot], with one global atomic per workgroup; the order inside the list is arbitrary. Called by every
// thread (uniformly); returns the item's index in the list (meaningful where keep).
fn compact(keep: bool, t: u32, counter: u32) -> u32 {
  if (t == 0u) { atomicStore(&wg_count, 0u); }
  workgroupBarrier();
  var slot = 0u;
  if (keep) { slot = atomicAdd(&wg_count, 1u); }
  workgroupBarrier();
  if (t == 0u) {
    let n = atomicLoad(&wg_count);
    wg_base = select(0u, atomicAdd(&counters[counter], n), n > 0u);
  }
  return workgroupUniformLoad(&wg_base) + slot;
}

// Appends a survivor to list LIST_OUT (counted as dropped when the list is full).
fn append(keep: bool, c: vec4u, t: u32) {
  let i = compact(keep, t, LIST_OUT);
  if (keep) {
    if (i < CAP_OUT) { list_out[i] = c; } else { atomicAdd(&counters[${COUNTERS.DROPPED}u + LIST_OUT], 1u); }
  }
}

struct Window { level: u32, x: u32, y: u32, xi: u32, row: u32, o: u32, s: u32 }

fn window_of(g: u32) -> Window {
  let l = level_of(g, ${LEVEL_FIELDS.winStart}u);
  let local = g - lv(l, ${LEVEL_FIELDS.winStart}u);
  let per = lv(l, ${LEVEL_FIELDS.perRow}u);
  let step = lv(l, ${LEVEL_FIELDS.step}u);
  let row = local / per;
  let xi = local - row * per;
  let s = lv(l, ${LEVEL_FIELDS.stride}u);
  return Window(l, xi * step, row * step, xi, row, lv(l, ${LEVEL_FIELDS.iiOff}u) + row * step * s + xi * step, s);
}

fn mask_word(w: Window, word: u32) -> u32 {
  return atomicLoad(&mask[lv(w.level, ${LEVEL_FIELDS.maskOff}u) + w.row * lv(w.level, ${LEVEL_FIELDS.maskStride}u) + word]);
}

// OpenCV's scan evaluates a window unless its left neighbour was evaluated and rejected by the first stage.
// Every window after one that passed stage 0 is evaluated, so a window is evaluated iff the run of stage-0
// rejections just before it has even length.
fn scanned(w: Window) -> bool {
  var run = 0u;
  var word = w.xi >> 5u;
  var bits = w.xi & 31u;
  loop {
    if (bits > 0u) {
      let m = mask_word(w, word) << (32u - bits); // the bits before the window, highest first
      let ones = countLeadingZeros(~m);
      run += min(ones, bits);
      if (ones < bits) { break; }
    }
    if (word == 0u) { break; }
    word -= 1u;
    bits = 32u;
  }
  return (run & 1u) == 0u;
}

// Stage 0 of a staged cascade for every window: the mask of windows it rejects (and, when calibrating, counts).
@compute @workgroup_size(64)
fn stage0(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let g = linear_group_id(wid, nwg) * 64u + t;
  var passed = false;
  if (g < TOTAL) {
    let w = window_of(g);
    let e = eval_range(w.o, w.s, vec2u(0u));
    if (e.state == 1u) {
      let m = lv(w.level, ${LEVEL_FIELDS.maskOff}u) + w.row * lv(w.level, ${LEVEL_FIELDS.maskStride}u) + (w.xi >> 5u);
      atomicOr(&mask[m], 1u << (w.xi & 31u));
      if (CALIBRATE) { atomicAdd(&counters[${COUNTERS.HIST}u + e.at], 1u); }
    }
    passed = e.state != 1u;
  }
  // The windows that pass stage 0, compacted: the next kernel runs a thread per survivor, not per window.
  let i = compact(passed, t, ${LIVE_LIST}u);
  if (passed) { live[i] = g; }
}

var<workgroup> wg_n: u32;

// The length of list \`slot\` (at most \`cap\`), read once by the workgroup (a uniform value).
fn list_length(t: u32, slot: u32, cap: u32) -> u32 {
  if (t == 0u) { wg_n = min(atomicLoad(&counters[slot]), cap); }
  return workgroupUniformLoad(&wg_n);
}

// The kernels below that read a list are dispatched for the list's capacity (the final one at most
// FINAL_GROUPS workgroups, looping), the list's length read on the GPU: no indirect dispatch, whose validation
// in Dawn cost ~0.2 ms of host time per dispatch, and no kernels to turn list lengths into dispatch sizes.
// The per-thread kernels read the length without a barrier before their work: on lavapipe, code after a
// barrier (or a whole workgroup leaving after one) ran many times slower.

// A thread per window OpenCV's scan evaluates — for a staged cascade, per stage-0 survivor (the live list)
// that the scan reaches; for plain WaldBoost, every window: weak classifiers [FROM, TO); survivors go to list
// LIST_OUT, or are detections when TO is the end.
@compute @workgroup_size(64)
fn windows(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = linear_group_id(wid, nwg) * 64u + t;
  var keep = false;
  var c = vec4u(0u);
  var n = TOTAL;
  if (STAGED) { n = min(atomicLoad(&counters[${LIVE_LIST}u]), TOTAL); }
  if (i < n) {
    var g = i;
    if (STAGED) { g = live[i]; }
    let w = window_of(g);
    var scan_hit = true;
    if (STAGED) { scan_hit = scanned(w); }
    if (scan_hit) {
      if (CALIBRATE) { atomicAdd(&counters[${COUNTERS.HIST - 1}u], 1u); }
      let e = eval_range(w.o, w.s, vec2u(0u));
      if (CALIBRATE && e.state == 1u) { atomicAdd(&counters[${COUNTERS.HIST}u + e.at], 1u); }
      if (e.state == 2u && !CALIBRATE) { emit(w.level, w.x | (w.y << 16u), e.sum); }
      keep = e.state == 0u;
      c = vec4u(w.level, w.x | (w.y << 16u), e.sum.x, e.sum.y);
    }
  }
  if (TO < COUNT) { append(keep, c, t); }
}

fn candidate_window(c: vec4u) -> vec2u {
  let x = c.y & 65535u; let y = c.y >> 16u;
  let s = lv(c.x, ${LEVEL_FIELDS.stride}u);
  return vec2u(lv(c.x, ${LEVEL_FIELDS.iiOff}u) + y * s + x, s);
}

// A thread per candidate of list LIST_IN: weak classifiers [FROM, TO), survivors to list LIST_OUT.
@compute @workgroup_size(64)
fn candidates(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = linear_group_id(wid, nwg) * 64u + t;
  let n = min(atomicLoad(&counters[LIST_IN]), CAP_IN);
  var keep = false;
  var c = vec4u(0u);
  if (i < n) {
    c = list_in[i];
    let ws = candidate_window(c);
    let e = eval_range(ws.x, ws.y, c.zw);
    if (e.state == 2u) { emit(c.x, c.y, e.sum); }
    keep = e.state == 0u;
    c = vec4u(c.x, c.y, e.sum.x, e.sum.y);
  }
  append(keep, c, t);
}

var<workgroup> resp: array<vec2u, 64>;
var<workgroup> verdict: u32;
var<workgroup> carry: vec2u;

// A workgroup per candidate of list LIST_IN (each workgroup takes every nwg-th): its 64 threads compute 64
// responses at once, one thread applies them in order (exact sums: the order of additions is free, the order of
// decisions is kept).
@compute @workgroup_size(64)
fn final_pass(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let n = list_length(t, LIST_IN, CAP_IN);
  for (var i = linear_group_id(wid, nwg); i < n; i += nwg.x * nwg.y) {
    final_one(i, t);
    workgroupBarrier(); // thread 0 is done with this candidate's verdict and sum before the next one's
  }
}

fn final_one(i: u32, t: u32) {
  let c = list_in[i];
  let ws = candidate_window(c);
  if (t == 0u) { verdict = 0u; carry = c.zw; }
  for (var k0 = FROM; k0 < COUNT; k0 += 64u) {
    let k = k0 + t;
    if (k < COUNT) { resp[t] = response(k, ws.x, ws.y); }
    workgroupBarrier();
    if (t == 0u) {
      var sum = carry;
      let end = min(k0 + 64u, COUNT);
      for (var j = k0; j < end; j++) {
        sum = add64(sum, resp[j - k0]);
        if (slt64(sum, reject_t(j))) { verdict = 1u; break; }
        if (!slt64(sum, accept_t(j))) { verdict = 2u; break; }
        if (resets(j) && j + 1u < COUNT) { sum = vec2u(0u); }
      }
      carry = sum;
      if (verdict == 0u && end == COUNT) { verdict = 2u; }
    }
    let v = workgroupUniformLoad(&verdict);
    if (v != 0u) { break; }
  }
  if (t == 0u && verdict == 2u) { emit(c.x, c.y, carry); }
}

// Mining (a plan made with marks): the frame's detections as one bit per window, in window order (level, row,
// x), so that the host reads the device's count and a bit per window instead of a record per accepted window.
@compute @workgroup_size(64)
fn mark_accepted(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = linear_group_id(wid, nwg) * 64u + t;
  if (i >= min(atomicLoad(&counters[${COUNTERS.DETS}u]), CAP_DETS)) { return; }
  let d = dets[i];
  let step = lv(d.x, ${LEVEL_FIELDS.step}u);
  let g = lv(d.x, ${LEVEL_FIELDS.winStart}u) + ((d.y >> 16u) / step) * lv(d.x, ${LEVEL_FIELDS.perRow}u) + (d.y & 0xffffu) / step;
  atomicOr(&accepted[g >> 5u], 1u << (g & 31u));
}
`;
}

/** A threshold on the fixed-point grid as a WGSL vec2u literal (lo, hi). */
function fixedLiteral(v: number, cc: CompiledClassifier): string {
  const [lo, hi] = fixedWords(v, cc.fixed);
  return `vec2u(${lo}u, ${hi}u)`;
}

/** Ranges longer than this are evaluated by a loop over the weak classifier records (compile time). */
export const MAX_UNROLLED = 48;

/**
 * `fn eval_range(o, s, start) -> Eval` for weak classifiers [from, to): unrolled, with each feature's position
 * and cell size and each threshold as literals (the responses stay in the `tables` buffer), for ranges up to
 * MAX_UNROLLED; longer ranges (calibration, a schedule of one long kernel) loop over the `weak` records, since
 * unrolling hundreds of classifiers makes some compilers (lavapipe's LLVM) take minutes. Reaching `to` leaves the
 * window undecided, or accepted when `to` is the end of the classifier. `usesWeak`: the code reads `weak`.
 */
export function bakedEvaluation(cc: CompiledClassifier, from: number, to: number): { code: string; usesWeak: boolean } {
  const end = `return Eval(${to === cc.count ? 2 : 0}u, sum, ${to}u);`;
  if (to - from > MAX_UNROLLED) {
    return {
      usesWeak: true,
      code: `fn eval_range(o: u32, s: u32, start: vec2u) -> Eval {
  var sum = start;
  for (var k = ${from}u; k < ${to}u; k++) {
    sum = add64(sum, response(k, o, s));
    if (slt64(sum, reject_t(k))) { return Eval(1u, sum, k); }
    if (!slt64(sum, accept_t(k))) { return Eval(2u, sum, k); }
    if (resets(k) && k + 1u < ${cc.count}u) { sum = vec2u(0u); }
  }
  ${end}
}`,
    };
  }
  const lines = ['fn eval_range(o: u32, s: u32, start: vec2u) -> Eval {', '  var sum = start;'];
  // An empty range still names the buffers every window kernel is given (layout 'auto' keeps used bindings only).
  if (from >= to) lines.push('  _ = tables[0];', '  _ = ii[0];');
  for (let k = from; k < to; k++) {
    const [x, y, w, h] = cc.features.subarray(4 * k, 4 * k + 4);
    lines.push(`  sum = add64(sum, tables[${256 * k}u + lbp_at(o + ${y}u * s + ${x}u, s, ${w}u, ${h}u)]);`);
    if (cc.reject[k] !== -Infinity) lines.push(`  if (slt64(sum, ${fixedLiteral(cc.reject[k], cc)})) { return Eval(1u, sum, ${k}u); }`);
    if (cc.accept[k] !== Infinity) lines.push(`  if (!slt64(sum, ${fixedLiteral(cc.accept[k], cc)})) { return Eval(2u, sum, ${k}u); }`);
    if (cc.reset[k] && k + 1 < cc.count) lines.push('  sum = vec2u(0u);');
  }
  lines.push(`  ${end}`, '}');
  return { code: lines.join('\n'), usesWeak: false };
}

import { exactFloatWgsl } from '../../core/gpu/wgsl/exact-float.js';
import { reflect101Wgsl } from '../../core/gpu/wgsl/border.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import type { ClaheBorder, ClaheDtype } from './plan.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';

/** The interpolation kernel's parameters; `zero` is 0, a value the kernel cannot know (exact-float.ts). */
export const InterpolateParams = defineUniforms('Params', { width: 'u32', n: 'u32', tiles_x: 'u32', words: 'u32', zero: 'u32' });
export const WindowParams = defineUniforms('Params', { width: 'u32', height: 'u32' });

/**
 * CLAHE kernels, generated per variant. They mirror cpu-kernels.ts operation for operation:
 *
 * Tiled (OpenCV semantics), three kernels recorded back to back, no host round trip:
 * - tile_hist: tile histograms over the REFLECT_101-padded image, each tile cut into row slices so that
 *   even an 8×8 grid gives the GPU ~1000 workgroups; a dispatch counts tiles tile0… of the grid (a band, when
 *   the histograms or the image exceed one binding) from image rows row0… bound (a copied slab of rows);
 * - tile_lut: one workgroup per tile: OpenCV's clip / batch / residual redistribution, a workgroup scan,
 *   LUT = round(f32(cumsum) · scale), packed 4 u8 (2 u16) entries per word;
 * - tile_cells (8-bit): the four LUTs of each interpolation cell interleaved, one word per (cell, value);
 * - interpolate: one invocation per output word (4 u8 or 2 u16 pixels, so stores never race), bilinear
 *   between the 4 nearest tiles' LUTs with OpenCV's float32 expression and order. Weights come from the host
 *   tables of plan.ts; every product passes through `rounded()` before its addition, so no compiler can
 *   contract it into an FMA (the H100's driver did, by 1 LSB in a few pixels, with a plainer guard).
 * 8-bit with the image in one binding (the default: gpu.ts ClaheTiledVariant) replaces them with
 * tile_hist_private (per-slice histograms stored whole: no clear) → cell_luts (tile_lut and tile_cells in one
 * dispatch) → interpolate_strips (an invocation per few pixels of a row over several rows).
 *
 * Sliding window (8-bit; a window of radius R centred on every pixel, mirrored borders):
 * - window_naive: one invocation per pixel recounts its (2R+1)² window into a private histogram of packed
 *   16-bit counts (the CUDA project's form) — O(R²) per pixel.
 * - window_columns: Perreault–Hébert column histograms, bin-parallel. A workgroup of 64 invocations owns an
 *   output tile TW columns wide and TH rows high; invocation t owns bins 4t…4t+3. Workgroup memory holds the
 *   histogram of each of the TW + 2R columns over the current 2R+1 rows (u8 counts, 4 per word: one word per
 *   column and invocation). Going down a row changes each column by one pixel out and one in (O(1)); going
 *   right changes invocation t's 4 window counts by one column in, one column out (O(1), two word reads);
 *   the window at the start of each row moves down with the histogram of its 2R+1 entering and leaving
 *   pixels (workgroup atomics, spread over the invocations); each pixel's clipped sums S and P reduce 64
 *   packed partials. Per pixel the work is independent of R; only the per-tile column build grows with it.
 * Both evaluate the LUT value at the centre pixel with windowLutValue's closed form (cpu-kernels.ts).
 */

const f32Bits = (x: number): string => `bitcast<f32>(${new Uint32Array(new Float32Array([x]).buffer)[0]}u)`;

const pixelReaders = (dtype: ClaheDtype): string => dtype === 'uint8'
  ? 'fn px(p: u32) -> u32 { return (src[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu; }'
  : 'fn px(p: u32) -> u32 { return (src[p >> 1u] >> ((p & 1u) * 16u)) & 0xffffu; }';



/** Pixels (or LUT entries) per u32 word, and their width, for each dtype. */
function packing(dtype: ClaheDtype): { bins: number; epw: number; bits: number; mask: string } {
  return dtype === 'uint8' ? { bins: 256, epw: 4, bits: 8, mask: '0xffu' } : { bins: 65536, epw: 2, bits: 16, mask: '0xffffu' };
}

/** The tile kernels' parameters (tiles: in this band; tile0, row0: the band's first tile and input row). */
/**
 * A tile-histogram kernel's slice (workgroup `id`: rows [r0, r0 + rows) of tile t, whose grid index is `tile`) and
 * its top-left pixel (x0, y0); returns where the dispatch covers more workgroups than slices.
 */
const sliceOfTile = (tile: string): string => `  let id = linear_group_id(wid, nwg);
  if (id >= P.tiles * P.slices) { return; }
  let t = id / P.slices;
  let r0 = (id - t * P.slices) * P.slice_rows;
  let rows = min(P.slice_rows, P.tile_h - min(r0, P.tile_h));
  let gt = ${tile};
  let ty = gt / P.tiles_x;
  let x0 = (gt - ty * P.tiles_x) * P.tile_w;
  let y0 = ty * P.tile_h + r0;`;

/** A slice that touches the REFLECT_101 padding: each pixel mapped back into the image (index `at`), then `count`. */
const paddedPixels = (at: string, count: string): string => `    // Touches the REFLECT_101 padding: pixels map back into the image one by one.
    for (var i = li; i < P.tile_w * rows; i += WG) {
      let r = i / P.tile_w;
      let x = reflect101(x0 + i - r * P.tile_w, P.width);
      let y = reflect101(y0 + r, P.height);
      let p = ${at};
      ${count};
    }`;

/**
 * The four tiles an interpolation cell blends (top-left, top-right, bottom-left, bottom-right; edge cells repeat
 * their row or column of tiles): cell (cx, cy) of the (tx + 1) × (ty + 1) cells.
 */
const cellTilesWgsl = `fn cell_tiles(cell: u32, tx: u32, ty: u32) -> vec4u {
  let cy = cell / (tx + 1u);
  let cx = cell - cy * (tx + 1u);
  let r1 = (max(cy, 1u) - 1u) * tx;
  let r2 = min(cy, ty - 1u) * tx;
  let c1 = max(cx, 1u) - 1u;
  let c2 = min(cx, tx - 1u);
  return vec4u(r1 + c1, r1 + c2, r2 + c1, r2 + c2);
}`;

export const TileParams = defineUniforms('Params', {
  width: 'u32', height: 'u32', tiles_x: 'u32', tile_w: 'u32', tile_h: 'u32', clip: 'u32', scale: 'f32', tiles: 'u32', slices: 'u32', slice_rows: 'u32', tile0: 'u32', row0: 'u32',
});

/**
 * tile_hist: histograms of all tiles, each tile split into `slices` row slices with a workgroup each (a few
 * tiles alone cannot fill a large GPU: 64 workgroups for an 8×8 grid). 8-bit slices count in workgroup
 * atomics and add their non-zero bins to the tile's global histogram; 16-bit slices count in it directly.
 */
export function tileHistWgsl(dtype: ClaheDtype): string {
  const { bins, epw, bits, mask } = packing(dtype);
  const counting = dtype === 'uint8'
    ? `var<workgroup> local: array<atomic<u32>, 256>;
fn count(t: u32, v: u32) { atomicAdd(&local[v], 1u); }
fn flush(t: u32, li: u32) {
  workgroupBarrier();
  for (var b = li; b < 256u; b += WG) {
    let c = atomicLoad(&local[b]);
    if (c != 0u) { atomicAdd(&hist[t * 256u + b], c); }
  }
}`
    : `fn count(t: u32, v: u32) { atomicAdd(&hist[t * BINS + v], 1u); }
fn flush(t: u32, li: u32) {}`;
  return /* wgsl */ `
${gridWgsl}
${reflect101Wgsl}
${TileParams.wgsl}
const WG: u32 = 256u;
const BINS: u32 = ${bins}u;
const PPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> P: Params;
${pixelReaders(dtype)}
${counting}

@compute @workgroup_size(WG)
fn tile_hist(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  // t: the tile within this dispatch's band (its histogram); gt: the tile in the grid.
${sliceOfTile('P.tile0 + t')}
  if (x0 + P.tile_w <= P.width && y0 + rows <= P.height) {
    // Inside the image: whole words, every invocation busy even when a tile row is only a few words long
    // (the (row, word) pairs are flattened; a row spans at most SPAN words whatever its alignment).
    let span = (P.tile_w + PPW - 1u) / PPW + 1u;
    for (var i = li; i < span * rows; i += WG) {
      let r = i / span;
      let start = (y0 + r - P.row0) * P.width + x0;
      let wi = start / PPW + (i - r * span);
      let word = src[wi];
      for (var j = 0u; j < PPW; j++) {
        let p = wi * PPW + j;
        if (p >= start && p < start + P.tile_w) { count(t, (word >> (j * BITS)) & ${mask}); }
      }
    }
  } else {
${paddedPixels('y * P.width + x - P.row0 * P.width', 'count(t, px(p))')}
  }
  flush(t, li);
}
`;
}

/**
 * tile_lut: one workgroup per tile, from its histogram: OpenCV's clip, batch and residual redistribution, a
 * workgroup scan, LUT = round(f32(cumsum) · scale). Invocation i owns PER consecutive bins and writes them
 * packed (4 u8 or 2 u16 entries per word) so that interpolate's gathers touch few cache lines.
 */
export function tileLutWgsl(dtype: ClaheDtype): string {
  const { bins, epw, bits } = packing(dtype);
  const wg = dtype === 'uint8' ? 64 : 256;
  return /* wgsl */ `
${gridWgsl}
${exactFloatWgsl}
${TileParams.wgsl}
const WG: u32 = ${wg}u;
const BINS: u32 = ${bins}u;
const PER: u32 = ${bins / wg}u;
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
@group(0) @binding(0) var<storage, read> hist: array<u32>;
@group(0) @binding(1) var<storage, read_write> lut: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
var<workgroup> part: array<u32, WG>;

// Inclusive sum of part[] over the workgroup (Hillis–Steele); every invocation returns its own prefix.
fn scan(li: u32, v: u32) -> u32 {
  part[li] = v;
  workgroupBarrier();
  for (var off = 1u; off < WG; off <<= 1u) {
    var add = 0u;
    if (li >= off) { add = part[li - off]; }
    workgroupBarrier();
    part[li] += add;
    workgroupBarrier();
  }
  return part[li];
}

fn redistributed(h: u32, b: u32, batch: u32, residual: u32, step: u32) -> u32 {
  if (P.clip == 0u) { return h; }
  let extra = select(0u, 1u, residual > 0u && b % step == 0u && b / step < residual);
  return min(h, P.clip) + batch + extra;
}

@compute @workgroup_size(WG)
fn tile_lut(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = linear_group_id(wid, nwg);
  if (t >= P.tiles) { return; }
  let b0 = li * PER;
  let h0 = t * BINS + b0;
  var excess = 0u;
  if (P.clip > 0u) {
    for (var k = 0u; k < PER; k++) { excess += max(hist[h0 + k], P.clip) - P.clip; }
  }
  _ = scan(li, excess);
  let total = part[WG - 1u];
  let batch = total / BINS;
  let residual = total - batch * BINS;
  let step = max(BINS / max(residual, 1u), 1u);
  var own = 0u;
  for (var k = 0u; k < PER; k++) { own += redistributed(hist[h0 + k], b0 + k, batch, residual, step); }
  workgroupBarrier();
  var cum = scan(li, own) - own;
  var word = 0u;
  for (var k = 0u; k < PER; k++) {
    cum += redistributed(hist[h0 + k], b0 + k, batch, residual, step);
    let v = min(u32(round(u32_to_f32_rn(cum) * P.scale)), BINS - 1u);
    word |= v << ((k % EPW) * BITS);
    if (k % EPW == EPW - 1u) {
      lut[(h0 + k) / EPW] = word;
      word = 0u;
    }
  }
}
`;
}

/**
 * tile_cells (8-bit): the four LUTs an interpolation cell blends, interleaved — entry (cell, v) holds the LUT
 * values at v of its top-left, top-right, bottom-left and bottom-right tiles as 4 bytes — so interpolate
 * gathers one word per pixel instead of four. Cell (cy, cx), 0 ≤ cy ≤ tilesY, 0 ≤ cx ≤ tilesX, is the area
 * whose floor(txf) = cx − 1 and floor(tyf) = cy − 1; its tiles are those indices clamped to the grid, as OpenCV
 * clamps them (the edge cells blend a tile with itself).
 */
export function tileCellsWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${cellTilesWgsl}
${TileParams.wgsl}
@group(0) @binding(0) var<storage, read> lut: array<u32>;
@group(0) @binding(1) var<storage, read_write> cells: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
fn at(tile: u32, v: u32) -> u32 { return (lut[tile * 64u + v / 4u] >> ((v % 4u) * 8u)) & 0xffu; }

@compute @workgroup_size(256)
fn tile_cells(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let id = linear_group_id(wid, nwg) * 256u + li;
  let tx = P.tiles_x;
  let ty = P.tiles / tx;
  let cell = id / 256u;
  let v = id % 256u;
  if (cell >= (tx + 1u) * (ty + 1u)) { return; }
  let q = cell_tiles(cell, tx, ty);
  cells[id] = at(q.x, v) | (at(q.y, v) << 8u) | (at(q.z, v) << 16u) | (at(q.w, v) << 24u);
}
`;
}

/**
 * tile_hist_private (8-bit; the whole image in one binding): like tile_hist, a workgroup per row slice of a
 * tile, but it reads 16 bytes per invocation (vec4<u32>), counts a word of 4 equal bytes with one atomic, counts
 * into `copies` sub-histograms (invocation i into copy i mod copies: equal values within a warp, common in
 * flat regions, hit different addresses) and stores its histogram whole into its own slot of `partial` —
 * no atomics in global memory, so no histogram to clear first. cell_luts sums the slices.
 */
export function tileHistPrivateWgsl(copies: number): string {
  return /* wgsl */ `
${gridWgsl}
${reflect101Wgsl}
${TileParams.wgsl}
const WG: u32 = 256u;
const C: u32 = ${copies}u;
@group(0) @binding(0) var<storage, read> src: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> partial: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
var<workgroup> local: array<atomic<u32>, ${256 * copies}>;

fn px(p: u32) -> u32 { return (src[p >> 4u][(p >> 2u) & 3u] >> ((p & 3u) * 8u)) & 0xffu; }
fn add(c: u32, v: u32, n: u32) { atomicAdd(&local[v * C + c], n); }
// Bytes lo ≤ j < hi of word w, one by one (the ends of a tile row).
fn count_part(c: u32, w: u32, lo: u32, hi: u32) {
  for (var j = lo; j < hi; j++) { add(c, (w >> (j * 8u)) & 0xffu, 1u); }
}
// A whole word: one atomic when its 4 bytes are equal (flat image areas), else 4.
fn count_word(c: u32, w: u32) {
  let b0 = w & 0xffu;
  if (w == b0 * 0x01010101u) {
    add(c, b0, 4u);
  } else {
    add(c, b0, 1u);
    add(c, (w >> 8u) & 0xffu, 1u);
    add(c, (w >> 16u) & 0xffu, 1u);
    add(c, w >> 24u, 1u);
  }
}
// A whole quad of 16 bytes: one atomic when all are equal.
fn count_quad(c: u32, v: vec4u) {
  let b0 = v.x & 0xffu;
  if (all(v == vec4u(b0 * 0x01010101u))) {
    add(c, b0, 16u);
  } else {
    count_word(c, v.x);
    count_word(c, v.y);
    count_word(c, v.z);
    count_word(c, v.w);
  }
}

@compute @workgroup_size(WG)
fn tile_hist(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
${sliceOfTile('t')}
  let c = li % C;
  if (x0 + P.tile_w <= P.width && y0 + rows <= P.height) {
    // Row r covers bytes [start, end): quads (16 bytes) start / 16 … at most SPAN of them, flattened with the rows.
    let span = (P.tile_w + 15u) / 16u + 1u;
    for (var i = li; i < span * rows; i += WG) {
      let r = i / span;
      let start = (y0 + r) * P.width + x0;
      let end = start + P.tile_w;
      let q = start / 16u + (i - r * span);
      let qb = q * 16u;
      if (qb < end) {
        let v = src[q];
        let lo = max(start, qb) - qb;
        let hi = min(end, qb + 16u) - qb;
        if (lo == 0u && hi == 16u) {
          count_quad(c, v);
        } else {
          for (var k = 0u; k < 4u; k++) {
            let a = clamp(lo, 4u * k, 4u * k + 4u) - 4u * k;
            let b = clamp(hi, 4u * k, 4u * k + 4u) - 4u * k;
            if (a < b) { count_part(c, v[k], a, b); }
          }
        }
      }
    }
  } else {
${paddedPixels('y * P.width + x', 'add(c, px(p), 1u)')}
  }
  workgroupBarrier();
  for (var b = li; b < 256u; b += WG) {
    var sum = 0u;
    for (var k = 0u; k < C; k++) { sum += atomicLoad(&local[b * C + k]); }
    partial[id * 256u + b] = sum;
  }
}
`;
}

/**
 * cell_luts (8-bit, after tile_hist_private): one workgroup of 256 invocations (one per bin) per interpolation
 * cell makes the LUTs of the cell's four tiles from their slices' partial histograms — OpenCV's clip, batch and
 * residual redistribution and LUT = round(f32(cumsum) · scale), the four tiles at once as vec4 lanes — and writes
 * the interleaved cell words that tile_cells would: tile_lut and tile_cells in one dispatch. A tile's LUT is made
 * by each of the (up to 4) cells that blend it: cheap next to a dispatch and its barrier.
 */
export function cellLutsWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${cellTilesWgsl}
${exactFloatWgsl}
${TileParams.wgsl}
@group(0) @binding(0) var<storage, read> partial: array<u32>;
@group(0) @binding(1) var<storage, read_write> cells: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;
var<workgroup> part: array<vec4u, 256>;

// Inclusive sum over the 256 bins (Hillis–Steele), four tiles at once.
fn scan(b: u32, v: vec4u) -> vec4u {
  part[b] = v;
  workgroupBarrier();
  for (var off = 1u; off < 256u; off <<= 1u) {
    var add = vec4u(0u);
    if (b >= off) { add = part[b - off]; }
    workgroupBarrier();
    part[b] += add;
    workgroupBarrier();
  }
  return part[b];
}

// Bin b of the four tiles' histograms: the sums of their slices' partials, four slices of each tile a step so
// that 16 loads are in flight (one dependent load after another was a chain of 64 L2 round trips).
fn counts(tiles: vec4u, b: u32) -> vec4u {
  let at = tiles * (P.slices * 256u) + vec4u(b);
  var sum = vec4u(0u);
  var k = 0u;
  for (; k + 4u <= P.slices; k += 4u) {
    let o = at + vec4u(k * 256u);
    let s0 = vec4u(partial[o.x], partial[o.y], partial[o.z], partial[o.w]);
    let s1 = vec4u(partial[o.x + 256u], partial[o.y + 256u], partial[o.z + 256u], partial[o.w + 256u]);
    let s2 = vec4u(partial[o.x + 512u], partial[o.y + 512u], partial[o.z + 512u], partial[o.w + 512u]);
    let s3 = vec4u(partial[o.x + 768u], partial[o.y + 768u], partial[o.z + 768u], partial[o.w + 768u]);
    sum += (s0 + s1) + (s2 + s3);
  }
  for (; k < P.slices; k++) {
    let o = at + vec4u(k * 256u);
    sum += vec4u(partial[o.x], partial[o.y], partial[o.z], partial[o.w]);
  }
  return sum;
}

fn lut_value(cum: u32) -> u32 { return min(u32(round(u32_to_f32_rn(cum) * P.scale)), 255u); }

@compute @workgroup_size(256)
fn cell_luts(@builtin(local_invocation_index) b: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let cell = linear_group_id(wid, nwg);
  let tx = P.tiles_x;
  let ty = P.tiles / tx;
  if (cell >= (tx + 1u) * (ty + 1u)) { return; }
  let h = counts(cell_tiles(cell, tx, ty), b);
  var own = h;
  if (P.clip > 0u) {
    let clip = vec4u(P.clip);
    _ = scan(b, max(h, clip) - clip);
    let total = part[255u];
    let batch = total / 256u;
    let residual = total - batch * 256u;
    let step = max(vec4u(256u) / max(residual, vec4u(1u)), vec4u(1u));
    let extra = select(vec4u(0u), vec4u(1u), (residual > vec4u(0u)) & (vec4u(b) % step == vec4u(0u)) & (vec4u(b) / step < residual));
    own = min(h, clip) + batch + extra;
    workgroupBarrier();
  }
  let cum = scan(b, own);
  cells[cell * 256u + b] = lut_value(cum.x) | (lut_value(cum.y) << 8u) | (lut_value(cum.z) << 16u) | (lut_value(cum.w) << 24u);
}
`;
}

/**
 * OpenCV's bilinear blend of the four LUT values c (top-left, top-right, bottom-left, bottom-right) with x weights
 * xa, xa1 and y weights ya, ya1, in its float32 expression and order. Every product passes through `rounded()`,
 * the float32 value of x made opaque to the compiler (XOR with the uniform zero `P.zero`): a product cannot be
 * contracted into an FMA with the addition that follows, nor factored with its neighbour (the H100's driver did
 * both, by 1 LSB in a few pixels, with plainer guards).
 */
const blendWgsl = (conversions: string): string => /* wgsl */ `
fn rounded(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ P.zero); }
${conversions}
fn blend(c: vec4f, xa: f32, xa1: f32, ya: f32, ya1: f32) -> u32 {
  let top = rounded(c.x * xa1) + rounded(c.y * xa);
  let bottom = rounded(c.z * xa1) + rounded(c.w * xa);
  return to_int(rounded(top * ya1) + rounded(bottom * ya));
}
`;

/** The blend's result as an integer of at most `max`, and (8-bit) the four bytes of an interleaved cell word as floats. */
const cvtWgsl = (max: number): string => /* wgsl */ `
fn to_int(r: f32) -> u32 { return u32(clamp(round(r), 0.0, ${max}.0)); }
fn unpack_cell(w: u32) -> vec4f { return vec4f(f32(w & 0xffu), f32((w >> 8u) & 0xffu), f32((w >> 16u) & 0xffu), f32(w >> 24u)); }
`;

/**
 * cvtWgsl for 8-bit without conversion instructions, which NVIDIA GPUs run at a quarter of the FP32 rate (five a
 * pixel: four LUT bytes in, the result out). Both exact: a byte b is the float 2^23 + b (its bits: b below the
 * exponent of 2^23) minus 2^23; a float r of |r| < 2^22 plus 1.5·2^23 lands where the float spacing is 1, so
 * the addition rounds r to an integer half to even, as round() (OpenCV's cvRound) does, and the integer is the
 * low bits of the sum — provided the addition is not reassociated with the one that made r (lavapipe's LLVM did
 * that, off by one in some pixels, until r passed through rounded()).
 */
const magicWgsl = /* wgsl */ `
fn byte_f32(b: u32) -> f32 { return bitcast<f32>(b | 0x4b000000u) - 8388608.0; }
fn unpack_cell(w: u32) -> vec4f {
  return vec4f(byte_f32(w & 0xffu), byte_f32((w >> 8u) & 0xffu), byte_f32((w >> 16u) & 0xffu), byte_f32(w >> 24u));
}
// rounded(r): r opaque, so that no compiler reassociates the sum that made it with the addition (lavapipe's did).
fn to_int(r: f32) -> u32 { return u32(clamp(bitcast<i32>(rounded(r) + 12582912.0) - 0x4b400000i, 0i, 255i)); }
`;

export function interpolateWgsl(dtype: ClaheDtype): string {
  const { bins, epw, bits, mask } = packing(dtype);
  // The four LUT values blended at a pixel (top-left, top-right, bottom-left, bottom-right).
  const corners = dtype === 'uint8'
    ? `// 8-bit: one gather from the interleaved cells (tile_cells); x/y tables hold the cell index in z.
fn corners(xv: vec4u, yv: vec4u, v: u32) -> vec4f { return unpack_cell(lut[(yv.z * (P.tiles_x + 1u) + xv.z) * 256u + v]); }`
    : `// 16-bit: four gathers from the packed LUTs; x/y tables hold the first and second tile in z and w.
fn entry(tile: u32, v: u32) -> f32 {
  let i = tile * BINS + v;
  return f32((lut[i / EPW] >> ((i % EPW) * BITS)) & ${mask});
}
fn corners(xv: vec4u, yv: vec4u, v: u32) -> vec4f {
  let r1 = yv.z * P.tiles_x;
  let r2 = yv.w * P.tiles_x;
  return vec4f(entry(r1 + xv.z, v), entry(r1 + xv.w, v), entry(r2 + xv.z, v), entry(r2 + xv.w, v));
}`;
  return /* wgsl */ `
${gridWgsl}
const WG: u32 = 256u;
const BINS: u32 = ${bins}u;
const EPW: u32 = ${epw}u;
const BITS: u32 = ${bits}u;
${InterpolateParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> lut: array<u32>;
// Per column x and per row y: (bits of a, bits of 1 − a, tile or cell indices), from plan.ts's axis tables.
@group(0) @binding(3) var<storage, read> xtab: array<vec4u>;
@group(0) @binding(4) var<storage, read> ytab: array<vec4u>;
@group(0) @binding(5) var<uniform> P: Params;
${blendWgsl(cvtWgsl(bins - 1))}
${corners}

fn interp(xv: vec4u, yv: vec4u, v: u32) -> u32 {
  return blend(corners(xv, yv, v), bitcast<f32>(xv.x), bitcast<f32>(xv.y), bitcast<f32>(yv.x), bitcast<f32>(yv.y));
}

@compute @workgroup_size(WG)
fn interpolate(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let w = linear_group_id(wid, nwg) * WG + li;
  if (w >= P.words) { return; }
  let word = src[w];
  let p0 = w * EPW;
  var y = p0 / P.width;
  var x = p0 - y * P.width;
  var yv = ytab[y];
  var out = 0u;
  for (var j = 0u; j < EPW; j++) {
    if (p0 + j >= P.n) { break; }
    out |= interp(xtab[x], yv, (word >> (j * BITS)) & ${mask}) << (j * BITS);
    x += 1u;
    if (x == P.width && p0 + j + 1u < P.n) {
      x = 0u;
      y += 1u;
      yv = ytab[y];
    }
  }
  dst[w] = out;
}
`;
}

/** The strip interpolation's parameters: strips per row (width / PX), rows, interpolation cells per row. */
export const StripParams = defineUniforms('Params', { strips: 'u32', height: 'u32', cells_x: 'u32', zero: 'u32' });

/**
 * interpolate_strips (8-bit, width a multiple of `px`): one invocation per `px` consecutive pixels of a row
 * (one u32, vec2<u32> or vec4<u32> load and store) over `rows` rows. Its px columns' weights and cell offsets
 * are loaded once into registers and reused on every row (the word kernel loaded a 16-byte table entry per
 * pixel, 4× the image bytes through L1); per row one y entry (the same for the whole row), one load, px
 * gathers of interleaved cell words, one store. The per-pixel code is generated unrolled so that the weights
 * stay in registers. `bytes`: 'magic' converts bytes and floats with magicWgsl, 'cvt' with f32() / round().
 */
export function interpolateStripsWgsl(px: 4 | 8 | 16, rows: number, bytes: 'cvt' | 'magic' = 'cvt'): string {
  const words = px / 4;
  const vt = words === 1 ? 'u32' : `vec${words}u`;
  const word = (k: number) => (words === 1 ? 'v' : `v.${'xyzw'[k]}`);
  const cols = Array.from({ length: px }, (_, j) => j);
  const load = cols.map((j) => `  let xt${j} = xtab[x0 + ${j}u];`).join('\n');
  const pixel = (j: number) => `(blend(unpack_cell(lut[rowc + xt${j}.z * 256u + ((${word(j >> 2)} >> ${8 * (j & 3)}u) & 0xffu)]), bitcast<f32>(xt${j}.x), bitcast<f32>(xt${j}.y), ya, ya1) << ${8 * (j & 3)}u)`;
  const outWord = (k: number) => cols.slice(4 * k, 4 * k + 4).map(pixel).join('\n        | ');
  const store = words === 1 ? `dst[i] = ${outWord(0)};` : `dst[i] = ${vt}(\n        ${Array.from({ length: words }, (_, k) => outWord(k)).join(',\n        ')});`;
  return /* wgsl */ `
${gridWgsl}
const PX: u32 = ${px}u;
const ROWS: u32 = ${rows}u;
${StripParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<${vt}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${vt}>;
@group(0) @binding(2) var<storage, read> lut: array<u32>;
@group(0) @binding(3) var<storage, read> xtab: array<vec4u>;
@group(0) @binding(4) var<storage, read> ytab: array<vec4u>;
@group(0) @binding(5) var<uniform> P: Params;
${blendWgsl(bytes === 'magic' ? magicWgsl : cvtWgsl(255))}

@compute @workgroup_size(256)
fn interpolate_strips(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let id = linear_group_id(wid, nwg) * 256u + li;
  let rb = id / P.strips;
  let s = id - rb * P.strips;
  let y0 = rb * ROWS;
  if (y0 >= P.height) { return; }
  let x0 = s * PX;
${load}
  for (var y = y0; y < min(y0 + ROWS, P.height); y++) {
    let yv = ytab[y];
    let ya = bitcast<f32>(yv.x);
    let ya1 = bitcast<f32>(yv.y);
    let rowc = yv.z * P.cells_x * 256u;
    let i = y * P.strips + s;
    let v = src[i];
    ${store}
  }
}
`;
}

export interface WindowKernelParams {
  radius: number;
  border: ClaheBorder;
  clipLimit: number;
  area: number;
  lutScale: number;
}

/** What both window kernels share: bindings, mirrored indexing, the closed-form LUT value, packed stores. */
function windowCommon(g: WindowKernelParams): string {
  const mirror = g.border === 'reflect'
    ? 'if (p < 0i) { return u32(-p - 1i); } if (p >= i32(n)) { return 2u * n - 1u - u32(p); } return u32(p);'
    : 'if (p < 0i) { return u32(-p); } if (p >= i32(n)) { return 2u * n - 2u - u32(p); } return u32(p);';
  return /* wgsl */ `
const R: i32 = ${g.radius}i;
const LIMIT: u32 = ${g.clipLimit}u;
const AREA: u32 = ${g.area}u;
const SCALE: f32 = ${f32Bits(g.lutScale)};
${WindowParams.wgsl}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> P: Params;
${pixelReaders('uint8')}
fn mirror(p: i32, n: u32) -> u32 { ${mirror} }

// OpenCV's tile rule at v for a window with clipped sums p (bins ≤ v) and s (all bins): windowLutValue.
fn lut_value(p: u32, s: u32, v: u32) -> u32 {
  let excess = AREA - s;
  let batch = excess / 256u;
  let residual = excess - batch * 256u;
  var cum = p + batch * (v + 1u);
  if (residual > 0u) { cum += min(residual, v / max(256u / residual, 1u) + 1u); }
  return min(u32(round(f32(cum) * SCALE)), 255u);
}

// dst is zeroed before the dispatch; neighbouring pixels of one word may come from different invocations.
fn store(p: u32, v: u32) { atomicOr(&dst[p >> 2u], v << ((p & 3u) * 8u)); }
`;
}

export function windowNaiveWgsl(g: WindowKernelParams): string {
  return /* wgsl */ `
${windowCommon(g)}
@compute @workgroup_size(16, 16)
fn window_naive(@builtin(global_invocation_id) gid: vec3u) {
  let x = gid.x;
  let y = gid.y;
  if (x >= P.width || y >= P.height) { return; }
  var h: array<u32, 128>;  // 256 counts, two 16-bit counts per word ((2R+1)² ≤ 65025)
  for (var dy = -R; dy <= R; dy++) {
    let row = mirror(i32(y) + dy, P.height) * P.width;
    for (var dx = -R; dx <= R; dx++) {
      let v = px(row + mirror(i32(x) + dx, P.width));
      h[v >> 1u] += 1u << ((v & 1u) * 16u);
    }
  }
  let v = px(y * P.width + x);
  var s = 0u;
  var p = 0u;
  for (var b = 0u; b < 256u; b++) {
    let m = min((h[b >> 1u] >> ((b & 1u) * 16u)) & 0xffffu, LIMIT);
    s += m;
    if (b <= v) { p += m; }
  }
  store(y * P.width + x, lut_value(p, s, v));
}
`;
}

export interface ColumnsSchedule {
  /** Output columns per workgroup tile. */
  tileW: number;
  /** Output rows per workgroup tile (the column histograms are built once per tile, then slide down). */
  tileH: number;
}

/** Pixels whose partial sums are reduced together (one barrier pair per batch). */
export const COLUMNS_BATCH = 32;

/** Workgroup memory of window_columns: one word per (column, invocation), the batch's partial sums (rows
 *  padded by one word against bank conflicts) and the tile row's centre pixels. */
export function columnsWorkgroupBytes(radius: number, tileW: number, subgroups = false): number {
  const sums = subgroups ? COLUMNS_BATCH * 4 : (COLUMNS_BATCH + 1) * 64 * 4;
  return (tileW + 2 * radius) * 64 * 4 + sums + tileW * 4 + 2 * 256 * 4;
}

/**
 * The reduction of the 64 invocations' partial sums of each pixel: with subgroups (where the adapter has
 * them) a subgroupAdd per pixel and one workgroup atomic per subgroup; without, a padded array of partials
 * that 32 invocations sum. The subgroup form saves the array's 8.4 KB of workgroup memory (more resident
 * workgroups) and the 64-read loop.
 */
function columnsReduction(subgroups: boolean): { decl: string; put: string; take: string } {
  if (subgroups) {
    return {
      decl: 'var<workgroup> sums: array<atomic<u32>, K>;',
      put: 'let total = subgroupAdd(partial(t, ha, hb, centre[x]));\n        if (sid == 0u) { atomicAdd(&sums[k], total); }',
      take: 'let sum = atomicExchange(&sums[t], 0u);',
    };
  }
  return {
    decl: `// part[t·(K+1) + k]: invocation t's partial for pixel k. The padding puts a batch's 64 writes (fixed k) and
// a pixel's 64 reads (fixed k, all t) in distinct banks; with rows of K words the reads were a 32-way conflict.
var<workgroup> part: array<u32, ${(COLUMNS_BATCH + 1) * 64}>;`,
    put: 'part[t * (K + 1u) + k] = partial(t, ha, hb, centre[x]);',
    take: 'var sum = 0u;\n        for (var j = 0u; j < 64u; j++) { sum += part[j * (K + 1u) + t]; }',
  };
}

export function windowColumnsWgsl(g: WindowKernelParams, s: ColumnsSchedule, subgroups = false): string {
  const nc = s.tileW + 2 * g.radius;
  const red = columnsReduction(subgroups);
  return /* wgsl */ `${subgroups ? 'enable subgroups;' : ''}
${windowCommon(g)}
const TW: u32 = ${s.tileW}u;
const TH: u32 = ${s.tileH}u;
const K: u32 = ${COLUMNS_BATCH}u;
const D: u32 = ${2 * g.radius}u;
const LO: u32 = 0x00ff00ffu;
var<workgroup> col: array<u32, ${nc * 64}>;
${red.decl}
var<workgroup> centre: array<u32, ${s.tileW}>;
// Histogram of the pixels entering / leaving the first window of the row when it moves down one row.
var<workgroup> din: array<atomic<u32>, 256>;
var<workgroup> dout: array<atomic<u32>, 256>;

// Column c of the tile (image column x0 − R + c) gains pixel value vin and loses vout (byte counts).
fn col_add(c: u32, v: u32) { col[c * 64u + (v >> 2u)] += 1u << ((v & 3u) * 8u); }
fn col_sub(c: u32, v: u32) { col[c * 64u + (v >> 2u)] -= 1u << ((v & 3u) * 8u); }

// Invocation t's clipped sum over its 4 bins, and the part of it at bins ≤ v, packed as s | p << 16.
fn partial(t: u32, ha: u32, hb: u32, v: u32) -> u32 {
  let m = min(vec4u(ha & 0xffffu, hb & 0xffffu, ha >> 16u, hb >> 16u), vec4u(LIMIT));
  let b = vec4u(4u * t) + vec4u(0u, 1u, 2u, 3u);
  let below = select(vec4u(0u), m, b <= vec4u(v));
  return (m.x + m.y + m.z + m.w) | ((below.x + below.y + below.z + below.w) << 16u);
}

@compute @workgroup_size(64)
fn window_columns(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u${subgroups ? ', @builtin(subgroup_invocation_id) sid: u32' : ''}) {
  let x0 = wid.x * TW;
  let y0 = wid.y * TH;
  if (x0 >= P.width || y0 >= P.height) { return; }
  let tw = min(TW, P.width - x0);
  let nc = tw + D;
  let y1 = min(y0 + TH, P.height);
  for (var i = t; i < nc * 64u; i += 64u) { col[i] = 0u; }
  workgroupBarrier();
  // Each invocation builds whole columns, so the byte updates of a word never race.
  for (var c = t; c < nc; c += 64u) {
    let xc = mirror(i32(x0 + c) - R, P.width);
    for (var dy = -R; dy <= R; dy++) { col_add(c, px(mirror(i32(y0) + dy, P.height) * P.width + xc)); }
  }
  workgroupBarrier();
  var ha0 = 0u;
  var hb0 = 0u;
  for (var y = y0; y < y1; y++) {
    if (y > y0) {
      let rin = mirror(i32(y) + R, P.height) * P.width;
      let rout = mirror(i32(y) - R - 1i, P.height) * P.width;
      for (var c = t; c < nc; c += 64u) {
        let xc = mirror(i32(x0 + c) - R, P.width);
        let vin = px(rin + xc);
        let vout = px(rout + xc);
        col_add(c, vin);
        col_sub(c, vout);
        if (c <= D) {
          atomicAdd(&din[vin], 1u);
          atomicAdd(&dout[vout], 1u);
        }
      }
    }
    for (var x = t; x < tw; x += 64u) { centre[x] = px(y * P.width + x0 + x); }
    workgroupBarrier();
    // Window counts of bins 4t, 4t+2 (ha0) and 4t+1, 4t+3 (hb0) as 16-bit lanes at the row's first pixel: summed
    // from the 2R+1 columns once per tile, then moved down a row with the entering/leaving counts (O(1) in R).
    if (y == y0) {
      for (var c = 0u; c <= D; c++) {
        let w = col[c * 64u + t];
        ha0 += w & LO;
        hb0 += (w >> 8u) & LO;
      }
    } else {
      let b = 4u * t;
      ha0 = ha0 + (atomicExchange(&din[b], 0u) | (atomicExchange(&din[b + 2u], 0u) << 16u))
                - (atomicExchange(&dout[b], 0u) | (atomicExchange(&dout[b + 2u], 0u) << 16u));
      hb0 = hb0 + (atomicExchange(&din[b + 1u], 0u) | (atomicExchange(&din[b + 3u], 0u) << 16u))
                - (atomicExchange(&dout[b + 1u], 0u) | (atomicExchange(&dout[b + 3u], 0u) << 16u));
    }
    var ha = ha0;
    var hb = hb0;
    let row = y * P.width + x0;
    for (var xb = 0u; xb < tw; xb += K) {
      let kn = min(K, tw - xb);
      for (var k = 0u; k < kn; k++) {
        let x = xb + k;
        if (x > 0u) {
          let win = col[(x + D) * 64u + t];
          let wout = col[(x - 1u) * 64u + t];
          ha = ha + (win & LO) - (wout & LO);
          hb = hb + ((win >> 8u) & LO) - ((wout >> 8u) & LO);
        }
        ${red.put}
      }
      workgroupBarrier();
      if (t < kn) {
        ${red.take}
        store(row + xb + t, lut_value(sum >> 16u, sum & 0xffffu, centre[xb + t]));
      }
      workgroupBarrier();
    }
  }
}
`;
}

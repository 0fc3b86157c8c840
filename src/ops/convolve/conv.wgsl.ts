import type { BorderMode } from '../../core/border.js';
import { borderMapWgsl } from '../../core/gpu/wgsl/border.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';

/**
 * Convolution kernels, generated per variant (input dtype, border mode, and for the tiled kernels the weights
 * themselves, baked in as exact float32 constants so zero taps cost nothing and skip NaNs as scipy does).
 *
 * Every kernel reads input position o + off + j along each axis for tap j (plan.ts AxisGeo); a position outside
 * [0, nIn) goes through `bmap`; with mode 'constant' a position outside the real range [lo, hi) reads cval.
 */
export type ConvDtype = 'uint8' | 'uint16' | 'float32';

/** The uniform every convolution kernel reads: per-axis geometry in x, y, z order, then cval and counts. */
export const GEO_STRUCT = /* wgsl */ `
struct Geo {
  nIn: vec4<i32>,
  nOut: vec4<i32>,
  off: vec4<i32>,
  lo: vec4<i32>,
  hi: vec4<i32>,
  cval: f32,
  ntaps: u32,
  total: u32,
  _pad: u32,
}`;

/** Source binding and an element loader for each input dtype (u8/u16 read from packed words). */
function sourceWgsl(dtype: ConvDtype): string {
  if (dtype === 'float32') return '@group(0) @binding(0) var<storage, read> src: array<f32>;\nfn load(i: u32) -> f32 { return src[i]; }';
  const [shift, mask, per] = dtype === 'uint8' ? [3, 255, 2] : [4, 65535, 1];
  return `@group(0) @binding(0) var<storage, read> src: array<u32>;
fn load(i: u32) -> f32 { return f32((src[i >> ${per}u] >> ((i & ${dtype === 'uint8' ? 3 : 1}u) << ${shift}u)) & ${mask}u); }`;
}

/** fetch(x, y, z) with the border rule: a real input value, or cval. */
function fetchWgsl(mode: BorderMode): string {
  const constant = mode === 'constant'
    ? `if (x < g.lo.x || x >= g.hi.x || y < g.lo.y || y >= g.hi.y || z < g.lo.z || z >= g.hi.z) { return g.cval; }`
    : '';
  return /* wgsl */ `
${borderMapWgsl(mode)}
fn fetch(x: i32, y: i32, z: i32) -> f32 {
  ${constant}
  let px = u32(bmap(x, g.nIn.x));
  let py = u32(bmap(y, g.nIn.y));
  let pz = u32(bmap(z, g.nIn.z));
  return load((pz * u32(g.nIn.y) + py) * u32(g.nIn.x) + px);
}`;
}

const bits = (w: number) => `bitcast<f32>(${new Uint32Array(new Float32Array([w]).buffer)[0]}u)`;

/**
 * The naive kernel: one output per invocation, every tap read from global memory, taps (dx, dy, dz, weight bits)
 * from a storage buffer (nonzero taps only, in z, y, x order). Any kernel, any size.
 */
export function naiveWgsl(dtype: ConvDtype, mode: BorderMode): string {
  return /* wgsl */ `
${GEO_STRUCT}
${sourceWgsl(dtype)}
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read> taps: array<vec4<i32>>;
@group(0) @binding(3) var<uniform> g: Geo;
${gridWgsl}
${fetchWgsl(mode)}

@compute @workgroup_size(64)
fn naive(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = linear_group_id(wid, nwg) * 64u + li;
  if (i >= g.total) { return; }
  let nx = u32(g.nOut.x);
  let ny = u32(g.nOut.y);
  let ox = i32(i % nx);
  let oy = i32((i / nx) % ny);
  let oz = i32(i / (nx * ny));
  var acc = 0.0;
  for (var t = 0u; t < g.ntaps; t++) {
    let tp = taps[t];
    acc += bitcast<f32>(tp.w) * fetch(ox + g.off.x + tp.x, oy + g.off.y + tp.y, oz + g.off.z + tp.z);
  }
  dst[i] = acc;
}`;
}

/** What the tiled kernel computes on each input plane it stages. */
export type PlaneStage =
  /** dense: weights [kz][ky][kx]; plane tap t of the z taps uses weights[t] */
  | { kind: 'dense'; size: [number, number, number]; weights: Float32Array }
  /** separable: x, then y within the plane, then the z taps across planes (scipy's sequential 1-D passes) */
  | { kind: 'separable'; wz: Float32Array; wy: Float32Array; wx: Float32Array };

export interface TiledSpec {
  dtype: ConvDtype;
  mode: BorderMode;
  stage: PlaneStage;
  /** workgroup tile: TX × TY outputs of a plane, one per invocation */
  tx: number;
  ty: number;
  /** output planes per workgroup (the march along z) */
  zc: number;
}

/** Bytes of workgroup memory the tiled kernel needs. */
export function tiledSharedBytes(s: Pick<TiledSpec, 'stage' | 'tx' | 'ty'>): number {
  const [kx, ky] = s.stage.kind === 'dense' ? [s.stage.size[2], s.stage.size[1]] : [s.stage.wx.length, s.stage.wy.length];
  const iw = s.tx + kx - 1, ih = s.ty + ky - 1;
  const rows = s.stage.kind === 'separable' && kx > 1 && ky > 1 ? s.tx * ih : 0;
  return (iw * ih + rows) * 4;
}

/**
 * The tiled kernel: a workgroup owns a TX × TY tile of output columns and marches along z through ZC output
 * planes. Each input plane is read from global memory once per tile — the tile plus its x/y halo, staged in
 * workgroup memory — and filtered within the plane there (dense, or x then y for separable kernels); the z taps
 * accumulate across planes in registers (one accumulator per z tap, unrolled), so a voxel is read about
 * (1 + halo/tile) times instead of once per tap. 2D images are one plane.
 */
export function tiledWgsl(s: TiledSpec): string {
  const { stage, tx, ty, zc, mode } = s;
  const [kz, ky, kx] = stage.kind === 'dense' ? stage.size : [stage.wz.length, stage.wy.length, stage.wx.length];
  const iw = tx + kx - 1, ih = ty + ky - 1;
  const constant = mode === 'constant';
  const acc = Array.from({ length: kz }, (_, t) => `a${t}`);
  const lines: string[] = [];
  const rowsStage = stage.kind === 'separable' && kx > 1 && ky > 1;
  if (stage.kind === 'separable') {
    const xs = [...stage.wx].map((w, j) => [w, j] as const).filter(([w]) => w !== 0);
    const ys = [...stage.wy].map((w, j) => [w, j] as const).filter(([w]) => w !== 0);
    if (rowsStage) {
      lines.push(`for (var i = li; i < ${tx * ih}u; i += ${tx * ty}u) {
      let r = i / ${tx}u;
      let c = i % ${tx}u;
      var v = 0.0;
      ${xs.map(([w, j]) => `v += ${bits(w)} * tile[r * ${iw}u + c + ${j}u];`).join('\n      ')}
      ${constant ? `let yr = gy0 + i32(r);\n      if (yr < g.lo.y || yr >= g.hi.y) { v = g.cval; }` : ''}
      rows[i] = v;
    }
    workgroupBarrier();
    var v = 0.0;
    ${ys.map(([w, j]) => `v += ${bits(w)} * rows[(lid.y + ${j}u) * ${tx}u + lid.x];`).join('\n    ')}`);
    } else if (kx > 1) {
      lines.push(`var v = 0.0;\n    ${xs.map(([w, j]) => `v += ${bits(w)} * tile[lid.y * ${iw}u + lid.x + ${j}u];`).join('\n    ')}`);
    } else if (ky > 1) {
      lines.push(`var v = 0.0;\n    ${ys.map(([w, j]) => `v += ${bits(w)} * tile[(lid.y + ${j}u) * ${iw}u + lid.x];`).join('\n    ')}`);
    } else {
      // One tap in-plane: its weight times the voxel (weight 1 for a pure z pass).
      lines.push(`var v = ${bits(stage.wx[0] * stage.wy[0])} * tile[lid.y * ${iw}u + lid.x];`);
    }
    if (constant && (kx > 1 || ky > 1)) lines.push('if (!zreal) { v = g.cval; }');
    [...stage.wz].forEach((w, t) => {
      if (w !== 0) lines.push(`a${t} += ${kz === 1 && w === 1 ? 'v' : `${bits(w)} * v`};`);
    });
  } else {
    for (let t = 0; t < kz; t++) {
      const taps: string[] = [];
      for (let y = 0; y < ky; y++) for (let x = 0; x < kx; x++) {
        const w = stage.weights[(t * ky + y) * kx + x];
        if (w !== 0) taps.push(`v${t} += ${bits(w)} * tile[(lid.y + ${y}u) * ${iw}u + lid.x + ${x}u];`);
      }
      if (taps.length) lines.push(`var v${t} = 0.0;\n    ${taps.join('\n    ')}\n    a${t} += v${t};`);
    }
  }
  return /* wgsl */ `
${GEO_STRUCT}
${sourceWgsl(s.dtype)}
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> g: Geo;
${fetchWgsl(mode)}

var<workgroup> tile: array<f32, ${iw * ih}>;
${rowsStage ? `var<workgroup> rows: array<f32, ${tx * ih}>;` : ''}

@compute @workgroup_size(${tx}, ${ty})
fn tiled(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u, @builtin(local_invocation_index) li: u32) {
  let tilesX = (u32(g.nOut.x) + ${tx - 1}u) / ${tx}u;
  let tilesY = (u32(g.nOut.y) + ${ty - 1}u) / ${ty}u;
  let tid = wid.x + wid.y * nwg.x;
  if (tid >= tilesX * tilesY) { return; }
  let bx = tid % tilesX;
  let by = tid / tilesX;
  let gx0 = i32(bx * ${tx}u) + g.off.x;
  let gy0 = i32(by * ${ty}u) + g.off.y;
  let ox = bx * ${tx}u + lid.x;
  let oy = by * ${ty}u + lid.y;
  let z0 = wid.z * ${zc}u;
  let z1 = min(z0 + ${zc}u, u32(g.nOut.z));
  ${acc.map((a) => `var ${a} = 0.0;`).join(' ')}
  let steps = z1 - z0 + ${kz - 1}u;
  for (var s = 0u; s < steps; s++) {
    let zi = i32(z0 + s) + g.off.z;
    let zreal = zi >= g.lo.z && zi < g.hi.z;
    for (var i = li; i < ${iw * ih}u; i += ${tx * ty}u) {
      tile[i] = fetch(gx0 + i32(i % ${iw}u), gy0 + i32(i / ${iw}u), zi);
    }
    workgroupBarrier();
    ${lines.join('\n    ')}
    workgroupBarrier();
    let zo = i32(z0 + s) - ${kz - 1}i;
    if (zo >= i32(z0) && ox < u32(g.nOut.x) && oy < u32(g.nOut.y)) {
      dst[(u32(zo) * u32(g.nOut.y) + oy) * u32(g.nOut.x) + ox] = a${kz - 1};
    }
    ${acc.slice(1).reverse().map((a, i, r) => `${a} = ${i + 1 < r.length ? r[i + 1] : 'a0'};`).join(' ')}
    a0 = 0.0;
  }
}`;
}

/** √(Σ cᵢ²) of 2 or 3 float32 buffers, in float32. */
export function magnitudeWgsl(parts: number): string {
  const names = ['a', 'b', 'c'].slice(0, parts);
  return /* wgsl */ `
${names.map((n, i) => `@group(0) @binding(${i}) var<storage, read> ${n}: array<f32>;`).join('\n')}
@group(0) @binding(${parts}) var<storage, read_write> dst: array<f32>;
@group(0) @binding(${parts + 1}) var<uniform> n: vec4<u32>;
${gridWgsl}
@compute @workgroup_size(256)
fn magnitude(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = linear_group_id(wid, nwg) * 256u + li;
  if (i >= n.x) { return; }
  ${names.map((v) => `let ${v}2 = ${v}[i] * ${v}[i];`).join('\n  ')}
  dst[i] = sqrt(${names.map((v) => `${v}2`).join(' + ')});
}`;
}

/** float32 → u8/u16 (packed words), rounded half to even and saturated; NaN → 0. */
export function castWgsl(dtype: 'uint8' | 'uint16'): string {
  const [per, max, shift] = dtype === 'uint8' ? [4, 255, 8] : [2, 65535, 16];
  return /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
${gridWgsl}
fn sat(v: f32) -> u32 { return select(0u, u32(min(round(v), ${max}.0)), v > 0.0); }
@compute @workgroup_size(256)
fn cast_sat(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w * ${per}u >= n.x) { return; }
  var word = 0u;
  for (var k = 0u; k < ${per}u; k++) {
    let i = w * ${per}u + k;
    if (i < n.x) { word |= sat(src[i]) << (k * ${shift}u); }
  }
  dst[w] = word;
}`;
}

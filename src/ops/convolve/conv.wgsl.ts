import type { BorderMode } from '../../core/border.js';
import { borderMapWgsl } from '../../core/gpu/wgsl/border.js';
import { gridWgsl } from '../../core/gpu/wgsl/grid.js';
import { f32ToBits } from '../../core/gpu/recording.js';
import { boxScale } from './box.js';
import { defineUniforms } from '../../core/gpu/uniforms.js';



/**
 * Convolution kernels, generated per variant (input dtype, border mode, and for the tiled kernels the weights
 * themselves, baked in as exact float32 constants so zero taps cost nothing and skip NaNs as scipy's correlate
 * does; nonfinite.wgsl.ts patches in the NaN and ±inf of the filters that spread them otherwise).
 *
 * Every kernel reads input position o + off + j along each axis for tap j (plan.ts AxisGeo); a position outside
 * [0, nIn) goes through `bmap`; with mode 'constant' a position outside the real range [lo, hi) reads cval.
 */
export type ConvDtype = 'uint8' | 'uint16' | 'float32';

/**
 * The uniform every convolution kernel reads: per-axis geometry in x, y, z order, then cval and counts (naive:
 * taps and outputs; tiled: `chunks` = workgroups along z per batch item — a batch of independent volumes, one
 * after another in memory, e.g. the slices of a volume for a y pass).
 */
export const Geo = defineUniforms('Geo', {
  nIn: 'vec4i', nOut: 'vec4i', off: 'vec4i', lo: 'vec4i', hi: 'vec4i', cval: 'f32', ntaps: 'u32', total: 'u32', chunks: 'u32',
});

/** The element count of the one-dimensional kernels (magnitude; nonfinite.wgsl.ts's scan and patch). */
export const CountParams = defineUniforms('Count', { n: 'u32' });

/** The cast's parameters: n elements; box rounding: rows of `row` pixels, the quotient rule from column `tail`. */
export const CastParams = defineUniforms('Cast', { n: 'u32', row: 'u32', tail: 'u32' });

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
${Geo.wgsl}
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
  /** invocations of a workgroup along x and y */
  tx: number;
  ty: number;
  /** output columns per invocation (tx apart, so a warp's accesses stay contiguous): the tile is tx·cx wide */
  cx: number;
  /** output planes per workgroup (the march along z) */
  zc: number;
  /** a pure z pass: planes loaded ahead (1: the next one) */
  zdepth?: number;
  /**
   * float32 input: also set flag[0] when a value read is NaN or ±inf (nonfinite.wgsl.ts's scan, done on the
   * loads the kernel makes anyway: the tiles cover every input value)
   */
  scan?: boolean;
}

function kernelExtent(stage: PlaneStage): [number, number, number] {
  return stage.kind === 'dense' ? stage.size : [stage.wz.length, stage.wy.length, stage.wx.length];
}

/** Bytes of workgroup memory the tiled kernel needs (none for a pure z pass: it streams). */
export function tiledSharedBytes(s: Pick<TiledSpec, 'stage' | 'tx' | 'ty' | 'cx'>): number {
  const [, ky, kx] = kernelExtent(s.stage);
  if (kx === 1 && ky === 1) return 0;
  const tw = s.tx * s.cx, iw = tw + kx - 1, ih = s.ty + ky - 1;
  const rows = s.stage.kind === 'separable' && kx > 1 && ky > 1 ? tw * ih : 0;
  return (iw * ih + rows) * 4;
}

const taps = (w: Float32Array) => [...w].map((v, j) => [v, j] as const).filter(([v]) => v !== 0);

/**
 * The tiled kernel: a workgroup owns a (tx·cx) × ty tile of output columns and marches along z through zc
 * output planes. Each input plane is read from global memory once per tile — the tile plus its x/y halo, staged
 * in workgroup memory — and filtered within the plane there (dense, or x then y for separable kernels); the z
 * taps accumulate across planes in registers (one accumulator per z tap and column, unrolled), so a voxel is
 * read about (1 + halo/tile) times instead of once per tap. The loads of plane s + 1 are issued before plane s
 * is filtered. A pure z pass (no x/y taps) needs no tile: each invocation streams its own columns, no barriers.
 * 2D images run as [h, 1, w] volumes (gpu.ts), so the march goes down the rows.
 */
export function tiledWgsl(s: TiledSpec): string {
  const { stage, tx, ty, cx, zc, mode } = s;
  const [kz, ky, kx] = kernelExtent(stage);
  const tw = tx * cx, iw = tw + kx - 1, ih = ty + ky - 1;
  const constant = mode === 'constant';
  const stream = kx === 1 && ky === 1;
  const cols = Array.from({ length: cx }, (_, c) => c);
  const acc = (t: number, c: number) => `a${t}_${c}`;
  const lines: string[] = [];
  const rowsStage = stage.kind === 'separable' && kx > 1 && ky > 1;
  // The plane value at column c: v_c (separable, or a pure z pass), v{t}_c per z tap (dense).
  const at = (c: number, dy: number | string, dx: number) => `tile[(lid.y + ${dy}u) * ${iw}u + lid.x + ${c * tx + dx}u]`;
  // A pure z pass: each column's value (register `${reg}${c}`) into its z accumulators.
  const streamLines = (reg: string) => {
    const w = stage.kind === 'dense' ? stage.weights : Float32Array.from(stage.wz, (v) => v * stage.wx[0] * stage.wy[0]);
    return cols.flatMap((c) => taps(w).map(([wt, t]) => `${acc(t, c)} += ${bits(wt)} * ${reg}${c};`));
  };
  if (stream) {
    lines.push(...streamLines('r'));
  } else if (stage.kind === 'separable') {
    const xs = taps(stage.wx), ys = taps(stage.wy);
    if (rowsStage) {
      lines.push(`for (var i = li; i < ${tw * ih}u; i += ${tx * ty}u) {
      let r = i / ${tw}u;
      let c = i % ${tw}u;
      var v = 0.0;
      ${xs.map(([w, j]) => `v += ${bits(w)} * tile[r * ${iw}u + c + ${j}u];`).join('\n      ')}
      ${constant ? `let yr = gy0 + i32(r);\n      if (yr < g.lo.y || yr >= g.hi.y) { v = g.cval; }` : ''}
      rows[i] = v;
    }
    workgroupBarrier();`);
      for (const c of cols) lines.push(`var v_${c} = 0.0;\n    ${ys.map(([w, j]) => `v_${c} += ${bits(w)} * rows[(lid.y + ${j}u) * ${tw}u + lid.x + ${c * tx}u];`).join('\n    ')}`);
    } else if (kx > 1) {
      for (const c of cols) lines.push(`var v_${c} = 0.0;\n    ${xs.map(([w, j]) => `v_${c} += ${bits(w)} * ${at(c, 0, j)};`).join('\n    ')}`);
    } else {
      for (const c of cols) lines.push(`var v_${c} = 0.0;\n    ${ys.map(([w, j]) => `v_${c} += ${bits(w)} * ${at(c, j, 0)};`).join('\n    ')}`);
    }
    for (const c of cols) {
      if (constant) lines.push(`if (!zreal) { v_${c} = g.cval; }`);
      for (const [w, t] of taps(stage.wz)) lines.push(`${acc(t, c)} += ${kz === 1 && w === 1 ? `v_${c}` : `${bits(w)} * v_${c}`};`);
    }
  } else {
    for (const c of cols) for (let t = 0; t < kz; t++) {
      const terms: string[] = [];
      for (let y = 0; y < ky; y++) for (let x = 0; x < kx; x++) {
        const w = stage.weights[(t * ky + y) * kx + x];
        if (w !== 0) terms.push(`v += ${bits(w)} * ${at(c, y, x)};`);
      }
      if (terms.length) lines.push(`{\n    var v = 0.0;\n    ${terms.join('\n    ')}\n    ${acc(t, c)} += v;\n    }`);
    }
  }
  // What each invocation loads per plane: its tile cells (tile mode), or its own cx columns (stream mode).
  const nt = tx * ty, cells = stream ? nt * cx : iw * ih, per = stream ? cx : Math.ceil(cells / nt);
  const elems = Array.from({ length: per }, (_, e) => e);
  const guard = (e: number, body: string) => (!stream && (e + 1) * nt > cells ? `if (li + ${e * nt}u < ${cells}u) { ${body} }` : body);
  const cellXY = (e: number) => stream
    ? `let x = gx0 + i32(lid.x + ${e * tx}u);\n    let y = gy0 + i32(lid.y);`
    : `let c = li + ${e * nt}u;\n    let x = gx0 + i32(c % ${iw}u);\n    let y = gy0 + i32(c / ${iw}u);`;
  // The scan tests bits, as nonfinite.wgsl.ts does, of real input values only (not cval).
  const scanned = (reg: string, e: number) => (!s.scan ? '' : constant
    ? ` found = found || (ok && o${e} >= 0i && non_finite(bitcast<u32>(${reg}${e})));`
    : ` found = found || non_finite(bitcast<u32>(${reg}${e}));`);
  const loadInto = (reg: string) => elems.map((e) => guard(e, (constant
    ? `${reg}${e} = select(g.cval, load(select(0u, base + u32(o${e}), ok && o${e} >= 0i)), ok && o${e} >= 0i);`
    : `${reg}${e} = load(base + u32(o${e}));`) + scanned(reg, e))).join('\n    ');
  const loadStep = loadInto('r');
  const storeOut = (step: string) => `let zo = i32(z0 + ${step}) - ${kz - 1}i;
    if (zo >= i32(z0) && oy < u32(g.nOut.y)) {
      let row = outItem + (u32(zo) * u32(g.nOut.y) + oy) * u32(g.nOut.x);
      ${cols.map((c) => `if (ox + ${c * tx}u < u32(g.nOut.x)) { dst[row + ox + ${c * tx}u] = ${acc(kz - 1, c)}; }`).join('\n      ')}
    }`;
  // A pure z pass `depth` planes ahead: the loop unrolled by depth, plane s + k in registers p{k}_*, reloaded
  // with plane s + k + depth once used — depth · cx loads in flight per invocation, no register moves between.
  const depth = Math.max(1, s.zdepth ?? 1);
  const planeLoad = (k: string) => `let zn = i32(z0 + ${k}) + g.off.z;
      let ok = zn >= g.lo.z && zn < g.hi.z;
      let base = inItem + u32(max(bmap(zn, g.nIn.z), 0i)) * planeSize;`;
  const deepStream = () => `${Array.from({ length: depth }, (_, k) => elems.map((e) => `var p${k}_${e} = 0.0;`).join(' ')).join('\n  ')}
  ${Array.from({ length: depth }, (_, k) => `if (${k}u < steps) {
    ${planeLoad(`${k}u`)}
    ${loadInto(`p${k}_`)}
  }`).join('\n  ')}
  for (var s = 0u; s < steps; s += ${depth}u) {
    ${Array.from({ length: depth }, (_, k) => `if (s + ${k}u < steps) {
      ${streamLines(`p${k}_`).join('\n      ')}
      if (s + ${k + depth}u < steps) {
        ${planeLoad(`s + ${k + depth}u`)}
        ${loadInto(`p${k}_`)}
      }
      ${storeOut(`s + ${k}u`)}
      ${shift}
    }`).join('\n    ')}
  }`;
  const accs = cols.flatMap((c) => Array.from({ length: kz }, (_, t) => acc(t, c)));
  const shift = cols.map((c) => {
    const chain = Array.from({ length: kz - 1 }, (_, i) => kz - 1 - i).map((t) => `${acc(t, c)} = ${acc(t - 1, c)};`).join(' ');
    return `${chain} ${acc(0, c)} = 0.0;`;
  }).join('\n    ');
  return /* wgsl */ `
${Geo.wgsl}
${sourceWgsl(s.dtype)}
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> g: Geo;
${s.scan ? `@group(0) @binding(3) var<storage, read_write> flag: array<atomic<u32>>;
fn non_finite(b: u32) -> bool { return (b & 0x7f800000u) == 0x7f800000u; }` : ''}
${borderMapWgsl(mode)}

${stream ? '' : `var<workgroup> tile: array<f32, ${cells}>;`}
${rowsStage ? `var<workgroup> rows: array<f32, ${tw * ih}>;` : ''}

@compute @workgroup_size(${tx}, ${ty})
fn tiled(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_id) lid: vec3u, @builtin(local_invocation_index) li: u32) {
  let tilesX = (u32(g.nOut.x) + ${tw - 1}u) / ${tw}u;
  let tilesY = (u32(g.nOut.y) + ${ty - 1}u) / ${ty}u;
  let tid = wid.x + wid.y * nwg.x;
  if (tid >= tilesX * tilesY) { return; }
  let bx = tid % tilesX;
  let by = tid / tilesX;
  let gx0 = i32(bx * ${tw}u) + g.off.x;
  let gy0 = i32(by * ${ty}u) + g.off.y;
  let ox = bx * ${tw}u + lid.x;
  let oy = by * ${ty}u + lid.y;
  let item = wid.z / g.chunks;
  let z0 = (wid.z % g.chunks) * ${zc}u;
  let z1 = min(z0 + ${zc}u, u32(g.nOut.z));
  let planeSize = u32(g.nIn.x) * u32(g.nIn.y);
  let inItem = item * planeSize * u32(g.nIn.z);
  let outItem = item * u32(g.nOut.x) * u32(g.nOut.y) * u32(g.nOut.z);
  // In-plane offsets of what this invocation loads, border applied once (they repeat on every plane);
  // -1: outside the real data (mode constant).
  ${elems.map((e) => `var o${e} = 0i;\n  var r${e} = 0.0;${stream ? ` var n${e} = 0.0;` : ''}`).join('\n  ')}
  ${elems.map((e) => guard(e, `{
    ${cellXY(e)}
    o${e} = bmap(y, g.nIn.y) * g.nIn.x + bmap(x, g.nIn.x);
    ${constant ? `if (x < g.lo.x || x >= g.hi.x || y < g.lo.y || y >= g.hi.y) { o${e} = -1i; }` : ''}
  }`)).join('\n  ')}
  ${accs.map((a) => `var ${a} = 0.0;`).join(' ')}
  ${s.scan ? 'var found = false;' : ''}
  let steps = z1 - z0 + ${kz - 1}u;
  ${stream && depth > 1 ? deepStream() : `{
    let zi = i32(z0) + g.off.z;
    let ok = zi >= g.lo.z && zi < g.hi.z;
    let base = inItem + u32(max(bmap(zi, g.nIn.z), 0i)) * planeSize;
    ${loadStep}
  }
  for (var s = 0u; s < steps; s++) {
    let zi = i32(z0 + s) + g.off.z;
    let zreal = zi >= g.lo.z && zi < g.hi.z;
    ${stream ? '' : `${elems.map((e) => guard(e, `tile[li + ${e * nt}u] = r${e};`)).join('\n    ')}\n    workgroupBarrier();`}
    // The next plane's loads go out before this plane is filtered (into n* when streaming: r* is still in use).
    if (s + 1u < steps) {
      let zn = zi + 1i;
      let ok = zn >= g.lo.z && zn < g.hi.z;
      let base = inItem + u32(max(bmap(zn, g.nIn.z), 0i)) * planeSize;
      ${stream ? loadInto('n') : loadStep}
    }
    ${lines.join('\n    ')}
    ${stream ? elems.map((e) => `r${e} = n${e};`).join(' ') : 'workgroupBarrier();'}
    let zo = i32(z0 + s) - ${kz - 1}i;
    if (zo >= i32(z0) && oy < u32(g.nOut.y)) {
      let row = outItem + (u32(zo) * u32(g.nOut.y) + oy) * u32(g.nOut.x);
      ${cols.map((c) => `if (ox + ${c * tx}u < u32(g.nOut.x)) { dst[row + ox + ${c * tx}u] = ${acc(kz - 1, c)}; }`).join('\n      ')}
    }
    ${shift}
  }`}
  ${s.scan ? 'if (found) { atomicOr(&flag[0], 1u); }' : ''}
}`;
}

/** The x-y pass's tile: tw × th outputs of a plane per workgroup (256 invocations), runs of cx along x and cy along y per invocation, zc planes per workgroup. */
export interface PlaneTile {
  tw: number;
  th: number;
  cx: number;
  cy: number;
  zc: number;
}

export interface PlaneSpec extends PlaneTile {
  dtype: ConvDtype;
  mode: BorderMode;
  wx: Float32Array;
  wy: Float32Array;
}

/** Invocations of the x-y pass's workgroup. */
export const PLANE_THREADS = 256;

/**
 * Row pitches of the plane pass's two workgroup arrays: odd, so that 32 invocations walking down 32 rows (the x
 * run of each row, the y run of each column) hit 32 different banks.
 */
function planePitches(t: PlaneTile, kx: number, ky: number): { iw: number; ih: number; tp: number; rp: number } {
  const iw = t.tw + kx - 1, ih = t.th + ky - 1;
  return { iw, ih, tp: iw | 1, rp: t.tw | 1 };
}

/** Bytes of workgroup memory the x-y pass needs: the input tile and the x-filtered rows. */
export function planeSharedBytes(t: PlaneTile, kx: number, ky: number): number {
  const { ih, tp, rp } = planePitches(t, kx, ky);
  return ih * (tp + rp) * 4;
}

/**
 * One run of `n` outputs of a 1-D filter from n + k − 1 consecutive values in registers: each value is read once
 * and added to every output whose window holds it, in tap order (the same sums, in the same order, as one output
 * at a time).
 */
function slidingRun(w: Float32Array, n: number, read: (j: number) => string, acc: (q: number) => string): string {
  const lines: string[] = [];
  for (let q = 0; q < n; q++) lines.push(`var ${acc(q)} = 0.0;`);
  for (let j = 0; j < n + w.length - 1; j++) {
    const terms: string[] = [];
    for (let q = Math.max(0, j - w.length + 1); q <= Math.min(n - 1, j); q++) if (w[j - q] !== 0) terms.push(`${acc(q)} += ${bits(w[j - q])} * v;`);
    if (terms.length) lines.push(`{ let v = ${read(j)}; ${terms.join(' ')} }`);
  }
  return lines.join('\n      ');
}

/**
 * The x-y pass of the separable implementation: scipy's x then y 1-D passes over each plane in one kernel, the
 * intermediate in workgroup memory instead of a float32 volume in global memory. A workgroup stages a tw × th tile
 * of a plane with its halo, filters it along x into `rows` (each invocation a run of cx outputs of one row, sliding
 * in registers: cx + kx − 1 reads for cx outputs instead of cx · kx), then along y (runs of cy outputs of one
 * column), and writes the plane's outputs; it steps through zc planes, the next plane's loads issued before the
 * current one is filtered. The z pass (if any) follows as its own streaming pass.
 */
export function planeWgsl(s: PlaneSpec): string {
  const { tw, th, cx, cy, zc, mode } = s;
  const kx = s.wx.length, ky = s.wy.length;
  const { iw, ih, tp, rp } = planePitches(s, kx, ky);
  const constant = mode === 'constant';
  const nt = PLANE_THREADS, cells = iw * ih, per = Math.ceil(cells / nt);
  const elems = Array.from({ length: per }, (_, e) => e);
  const guard = (n: number, e: number, body: string) => ((e + 1) * nt > n ? `if (li + ${e * nt}u < ${n}u) { ${body} }` : body);
  const xItems = ih * (tw / cx), yItems = tw * (th / cy);
  const rounds = (n: number) => Array.from({ length: Math.ceil(n / nt) }, (_, e) => e);
  const load = (e: number) => guard(cells, e, constant
    ? `r${e} = select(g.cval, load(base + u32(max(o${e}, 0i))), o${e} >= 0i);`
    : `r${e} = load(base + u32(o${e}));`);
  const xRun = (e: number) => guard(xItems, e, `{
      let i = li + ${e * nt}u;
      let row = i % ${ih}u;
      let c0 = (i / ${ih}u) * ${cx}u;
      ${slidingRun(s.wx, cx, (j) => `tile[row * ${tp}u + c0 + ${j}u]`, (q) => `x${q}`)}
      ${constant ? `let yr = gy0 + i32(row);
      let yout = yr < g.lo.y || yr >= g.hi.y;\n      ${Array.from({ length: cx }, (_, q) => `if (yout) { x${q} = g.cval; }`).join(' ')}` : ''}
      ${Array.from({ length: cx }, (_, q) => `rows[row * ${rp}u + c0 + ${q}u] = x${q};`).join(' ')}
    }`);
  const yRun = (e: number) => guard(yItems, e, `{
      let i = li + ${e * nt}u;
      let col = i % ${tw}u;
      let r0 = (i / ${tw}u) * ${cy}u;
      ${slidingRun(s.wy, cy, (j) => `rows[(r0 + ${j}u) * ${rp}u + col]`, (q) => `y${q}`)}
      let ox = bx * ${tw}u + col;
      let oy = by * ${th}u + r0;
      if (ox < u32(g.nOut.x)) {
        ${Array.from({ length: cy }, (_, q) => `if (oy + ${q}u < u32(g.nOut.y)) { dst[outPlane + (oy + ${q}u) * u32(g.nOut.x) + ox] = y${q}; }`).join('\n        ')}
      }
    }`);
  return /* wgsl */ `
${Geo.wgsl}
${sourceWgsl(s.dtype)}
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> g: Geo;
${borderMapWgsl(mode)}

var<workgroup> tile: array<f32, ${ih * tp}>;
var<workgroup> rows: array<f32, ${ih * rp}>;

@compute @workgroup_size(${nt})
fn plane(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let tilesX = (u32(g.nOut.x) + ${tw - 1}u) / ${tw}u;
  let tilesY = (u32(g.nOut.y) + ${th - 1}u) / ${th}u;
  let tid = wid.x + wid.y * nwg.x;
  if (tid >= tilesX * tilesY) { return; }
  let bx = tid % tilesX;
  let by = tid / tilesX;
  let gx0 = i32(bx * ${tw}u) + g.off.x;
  let gy0 = i32(by * ${th}u) + g.off.y;
  let z0 = wid.z * ${zc}u;
  let z1 = min(z0 + ${zc}u, u32(g.nOut.z));
  let planeIn = u32(g.nIn.x) * u32(g.nIn.y);
  // In-plane offsets of the cells this invocation stages, border applied once; −1: the constant value.
  ${elems.map((e) => `var o${e} = 0i;\n  var r${e} = 0.0;\n  var s${e} = 0u;`).join('\n  ')}
  ${elems.map((e) => guard(cells, e, `{
    let c = li + ${e * nt}u;
    let x = gx0 + i32(c % ${iw}u);
    let y = gy0 + i32(c / ${iw}u);
    s${e} = (c / ${iw}u) * ${tp}u + c % ${iw}u;
    o${e} = bmap(y, g.nIn.y) * g.nIn.x + bmap(x, g.nIn.x);
    ${constant ? `if (x < g.lo.x || x >= g.hi.x || y < g.lo.y || y >= g.hi.y) { o${e} = -1i; }` : ''}
  }`)).join('\n  ')}
  {
    let base = z0 * planeIn;
    ${elems.map(load).join('\n    ')}
  }
  for (var z = z0; z < z1; z++) {
    ${elems.map((e) => guard(cells, e, `tile[s${e}] = r${e};`)).join('\n    ')}
    workgroupBarrier();
    if (z + 1u < z1) {
      let base = (z + 1u) * planeIn;
      ${elems.map(load).join('\n      ')}
    }
    ${rounds(xItems).map(xRun).join('\n    ')}
    workgroupBarrier();
    let outPlane = z * u32(g.nOut.x) * u32(g.nOut.y);
    ${rounds(yItems).map(yRun).join('\n    ')}
  }
}`;
}

/** The binding names of magnitudeWgsl's parts, in order. */
export const MAGNITUDE_PARTS = ['a', 'b', 'c'] as const;

/**
 * √(Σ cᵢ²) of 2 or 3 float32 buffers, in float32, without overflow or underflow (as np.hypot): where the largest
 * |cᵢ| lies beyond 2^±60 its squares would leave float32's range (a Sobel gradient of values above ~2^63 summed to
 * +inf where scipy's magnitude is finite), so the parts are scaled by a power of two first — exactly — and the
 * root scaled back. Parts in range (every image of real data) take the plain form, unchanged.
 */
export function magnitudeWgsl(parts: number): string {
  const names = MAGNITUDE_PARTS.slice(0, parts);
  return /* wgsl */ `
${names.map((n, i) => `@group(0) @binding(${i}) var<storage, read> ${n}: array<f32>;`).join('\n')}
@group(0) @binding(${parts}) var<storage, read_write> dst: array<f32>;
${CountParams.wgsl}
@group(0) @binding(${parts + 1}) var<uniform> P: Count;
${gridWgsl}
@compute @workgroup_size(256)
fn magnitude(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = linear_group_id(wid, nwg) * 256u + li;
  if (i >= P.n) { return; }
  ${names.map((v) => `let ${v}v = ${v}[i];`).join('\n  ')}
  let m = ${names.map((v) => `abs(${v}v)`).reduce((acc, x) => `max(${acc}, ${x})`)};
  if ((m > 0x1p60f && m <= 0x1.fffffep+127f) || (m > 0.0 && m < 0x1p-60f)) {
    let e = frexp(m).exp;
    ${names.map((v) => `let ${v}_s = ldexp(${v}v, -e);`).join('\n    ')}
    dst[i] = ldexp(sqrt(${names.map((v) => `${v}_s * ${v}_s`).join(' + ')}), e);
    return;
  }
  dst[i] = sqrt(${names.map((v) => `${v}v * ${v}v`).join(' + ')});
}`;
}

/**
 * float32 → u8/u16 (packed words), rounded half to even and saturated; NaN → 0. With `boxArea`, the values are
 * exact box window sums, rounded as cv2.blur does (box.ts, roundBox8 and roundBoxSum): 8-bit as measured; 16-bit
 * round(sum · float(1/area)) before column n.z of each row of n.y pixels, the exact quotient from there on
 * (integers: sums < 2^24).
 */
export function castWgsl(dtype: 'uint8' | 'uint16', boxArea?: number, fixedShift?: number): string {
  const [per, max, shift] = dtype === 'uint8' ? [4, 255, 8] : [2, 65535, 16];
  const pow2 = boxArea !== undefined && (boxArea & (boxArea - 1)) === 0;
  // cv2's fixed-point Gaussian (gauss8.ts): exact sums, (s + 2^(shift−1)) >> shift, saturated.
  const box = fixedShift ? /* wgsl */ `
fn box_round(s: f32, i: u32) -> u32 {
  return min((u32(s) + ${2 ** (fixedShift - 1)}u) >> ${fixedShift}u, 255u);
}` : boxArea === undefined ? '' : dtype === 'uint8' ? /* wgsl */ `
fn box_round(s: f32, i: u32) -> u32 {
  let a = ${boxArea}u;
  return ${boxArea === 1 ? 'u32(s)' : pow2 ? 'min((u32(s) + a / 2u + 1u) / a, 255u)' : '(2u * u32(s) + a) / (2u * a)'};
}` : /* wgsl */ `
fn box_round(s: f32, i: u32) -> u32 {
  if (i % P.row < P.tail) { return sat(s * bitcast<f32>(${f32ToBits(boxScale(boxArea))}u)); }
  let a = ${boxArea}u;
  let si = u32(s);
  var q = (2u * si + a) / (2u * a);
  if ((2u * si) % (2u * a) == a && (q & 1u) == 1u) { q -= 1u; }
  return q;
}`;
  return /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
${CastParams.wgsl}
@group(0) @binding(2) var<uniform> P: Cast;
${gridWgsl}
fn sat(v: f32) -> u32 { return select(0u, u32(min(round(v), ${max}.0)), v > 0.0); }${box}
@compute @workgroup_size(256)
fn cast_sat(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) li: u32) {
  let w = linear_group_id(wid, nwg) * 256u + li;
  if (w * ${per}u >= P.n) { return; }
  var word = 0u;
  for (var k = 0u; k < ${per}u; k++) {
    let i = w * ${per}u + k;
    if (i < P.n) { word |= ${boxArea === undefined ? 'sat(src[i])' : 'box_round(src[i], i)'} << (k * ${shift}u); }
  }
  dst[w] = word;
}`;
}

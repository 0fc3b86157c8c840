import { defineUniforms } from '../uniforms.js';
import { gridWgsl } from './grid.js';

/**
 * WGSL statements: an inclusive prefix sum (Hillis–Steele) of the u32 workgroup array `array` of `n` lanes, in
 * place (or of vectors: `zero` their zero, e.g. `vec4u(0u)`), lane `lane` per invocation. The caller has written its lane and must call it in uniform control flow
 * (it holds the barriers); afterwards `array[lane]` is the sum of lanes 0..lane.
 */
export function workgroupScanWgsl(array: string, lane: string, n: number, zero = '0u'): string {
  return `workgroupBarrier();
  for (var d = 1u; d < ${n}u; d <<= 1u) {
    var v = ${zero};
    if (${lane} >= d) { v = ${array}[${lane} - d]; }
    workgroupBarrier();
    ${array}[${lane}] += v;
    workgroupBarrier();
  }`;
}

/** Lanes of one workgroup of the device-wide scan (scanKernelsWgsl, core/gpu/prefix-sum.ts). */
export const SCAN_WG = 256;

/** Elements each lane of the device-wide scan takes: a workgroup scans SCAN_WG · SCAN_PER of them. */
export const SCAN_PER = 8;

/** Elements one workgroup of the device-wide scan covers. */
export const SCAN_GROUP = SCAN_WG * SCAN_PER;

/** The element count of one level of the device-wide scan. */
export const ScanParams = defineUniforms('ScanParams', { n: 'u32' });

/**
 * The kernels of a device-wide exclusive prefix sum of u32 (core/gpu/prefix-sum.ts), one level at a time:
 * `scan_groups` replaces each workgroup's SCAN_GROUP elements of `data` by their exclusive prefix sum within the
 * group and writes the group's total to `sums`; `scan_add` adds to each element its group's entry of `sums`
 * (by then itself scanned). `P.n` elements; the groups are folded into 2D by grid1d(). A group's elements are read
 * coalesced into workgroup memory, each lane sums its SCAN_PER consecutive ones, and the lanes' sums are scanned:
 * SCAN_PER elements a lane make two levels cover 4.2 M elements (one lane an element needed three levels past 65 536,
 * two dispatches more — each a bind group and a parameter buffer on the JavaScript thread, several a JPEG encode).
 */
export function scanKernelsWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${ScanParams.wgsl}
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> P: ScanParams;
var<workgroup> tile: array<u32, ${SCAN_GROUP}>;
var<workgroup> lanes: array<u32, ${SCAN_WG}>;

@compute @workgroup_size(${SCAN_WG})
fn scan_groups(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let base = g * ${SCAN_GROUP}u;
  for (var k = 0u; k < ${SCAN_PER}u; k++) {
    let i = base + k * ${SCAN_WG}u + li;
    var x = 0u;
    if (i < P.n) { x = data[i]; }
    tile[k * ${SCAN_WG}u + li] = x;
  }
  workgroupBarrier();
  var own = 0u;
  for (var k = 0u; k < ${SCAN_PER}u; k++) {
    let v = tile[li * ${SCAN_PER}u + k];
    tile[li * ${SCAN_PER}u + k] = own;
    own += v;
  }
  lanes[li] = own;
  ${workgroupScanWgsl('lanes', 'li', SCAN_WG)}
  let before = lanes[li] - own;
  for (var k = 0u; k < ${SCAN_PER}u; k++) { tile[li * ${SCAN_PER}u + k] += before; }
  workgroupBarrier();
  for (var k = 0u; k < ${SCAN_PER}u; k++) {
    let i = base + k * ${SCAN_WG}u + li;
    if (i < P.n) { data[i] = tile[k * ${SCAN_WG}u + li]; }
  }
  if (li == ${SCAN_WG - 1}u) { sums[g] = lanes[li]; }
}

@compute @workgroup_size(${SCAN_WG})
fn scan_add(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let add = sums[g];
  for (var k = 0u; k < ${SCAN_PER}u; k++) {
    let i = g * ${SCAN_GROUP}u + k * ${SCAN_WG}u + li;
    if (i < P.n) { data[i] += add; }
  }
}
`;
}

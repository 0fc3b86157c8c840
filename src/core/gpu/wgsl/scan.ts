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

/** The element count of one level of the device-wide scan. */
export const ScanParams = defineUniforms('ScanParams', { n: 'u32' });

/**
 * The kernels of a device-wide exclusive prefix sum of u32 (core/gpu/prefix-sum.ts), one level at a time:
 * `scan_groups` replaces each workgroup's SCAN_WG elements of `data` by their exclusive prefix sum within the
 * group and writes the group's total to `sums`; `scan_add` adds to each element its group's entry of `sums`
 * (by then itself scanned). `P.n` elements; the groups are folded into 2D by grid1d().
 */
export function scanKernelsWgsl(): string {
  return /* wgsl */ `
${gridWgsl}
${ScanParams.wgsl}
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> P: ScanParams;
var<workgroup> lanes: array<u32, ${SCAN_WG}>;

@compute @workgroup_size(${SCAN_WG})
fn scan_groups(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let i = g * ${SCAN_WG}u + li;
  var own = 0u;
  if (i < P.n) { own = data[i]; }
  lanes[li] = own;
  ${workgroupScanWgsl('lanes', 'li', SCAN_WG)}
  if (i < P.n) { data[i] = lanes[li] - own; }
  if (li == ${SCAN_WG - 1}u) { sums[g] = lanes[li]; }
}

@compute @workgroup_size(${SCAN_WG})
fn scan_add(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let g = linear_group_id(wid, nwg);
  let i = g * ${SCAN_WG}u + li;
  if (i < P.n) { data[i] += sums[g]; }
}
`;
}

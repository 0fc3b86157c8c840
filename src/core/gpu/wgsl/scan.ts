/**
 * WGSL statements: an inclusive prefix sum (Hillis–Steele) of the u32 workgroup array `array` of `n` lanes, in
 * place, lane `lane` per invocation. The caller has written its lane and must call it in uniform control flow
 * (it holds the barriers); afterwards `array[lane]` is the sum of lanes 0..lane.
 */
export function workgroupScanWgsl(array: string, lane: string, n: number): string {
  return `workgroupBarrier();
  for (var d = 1u; d < ${n}u; d <<= 1u) {
    var v = 0u;
    if (${lane} >= d) { v = ${array}[${lane} - d]; }
    workgroupBarrier();
    ${array}[${lane}] += v;
    workgroupBarrier();
  }`;
}

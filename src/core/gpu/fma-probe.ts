/**
 * Whether the adapter's WGSL `fma()` is a true fused multiply-add (one rounding of a·b + c). WGSL lets it round
 * the product first — lavapipe does, the H100's driver fuses — so kernels that need the exact fma (the Gaussian
 * threshold) emulate it in software (wgsl/exact-float.ts fma_rn) unless this probe, run once per context
 * (GpuContext.fusedFma), saw `fma()` give the fused result on inputs where fused and unfused differ.
 */
import { bindGroupEntries } from './bindings.js';

/**
 * fma32(a, b, c) = RN(a·b + c) in float32, exactly: a·b of two float32 is exact in double; the double sum s = a·b + c
 * rounds, and its error e (TwoSum) decides the float32 rounding when s falls exactly halfway between two floats.
 */
export function fma32(a: number, b: number, c: number): number {
  const x = a * b, s = x + c, bb = s - x;
  const e = (x - (s - bb)) + (c - bb);
  const r = Math.fround(s);
  if (e === 0 || r === s) return r;
  const other = r + 2 * (s - r); // the float32 on the far side of s, if s lies halfway
  if (Math.fround(other) !== other) return r;
  return e > 0 ? Math.max(r, other) : Math.min(r, other);
}

/** a·b + c with the product rounded to float32 first: what an unfused `fma()` returns. */
export function unfused32(a: number, b: number, c: number): number {
  return Math.fround(Math.fround(a * b) + c);
}

const f = Math.fround;
const u = 1 + 2 ** -12;
/**
 * (a, b, c), all float32 and every result normal, where fma32 ≠ unfused32 (test/gpu/fma-probe.test.ts checks it):
 * cancellation exposing the product's low bits, a product exactly halfway that c tips either way (where RN(a·b)
 * alone ties to even), a product just below a tie, and taps × pixels as the Gaussian threshold has them.
 */
export const FMA_PROBE_CASES: readonly (readonly [number, number, number])[] = [
  [u, u, -(1 + 2 ** -11)], //                 a·b = 1 + 2⁻¹¹ + 2⁻²⁴: fused 2⁻²⁴, unfused 0
  [u, u, 2 ** -30], //                        halfway + a bit: fused rounds up, RN(a·b) ties down to even
  [-u, u, -(2 ** -30)], //                    the same, negative
  [1 + 2 ** -23, 1 - 2 ** -24, -1], //        a·b = 1 + 2⁻²⁴ − 2⁻⁴⁷, just below a tie: fused 2⁻²⁴ − 2⁻⁴⁷, unfused 0
  [f(0.1), 183, -f(f(0.1) * 183)], //         a tap × a pixel minus its rounding: the product's rounding error
  [f(1 / 3), f(3.7), -f(f(1 / 3) * f(3.7))],
];

/** WGSL: res[i] = fma(a, b, c) of the i-th case, the operands read from a buffer so nothing can be folded. */
const probeWgsl = /* wgsl */ `
@group(0) @binding(0) var<storage, read> ops: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> res: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x;
  if (i >= arrayLength(&res)) { return; }
  res[i] = fma(ops[i].x, ops[i].y, ops[i].z);
}`;

/** The device the probe needs (GpuContext's `device` and `pipeline`), kept structural so context.ts can call it. */
export interface FmaProbeTarget {
  readonly device: GPUDevice;
  pipeline(label: string, code: string, entryPoint: string): Promise<GPUComputePipeline>;
}

/** What `fma()` returned for each of FMA_PROBE_CASES. */
export async function runFmaProbe(ctx: FmaProbeTarget): Promise<Float32Array> {
  const n = FMA_PROBE_CASES.length;
  const pipeline = await ctx.pipeline('fma probe', probeWgsl, 'main');
  const { device } = ctx;
  const ops = device.createBuffer({ size: n * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label: 'fma probe operands' });
  const res = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, label: 'fma probe results' });
  const read = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'fma probe readback' });
  try {
    device.queue.writeBuffer(ops, 0, new Float32Array(FMA_PROBE_CASES.flatMap(([a, b, c]) => [a, b, c, 0])));
    const enc = device.createCommandEncoder({ label: 'fma probe' });
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bindGroupEntries(pipeline, 'fma probe', { ops, res }) }));
    pass.dispatchWorkgroups(1);
    pass.end();
    enc.copyBufferToBuffer(res, 0, read, 0, n * 4);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    return new Float32Array(read.getMappedRange().slice(0));
  } finally {
    for (const b of [ops, res, read]) b.destroy();
  }
}

/** True when `fma()` gave the exact fused result on every probe case. */
export async function probeFusedFma(ctx: FmaProbeTarget): Promise<boolean> {
  const got = await runFmaProbe(ctx);
  return FMA_PROBE_CASES.every(([a, b, c], i) => Object.is(got[i], fma32(a, b, c)));
}

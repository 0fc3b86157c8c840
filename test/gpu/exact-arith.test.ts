import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { download } from '../../src/core/gpu/transfer.js';
import { fma32 } from '../../src/core/gpu/fma-probe.js';
import { exactFmaWgsl } from '../../src/core/gpu/wgsl/exact-float.js';
import { f64Wgsl } from '../../src/core/gpu/wgsl/f64.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

// Each invocation reads operands a, b and writes a + b, a − b, a · b, a / b, (a < b) and the conversions of
// a's low word and of the 64-bit integer (a.lo, a.hi & 0x1fffff).
const kernel = /* wgsl */ `
${f64Wgsl}
@group(0) @binding(0) var<storage, read> ops: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> res: array<vec2u>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x;
  if (i >= arrayLength(&ops)) { return; }
  let a = ops[i].xy;
  let b = ops[i].zw;
  res[8u * i] = f64_add(a, b);
  res[8u * i + 1u] = f64_sub(a, b);
  res[8u * i + 2u] = f64_mul(a, b);
  res[8u * i + 3u] = select(vec2u(0u), f64_div(a, b), !f64_is_zero(b));
  res[8u * i + 4u] = vec2u(select(0u, 1u, f64_lt(a, b)), 0u);
  res[8u * i + 5u] = f64_from_u32(a.x);
  res[8u * i + 6u] = f64_from_u64(vec2u(a.x, a.y & 0x1fffffu));
  res[8u * i + 7u] = vec2u(0u);
}`;

/** Runs `code` over `items` invocations (bindings: 0 the input words, 1 `outWords` result words, 2 a uniform holding 0). */
async function runKernel(gpu: GpuContext, code: string, input: Uint32Array, items: number, outWords: number): Promise<Uint32Array> {
  const pipeline = await gpu.pipeline('exact arithmetic test', code, 'main');
  const make = (size: number, usage: number) => gpu.device.createBuffer({ size, usage });
  const ops = make(input.byteLength, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST);
  const res = make(outWords * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const zero = make(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  try {
    gpu.device.queue.writeBuffer(ops, 0, input as Uint32Array<ArrayBuffer>);
    const enc = gpu.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    const entries = [ops, res, zero].map((buffer, binding) => ({ binding, resource: { buffer } }));
    pass.setBindGroup(0, gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: code.includes('binding(2)') ? entries : entries.slice(0, 2) }));
    pass.dispatchWorkgroups(Math.ceil(items / 64));
    pass.end();
    gpu.device.queue.submit([enc.finish()]);
    return await download(gpu, res, new Uint32Array(outWords));
  } finally {
    ops.destroy();
    res.destroy();
    zero.destroy();
  }
}

/** Operand pairs that reach every rounding case: random magnitudes and signs, cancellations, halfway cases. */
function operands(): Float64Array {
  const out: number[] = [];
  const bits = new Float64Array(1), words = new Uint32Array(bits.buffer);
  const r = randomBytes(1 << 16, 64);
  let k = 0;
  const next = () => r[k++ % r.length] | (r[k++ % r.length] << 8) | (r[k++ % r.length] << 16) | (r[k++ % r.length] << 24);
  const random = (e: number) => {
    words[0] = next() >>> 0;
    words[1] = ((next() & 0x800fffff) | ((1023 + e) << 20)) >>> 0;
    return bits[0];
  };
  for (let i = 0; i < 3000; i++) {
    const ea = (next() % 60) - 30, eb = i % 3 === 0 ? ea + (next() % 3) - 1 : (next() % 60) - 30;
    const a = random(ea);
    out.push(a, random(eb));
    if (i % 5 === 0) out.push(a, -a, a, a, a, a * (1 + 2 ** -52), a, -a * (1 - 2 ** -53));
  }
  // Halfway cases for the addition (ties to even both ways) and exact small integers, zero operands.
  out.push(1, 2 ** -53, 1 + 2 ** -52, 2 ** -53, 1, 2 ** -53 * (1 + 2 ** -52), 1, -(2 ** -54), 3, 7, 0, 5, 5, 0, 0, 0);
  out.push(1, 3, 2, 3, 10, 3, 1 / 3, 3, 0.1, 0.2, 1e-150, 1e-20, 255, 1 / 1234567);
  // Division digits at their extremes: equal mantissas, the largest over the smallest and back, neighbours.
  const top = 2 - 2 ** -52, above1 = 1 + 2 ** -52;
  out.push(1.5, 1.5, top, 1, 1, top, above1, top, top, above1, top, top, 3 * above1, above1, 7, 7 * top);
  return new Float64Array(out);
}

test('software float64 in WGSL rounds add, sub, mul, div, comparison and conversions as the CPU does', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const x = operands();
  const n = x.length / 2;
  const got = new Float64Array((await runKernel(gpu, kernel, new Uint32Array(x.buffer), n, n * 16)).buffer);
  assert.ok(got.some((v) => v !== 0));
  {
    const words = new Uint32Array(x.buffer);
    const wrong: string[] = [];
    const same = (p: number, q: number) => p === q || (p === 0 && q === 0); // the sign of zero is not tracked
    for (let i = 0; i < n; i++) {
      const a = x[2 * i], b = x[2 * i + 1], g = got.subarray(8 * i, 8 * i + 8);
      const lo = words[4 * i], hi = words[4 * i + 1] & 0x1fffff;
      const want = { add: a + b, sub: a - b, mul: a * b, div: b === 0 ? 0 : a / b, from_u32: lo, from_u64: hi * 2 ** 32 + lo };
      for (const [j, name] of (['add', 'sub', 'mul', 'div', '', 'from_u32', 'from_u64'] as const).entries()) {
        if (name && !same(g[j], want[name])) wrong.push(`${name}(${a}, ${b}) = ${g[j]}, CPU ${want[name]}`);
      }
      if (new Uint32Array(g.buffer, g.byteOffset + 32, 1)[0] !== Number(a < b)) wrong.push(`lt(${a}, ${b})`);
    }
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} of ${n * 7} results differ`);
  }
});

const fmaKernel = /* wgsl */ `
${exactFmaWgsl}
@group(0) @binding(0) var<storage, read> ops: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> res: array<vec2f>;
@group(0) @binding(2) var<uniform> Z: vec4u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x;
  if (i >= arrayLength(&ops)) { return; }
  let o = ops[i];
  res[i] = vec2f(fma_rn(o.x, o.y, o.z, Z.x), fma_rn_small(o.x, o.w, o.z, Z.x));
}`;

test('fma_rn in WGSL is the fused f32 multiply-add on every backend (lavapipe\'s fma() rounds the product first)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // The operands of the Gaussian threshold: taps in (2^-14, 1), pixels, sums of two row values, partial sums.
  const n = 100000;
  const ops = new Float32Array(4 * n);
  const r = new Uint32Array(randomBytes(16 * n, 15).buffer);
  const unit = (i: number) => r[i] / 2 ** 32;
  for (let i = 0; i < n; i++) {
    ops[4 * i] = unit(4 * i) * 2 ** -(r[4 * i + 1] % 14);
    ops[4 * i + 1] = i % 2 ? r[4 * i + 2] % 256 : unit(4 * i + 2) * 510;
    ops[4 * i + 2] = unit(4 * i + 3) * 2 ** (r[4 * i + 1] % 9);
    ops[4 * i + 3] = r[4 * i + 3] % 256;
  }
  const got = new Float32Array((await runKernel(gpu, fmaKernel, new Uint32Array(ops.buffer), n, 2 * n)).buffer);
  let fused = 0;
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    const [a, b, c, x] = ops.subarray(4 * i, 4 * i + 4);
    const want = fma32(a, b, c);
    if (want !== Math.fround(Math.fround(a * b) + c)) fused++;
    if (got[2 * i] !== want) wrong.push(`fma_rn(${a}, ${b}, ${c}) = ${got[2 * i]}, fused ${want}`);
    if (got[2 * i + 1] !== fma32(a, x, c)) wrong.push(`fma_rn_small(${a}, ${x}, ${c}) = ${got[2 * i + 1]}, fused ${fma32(a, x, c)}`);
  }
  assert.ok(fused > 1000, `the operands tell fused from unfused (${fused})`);
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} results differ`);
});

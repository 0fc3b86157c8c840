import assert from 'node:assert/strict';
import { test } from 'node:test';
import { download } from '../../src/core/gpu/transfer.js';
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
  return new Float64Array(out);
}

test('software float64 in WGSL rounds add, sub, mul, div, comparison and conversions as the CPU does', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const x = operands();
  const n = x.length / 2;
  const pipeline = await gpu.pipeline('f64 test', kernel, 'main');
  const ops = gpu.device.createBuffer({ size: x.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const res = gpu.device.createBuffer({ size: n * 64, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  try {
    gpu.device.queue.writeBuffer(ops, 0, x as Float64Array<ArrayBuffer>);
    const enc = gpu.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, gpu.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: ops } }, { binding: 1, resource: { buffer: res } }] }));
    pass.dispatchWorkgroups(Math.ceil(n / 64));
    pass.end();
    gpu.device.queue.submit([enc.finish()]);
    const got = new Float64Array((await download(gpu, res, new Uint32Array(n * 16))).buffer);
    assert.ok(got.some((v) => v !== 0));
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
  } finally {
    ops.destroy();
    res.destroy();
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { Recording, type Bindings } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { imageFrom } from '../../src/core/image.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

// Bindings numbered out of declaration order, so binding by position or by a wrong name gives other numbers.
const MODULE = /* wgsl */ `
struct Params { add: u32, n: u32 }
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> unused: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < P.n) { dst[id.x] = src[id.x] + P.add; }
}`;

function storage(ctx: GpuContext, data: Uint32Array, label: string): GPUBuffer {
  const b = ctx.createBuffer(data.byteLength, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, label);
  ctx.device.queue.writeBuffer(b, 0, data as Uint32Array<ArrayBuffer>);
  return b;
}

async function read(ctx: GpuContext, b: GPUBuffer, words: number): Promise<number[]> {
  const staging = ctx.createBuffer(words * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'readback');
  const enc = ctx.device.createCommandEncoder();
  enc.copyBufferToBuffer(b, 0, staging, 0, words * 4);
  ctx.device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = [...new Uint32Array(staging.getMappedRange().slice(0))];
  staging.destroy();
  return out;
}

test('bindings by name: a dispatch binds the WGSL variables it names, whatever their numbers', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const pipeline = await ctx.pipeline('bindings test', MODULE, 'main');
  const src = storage(ctx, new Uint32Array([1, 2, 3, 4]), 'src');
  const dst = storage(ctx, new Uint32Array(4), 'dst');
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'bindings test');
  const P = ctx.createBuffer(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, 'params');
  ctx.device.queue.writeBuffer(P, 0, new Uint32Array([10, 4, 0, 0]));
  await ctx.scoped('bindings test', async () => {
    rec.dispatch('add', pipeline, { P, dst, src }, 1);
    rec.submit();
    await ctx.finish();
  });
  assert.deepEqual(await read(ctx, dst, 4), [11, 12, 13, 14]);
  for (const b of [src, dst, P]) b.destroy();
});

test('bindings by name: an unknown, unused, missing or numbered binding is an error naming the pipeline and its bindings', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const pipeline = await ctx.pipeline('bindings test', MODULE, 'main');
  const b = ctx.createBuffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.UNIFORM, 'any');
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'bindings test');
  const known = /the module's bindings: src \(2\), dst \(0\), P \(3\), unused \(1\); its entry point uses P, dst, src/;
  const fails = (bindings: Bindings, what: RegExp) => {
    assert.throws(() => rec.dispatch('add', pipeline, bindings, 1), (e: Error) => what.test(e.message) && known.test(e.message) && /^add: pipeline 'bindings test:main'/.test(e.message));
  };
  fails({ src: b, dst: b, P: b, source: b }, /has no binding 'source'/);
  fails({ src: b, dst: b, P: b, unused: b }, /does not use binding 'unused'/);
  fails({ src: b, P: b }, /uses binding 'dst', which was not given/);
  fails({ 0: b, 2: b, 3: b } as never, /has no binding '0'/);
  rec.submit();
  b.destroy();
});

test('bindings by name: adaptive and Gaussian thresholds (kernels bound in part, a buffer under another name) equal the CPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = imageFrom(randomBytes(61 * 97, 7), [61, 97]);
  for (const method of ['adaptive', 'gaussian', 'mean'] as const) {
    const [g, c] = [await threshold(img, { method, gpu }), await threshold(img, { method })];
    assert.ok(compareImages(g.output, c.output).identical, method);
  }
});

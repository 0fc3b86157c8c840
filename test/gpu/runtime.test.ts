import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GpuDeviceLostError, GpuOutOfMemoryError, ShaderCompileError } from '../../src/core/errors.js';
import { imageFrom } from '../../src/core/image.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { randomBytes } from '../helpers/fixtures.js';
import { download, upload } from '../../src/core/gpu/transfer.js';
import { gpuOrSkip } from '../helpers/gpu.js';

const distSrc = new URL('../../src/', import.meta.url).href;

/**
 * The Dawn hazard: GPU buffers exist, the main thread runs busy (allocating) JavaScript for over a second,
 * then work is submitted. With the GPU object unreferenced, the GC destroyed Dawn's instance under the live
 * device and the next event poll crashed (abort, segfault, futex error or a silent exit). Runs in a child
 * process so a crash fails this test instead of killing the runner; three rounds, as it was intermittent.
 */
test('stress: busy main thread between buffer creation and GPU work does not crash Dawn', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-stress-'));
  const script = join(dir, 'stress.mjs');
  writeFileSync(script, `
    import { createNodeGpuContext } from '${distSrc}node/gpu.js';
    import { GpuImage } from '${distSrc}core/gpu/gpu-image.js';
    import { equalize } from '${distSrc}ops/equalize/index.js';
    const ctx = await createNodeGpuContext();
    const img = { data: new Uint8Array(1920 * 1080).map((_, i) => i * 31), shape: [1080, 1920], channels: 1, dtype: 'uint8' };
    const dev = await GpuImage.upload(ctx, img);
    let junk = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 1500) { junk.push({ a: Math.random(), b: [1, 2, 3] }); if (junk.length > 1e5) junk = []; }
    for (let r = 0; r < 5; r++) { const o = await equalize(dev); await o.output.toHost(); o.output.release(); }
    await equalize(img, { gpu: ctx });
    ctx.destroy();
    console.log('stress-ok');
  `);
  for (let round = 0; round < 3; round++) {
    const r = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `round ${round}: exit ${r.status} signal ${r.signal}\n${r.stderr}`);
    assert.match(r.stdout, /stress-ok/, `round ${round}: did not finish (silent exit)`);
  }
});

test('device loss is a GpuDeviceLostError, not a crash or zeros', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const ctx = await createNodeGpuContext();
  const img = imageFrom(randomBytes(64 * 64, 3), [64, 64]);
  await equalize(img, { gpu: ctx });
  ctx.device.destroy();
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(equalize(img, { gpu: ctx }), GpuDeviceLostError);
});

test('a WGSL compile failure is a ShaderCompileError quoting the line', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const bad = '@compute @workgroup_size(1)\nfn main() {\n  let x: u32 = 1.5 + undefined_thing;\n}\n';
  await assert.rejects(ctx.pipeline('broken', bad, 'main'), (e: unknown) => {
    assert.ok(e instanceof ShaderCompileError);
    assert.match((e as Error).message, /WGSL line 3/);
    assert.match((e as Error).message, /undefined_thing/);
    return true;
  });
});

test('an image larger than the device allows is a GpuOutOfMemoryError with sizes', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  assert.throws(() => ctx.createBuffer(ctx.limits.maxBufferSize + 16, GPUBufferUsage.STORAGE, 'huge image'), (e: unknown) => {
    assert.ok(e instanceof GpuOutOfMemoryError);
    assert.match((e as Error).message, /huge image needs .* at most/);
    return true;
  });
});

/**
 * host is derived (what the wall clock leaves), so "parts sum to total" alone proves nothing: the independent
 * checks are that each measured phase is really measured (positive on a host→host call that waits between
 * phases), that the measured phases fit inside the call's own total without host being clamped to hide an
 * overrun, and that total fits inside a wall clock taken around the call from outside.
 */
test('timings: total = host + upload + kernels + download, kernels from timestamps where available', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const img = imageFrom(randomBytes(300 * 200, 4), [200, 300]);
  const before = performance.now();
  const { timings } = await equalize(img, { gpu: ctx, profile: true });
  const wall = performance.now() - before;
  const kernels = timings.kernels.reduce((a, k) => a + k.ms, 0);
  const measured = timings.upload + kernels + timings.download;
  assert.ok(timings.upload > 0 && timings.download > 0 && kernels > 0, `phases not measured: ${JSON.stringify(timings)}`);
  assert.ok(timings.kernels.every((k) => k.ms >= 0), JSON.stringify(timings.kernels));
  assert.ok(measured <= timings.total, `measured phases ${measured} ms exceed the call's total ${timings.total} ms`);
  assert.ok(timings.total <= wall, `total ${timings.total} ms exceeds the wall clock around the call ${wall} ms`);
  assert.ok(Math.abs(timings.host - (timings.total - measured)) < 1e-6, `host ${timings.host} vs ${timings.total - measured}`);
  assert.equal(timings.backend, 'gpu');
  if (ctx.timestamps) {
    assert.equal(timings.kernelSource, 'timestamp');
    assert.deepEqual(timings.kernels.map((k) => k.name), ['histogram.atomic.uint8', 'equalize.lut', 'applyLut.uint8']);
  }
});

test('a host→host call does not wait between its phases unless asked to profile: its kernels share one timed pass', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // Profiling waits for the GPU after the upload and after the kernels (two extra round trips: 0.6–1 ms of an 8K
  // equalize host→host on the H100), so it is asked for, not the default.
  const img = imageFrom(randomBytes(300 * 200, 5), [200, 300]);
  const plain = await equalize(img, { gpu: ctx });
  const profiled = await equalize(img, { gpu: ctx, profile: true });
  assert.deepEqual(plain.output.data, profiled.output.data);
  if (!ctx.timestamps) return;
  assert.deepEqual(plain.timings.kernels.map((k) => k.name), ['equalize (fused)']);
  assert.equal(profiled.timings.kernels.length, 3);
});

test('both transfer strategies round-trip shared and plain arrays, odd lengths included', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  for (const transfer of ['staging', 'writeBuffer'] as const) {
    const ctx = await createNodeGpuContext({ transfer });
    try {
      for (const n of [1, 3, 17, 1001]) {
        const shared = new Uint8Array(new SharedArrayBuffer(n));
        shared.set(randomBytes(n, n));
        for (const data of [shared, randomBytes(n, n + 1)]) {
          const buf = await upload(ctx, data);
          const back = await download(ctx, buf, new Uint8Array(n));
          ctx.buffers.release(buf);
          assert.deepEqual(back, data, `${transfer}, ${n} bytes, ${data.buffer.constructor.name}`);
        }
      }
    } finally {
      ctx.destroy();
    }
  }
});

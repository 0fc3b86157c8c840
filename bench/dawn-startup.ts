/**
 * Where a GPU command's own start-up goes, in one process (issue 40 item 5): `node dist/bench/dawn-startup.js
 * [--order serial-first|parallel-first] [--image test/fixtures/jpeg/camera_q95_cv2.jpg]`. Prints one JSON object:
 * - `first` / `second`: Dawn's import, create(), requestAdapter and requestDevice for a first and a second instance
 *   in this process (what of the adapter is paid once per process), and the timer ticks that ran meanwhile (0: the
 *   calls block the main thread);
 * - `command`: `equalize` of the image as `imgpu equalize in.jpg out.jpg --device gpu --jpeg gpu` runs it (read
 *   and decoded on the GPU, equalized, encoded on the GPU) through imgpu's GpuContext, first use and a second run,
 *   and the compute pipelines it asked for;
 * - `pipelines`: those pipelines created again on two fresh devices, one after another (each awaited, as the plans
 *   ask) and all at once (Promise.all): whether Dawn compiles them in parallel, so that asking together would help.
 *   `--order` says which device goes first (the driver's own shader cache favours the second: run both orders).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { equalize } from '../src/index.js';
import type { GpuContext } from '../src/core/gpu/context.js';
import type { GpuImage } from '../src/core/gpu/gpu-image.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { readImage, writeImage } from '../src/node/gpu-io.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const order = arg('order', 'serial-first');
const image = arg('image', 'test/fixtures/jpeg/camera_q95_cv2.jpg');

let ticks = 0;
const timer = setInterval(() => ticks++, 1);
const ms = (t0: number) => Math.round((performance.now() - t0) * 10) / 10;

/** Times `f`, with the timer ticks that ran during it. */
async function timed<T>(f: () => Promise<T> | T): Promise<{ value: T; ms: number; ticks: number }> {
  const t0 = performance.now(), k = ticks;
  const value = await f();
  return { value, ms: ms(t0), ticks: ticks - k };
}

interface Dawn { create: (flags: string[]) => GPU; globals: object }
const keep: unknown[] = []; // Dawn's instances must outlive their devices (docs: WEBGPU-NODE.md)

async function instance(dawn: Dawn) {
  const created = await timed(() => dawn.create(['disable-dawn-features=timestamp_quantization']));
  keep.push(created.value);
  const adapter = await timed(() => created.value.requestAdapter({ powerPreference: 'high-performance' }));
  const device = await timed(() => adapter.value!.requestDevice());
  keep.push(adapter.value, device.value);
  return { gpu: created.value, report: { create_ms: created.ms, adapter_ms: adapter.ms, adapter_ticks: adapter.ticks, device_ms: device.ms, device_ticks: device.ticks } };
}

const imported = await timed(async () => (await import('webgpu')) as unknown as Dawn);
Object.assign(globalThis, imported.value.globals);
const first = await instance(imported.value);
const second = await instance(imported.value);

/** The pipelines a context is asked for, as (label, code, entry point, constants), recorded on the way through. */
function recordPipelines(ctx: GpuContext): Parameters<GpuContext['pipeline']>[] {
  const asked: Parameters<GpuContext['pipeline']>[] = [];
  const pipeline = ctx.pipeline.bind(ctx);
  ctx.pipeline = (...a) => {
    asked.push(a);
    return pipeline(...a);
  };
  return asked;
}

const ctx = await timed(() => createNodeGpuContext());
const asked = recordPipelines(ctx.value);
const out = join(tmpdir(), 'imgpu-dawn-startup.jpg');
const runCommand = () => timed(async () => {
  const img = (await readImage(image, { gpu: ctx.value, jpeg: 'gpu', gray: true })) as GpuImage;
  const r = await equalize(img, { gpu: ctx.value });
  await writeImage(out, r.output, { jpeg: 'gpu', gpu: ctx.value });
  img.release();
  r.output.release();
});
const firstRun = await runCommand();
const secondRun = await runCommand();

/** The recorded pipelines on a fresh device (of a new adapter: Dawn's adapters make one device each): one after another, or all at once. */
async function recreate(together: boolean) {
  const device = await (await first.gpu.requestAdapter({ powerPreference: 'high-performance' }))!.requestDevice();
  keep.push(device);
  const make = ([label, code, entryPoint, constants]: Parameters<GpuContext['pipeline']>) =>
    device.createComputePipelineAsync({ label, layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint, constants } });
  return timed(async () => {
    if (together) await Promise.all(asked.map(make));
    else for (const a of asked) await make(a);
  });
}
const [a, b] = order === 'serial-first' ? [await recreate(false), await recreate(true)] : [await recreate(true), await recreate(false)].reverse();
clearInterval(timer);
console.log(JSON.stringify({
  image, order, adapter: ctx.value.adapter.description,
  import_webgpu_ms: imported.ms, first: first.report, second: second.report,
  command: { context_ms: ctx.ms, first_run_ms: firstRun.ms, second_run_ms: secondRun.ms, pipelines: asked.map(([label, , entry]) => `${label}:${entry}`) },
  pipelines: { count: asked.length, one_after_another: { ms: a.ms, ticks: a.ticks }, all_at_once: { ms: b.ms, ticks: b.ticks } },
  input_bytes: readFileSync(image).length,
}));
ctx.value.destroy();
process.exit(0);

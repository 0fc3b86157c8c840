/**
 * Convolution benchmark: `node dist/bench/convolve.js [--sizes 1080p,4k,8k,256x256x361,512x512x361]
 * [--filters sobel-x,gauss:3,sobel] [--reps 10] [--out convolve]`.
 * 2D inputs: the bundled photograph resized to each size, 8-bit (float32 out, as cv2.Sobel with CV_32F).
 * Volumes: a CT-like float32 volume (the photograph in HU-like values, varying along z), W×H×D.
 * Per input and filter: for each GPU implementation (naive, tiled, separable, fused; the dense ones only below
 * 1000 taps) the kernel time of one isolated call and back to back (a batch in one submission, bench/batched.ts);
 * host→host on the GPU with the thesis's split (host, upload, kernels, download; profiled run) and unprofiled;
 * the CPU path on all cores; and bench/conv_anchors.py (scipy.ndimage, OpenCV, CuPy) in the same run.
 * Border 'reflect' everywhere (= scipy's default = cv2.BORDER_REFLECT). Writes bench/results/<out>.json + plot.
 * `--search [--hold-clocks] [--planes]`: the tile-shape search instead (bench/results/<out>-schedules.json; --planes:
 * the x-y pass's tile shapes too).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { allocPixels, createImage, imageFrom, type Image } from '../src/core/image.js';
import { kernelTotal, type Timings } from '../src/core/timings.js';
import { encodeNpy } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { CONV_IMPLS, DEFAULT_CONV_SCHEDULE, filter, parseFilter, prepareFilter, type ConvImpl, type ConvSchedule } from '../src/ops/convolve/index.js';
import { runOperation } from '../src/core/op.js';
import { timeBatched } from './batched.js';
import { holdClocks, photoAt, repeat, stat, warmUp, type Stat } from './common.js';
import { plotLinesSvg } from './plot.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const sizes = arg('sizes', '1080p,4k,8k,256x256x361,512x512x361').split(',');
const filters = arg('filters', 'sobel-x,gauss:3,sobel').split(',');
const reps = Number(arg('reps', '10'));
const outName = arg('out', 'convolve');
const e2eOnly = process.argv.includes('--e2e-only');
const NAMED: Record<string, [number, number]> = { '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320] };

async function input(name: string): Promise<Image> {
  if (NAMED[name]) return photoAt(...NAMED[name]);
  const [w, h, d] = name.split('x').map(Number);
  if (!d) return photoAt(w, h);
  const slice = await photoAt(w, h);
  const vox = allocPixels('float32', w * h * d) as Float32Array;
  for (let z = 0; z < d; z++) {
    const off = z * w * h;
    for (let i = 0; i < w * h; i++) vox[off + i] = slice.data[i] * 4 - 1024 + ((z * 7) % 50);
  }
  return imageFrom(vox, [d, h, w]);
}

interface Row {
  input: string;
  shape: number[];
  filter: string;
  /** per implementation: one isolated call's kernels (ms), back to back (ms per filter) */
  gpu: Record<string, { impl: string; isolated: Stat; backToBack: number }>;
  /** host→host, implementation auto: profiled phases, and the unprofiled total */
  gpuEndToEnd?: { phases: Timings; total: Stat; slabs: number; view?: Stat };
  cpu?: Stat;
  anchors?: Record<string, Stat>;
}

/** Dense kernels cost O(taps) per voxel: only where that finishes in reasonable time. */
function implsFor(spec: string, rank: 2 | 3): ConvImpl[] {
  const plan = parseFilter(spec, { rank });
  const taps = Math.max(...plan.components.map((k) => k.weights.length));
  return CONV_IMPLS.filter((i) => i !== 'auto' && (taps <= 1000 || i === 'separable' || i === 'fused'));
}

async function gpuRows(gpu: GpuContext, img: Image, spec: string, row: Row, voxels: number): Promise<void> {
  if (e2eOnly) {
    await endToEnd(gpu, img, spec, row, voxels);
    return;
  }
  const dev = await GpuImage.upload(gpu, img);
  const batch = voxels > 2e8 ? 2 : voxels > 3e7 ? 5 : 20;
  for (const impl of implsFor(spec, img.shape.length === 3 ? 3 : 2)) {
    const isolated = await repeat(reps, async () => {
      const r = await filter(dev, spec, { impl, profile: false });
      r.output.release();
      return kernelTotal(r.timings);
    });
    const { record, impl: resolved } = prepareFilter(gpu, img.shape, spec, { impl });
    const outs: GpuImage[] = [];
    const backToBack = await timeBatched(gpu, batch, async (rec) => { outs.push(await record(rec, dev)); });
    for (const o of outs) o.release();
    row.gpu[impl] = { impl: resolved, isolated, backToBack };
    console.error(`  ${impl}: isolated ${isolated.median.toFixed(3)} ms, back to back ${backToBack.toFixed(3)} ms`);
  }
  dev.release();
  await endToEnd(gpu, img, spec, row, voxels);
}

/** Host→host: the copied download into a reused output, the profiled split, and the download as a mapped view. */
async function endToEnd(gpu: GpuContext, img: Image, spec: string, row: Row, voxels: number): Promise<void> {
  // A reused output image, as a pipeline over many images or frames would pass (a fresh one costs first-touch
  // page faults of the whole float32 output on every call); the profiled split is taken once warm.
  const out = createImage(img.shape, 'float32');
  const total = await repeat(voxels > 2e8 ? 2 : reps, async () => (await filter(img, spec, { gpu, profile: false, out })).timings.total);
  const profiled = await filter(img, spec, { gpu, profile: true, out });
  const view = await repeat(voxels > 2e8 ? 2 : reps, async () => {
    const r = await runOperation(filter.op, img, { filter: spec }, { gpu, profile: false, view: true });
    r.release?.();
    return r.timings.total;
  });
  row.gpuEndToEnd = { phases: profiled.timings, total, slabs: profiled.timings.slabs ?? 1, view };
}

/**
 * Back-to-back time of `spec` with `impl` under each schedule variant (the tile-shape search), beside the
 * isolated kernel time and each pass's time (profiled) of one call.
 */
async function search(gpu: GpuContext, img: Image, spec: string, impl: ConvImpl, variants: Partial<ConvSchedule>[]): Promise<unknown[]> {
  const dev = await GpuImage.upload(gpu, img);
  const rows = [];
  for (const v of variants) {
    const schedule = { ...DEFAULT_CONV_SCHEDULE, ...v };
    const { record } = prepareFilter(gpu, img.shape, spec, { impl, schedule });
    const outs: GpuImage[] = [];
    const ms = await timeBatched(gpu, 5, async (rec) => { outs.push(await record(rec, dev)); });
    for (const o of outs) o.release();
    // The same, each output released as soon as it is recorded: the pool hands the next call the same buffer
    // (does back to back pay for touching several large outputs, or for the kernels?).
    const reused = await timeBatched(gpu, 5, async (rec) => { (await record(rec, dev)).release(); });
    const isolated = await repeat(5, async () => {
      const r = await filter(dev, spec, { impl, schedule, profile: false });
      r.output.release();
      return kernelTotal(r.timings);
    });
    const profiled = await filter(dev, spec, { impl, schedule, profile: true });
    profiled.output.release();
    const passes = profiled.timings.kernels.map((k) => `${k.name} ${k.ms.toFixed(3)}`);
    rows.push({ input: img.shape.join('x'), spec, impl, schedule, ms, reused, isolated: isolated.median, passes });
    console.error(`  search ${spec} ${impl} ${JSON.stringify(v)}: ${ms.toFixed(3)} ms b2b (${reused.toFixed(3)} one output), ${isolated.median.toFixed(3)} isolated (${passes.join(', ')})`);
  }
  dev.release();
  return rows;
}

/** Per filter and input, the variants searched: tile shapes of the x-y pass, of the z pass, of the dense tile. */
async function schedules(gpu: GpuContext): Promise<unknown[]> {
  // --small: the same search on small inputs (a check of the script on a software adapter).
  const small = process.argv.includes('--small');
  const vol = await input(small ? '64x64x45' : '512x512x361');
  const photo = await input(small ? '640x360' : '8k');
  const plane = (tw: number, th: number, cx: number, cy: number, zc: number): Partial<ConvSchedule> => ({ plane: { tw, th, cx, cy, zc } });
  const planes = [plane(32, 32, 8, 4, 8), plane(32, 32, 8, 4, 4), plane(32, 32, 8, 4, 16), plane(32, 32, 4, 4, 8), plane(32, 32, 8, 8, 8),
    plane(64, 16, 8, 4, 8), plane(32, 16, 8, 2, 8), plane(32, 64, 8, 8, 8), plane(64, 32, 8, 8, 8), plane(64, 32, 16, 8, 8)];
  // The z pass's shapes (tx, ty, cx, zc, planes loaded ahead) and the dense tile's (tx, ty, cx, zc): the earlier
  // searches' best (32×8, two columns) and around it.
  const zs: Partial<ConvSchedule>[] = [[32, 8, 2, 32, 1], [32, 8, 2, 32, 2], [32, 8, 2, 32, 3], [32, 8, 2, 32, 4], [32, 8, 1, 32, 2], [32, 8, 1, 32, 4],
    [32, 8, 1, 64, 4], [32, 4, 2, 32, 2], [32, 8, 2, 64, 2], [32, 8, 2, 64, 4], [64, 4, 2, 32, 4]].map(([tx, ty, cx, zc, zdepth]) => ({ tx, ty, cx, zc, zdepth }));
  const dense: Partial<ConvSchedule>[] = [[32, 8, 2, 32], [32, 4, 2, 32], [64, 4, 2, 32], [32, 4, 2, 64], [64, 2, 2, 32]].map(([tx, ty, cx, zc]) => ({ tx, ty, cx, zc }));
  return [
    ...(await search(gpu, vol, 'gauss:3', 'fused', [{}])),
    ...(await search(gpu, vol, 'gauss:3', 'separable', [{ plane: null }, ...(process.argv.includes('--planes') ? planes : [plane(32, 32, 8, 4, 16)]), ...zs])),
    ...(await search(gpu, vol, 'sobel-x', 'tiled', dense)),
    ...(await search(gpu, vol, 'sobel-x', 'separable', [{}, { plane: null }])),
    ...(await search(gpu, photo, 'gauss:3', 'fused', [{}])),
    ...(await search(gpu, photo, 'gauss:3', 'separable', [{ plane: null }, ...planes.slice(0, 1), plane(64, 16, 8, 4, 1), plane(64, 32, 8, 8, 1)])),
  ];
}

async function main(): Promise<void> {
  if (process.argv.includes('--search')) {
    const clocks = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
    const gpu = await createNodeGpuContext();
    await warmUp(gpu, await photoAt(1920, 1080));
    const rows = await schedules(gpu);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/${outName}-schedules.json`, JSON.stringify({ date: new Date().toISOString(), adapter: gpu.adapter, clocksHeld: clocks?.held ?? false, rows }, null, 1));
    gpu.destroy();
    clocks?.release();
    return;
  }
  const pool = new NodeWorkerPool();
  const gpu = await createNodeGpuContext();
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-conv-'));
  const images: Record<string, Image> = {};
  for (const s of sizes) {
    images[s] = await input(s);
    writeFileSync(join(dir, `${s}.npy`), encodeNpy(images[s]));
  }
  const run = spawnSync('python3', ['bench/conv_anchors.py', dir, filters.join(','), String(reps)], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  rmSync(dir, { recursive: true, force: true });
  let anchors: { results?: Record<string, Record<string, Record<string, Stat>>> } & Record<string, unknown> = {};
  try {
    anchors = JSON.parse(run.stdout);
  } catch {
    anchors = { error: `anchors did not run: ${run.error?.message ?? run.status}` };
  }
  await warmUp(gpu, await photoAt(1920, 1080));
  const rows: Row[] = [];
  for (const name of sizes) {
    const img = images[name];
    const voxels = img.data.length;
    for (const spec of filters) {
      console.error(`${name} ${spec}`);
      const row: Row = { input: name, shape: [...img.shape], filter: spec, gpu: {} };
      await gpuRows(gpu, img, spec, row, voxels);
      const cpuReps = voxels > 2e8 ? 1 : voxels > 3e7 ? 2 : Math.min(reps, 5);
      if (voxels > 2e8) {
        row.cpu = stat([(await filter(img, spec, { pool })).timings.total]);
      } else {
        row.cpu = await repeat(cpuReps, async () => (await filter(img, spec, { pool })).timings.total);
      }
      row.anchors = anchors.results?.[name]?.[spec] ?? {};
      console.log(JSON.stringify(row));
      rows.push(row);
    }
  }
  mkdirSync('bench/results', { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, cpuThreads: pool.size, adapter: gpu.adapter, reps, border: 'reflect', anchors: { ...anchors, results: undefined } };
  writeFileSync(`bench/results/${outName}.json`, JSON.stringify({ op: 'convolve', ...meta, rows }, null, 2));
  for (const spec of filters) {
    const rs = rows.filter((r) => r.filter === spec);
    const x = (r: Row) => Math.round(r.shape.reduce((a, b) => a * b, 1) / 1e6);
    const series = [
      ...['naive', 'tiled', 'separable', 'fused'].map((i) => ({ label: `GPU ${i} (b2b)`, points: rs.filter((r) => r.gpu[i]).map((r) => [x(r), r.gpu[i].backToBack] as [number, number]) })),
      { label: 'GPU host→host', points: rs.map((r) => [x(r), r.gpuEndToEnd!.total.median] as [number, number]) },
      { label: 'imgpu CPU', points: rs.map((r) => [x(r), r.cpu!.median] as [number, number]) },
      ...['scipy', 'cv2', 'cupy.kernels', 'cupy.host_to_host'].map((a) => ({ label: a, points: rs.filter((r) => r.anchors?.[a]).map((r) => [x(r), r.anchors![a].median] as [number, number]) })),
    ].filter((s) => s.points.length);
    writeFileSync(`bench/results/${outName}-${spec.replace(':', '')}.svg`, plotLinesSvg(`${spec}: time against size (${gpu.adapter.description || gpu.adapter.vendor})`, 'megavoxels', series));
  }
  console.error(`wrote bench/results/${outName}.json and plots`);
  await pool.close();
  gpu.destroy();
}

await main();

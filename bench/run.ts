/**
 * `npm run bench [-- --ops equalize --sizes 512,1080p,4k,8k --reps 10 --json out.json]`
 * Times each operation per image size on the CPU (worker pool) and the GPU — kernel-only (timestamp queries),
 * resident (GpuImage in/out, wall clock), end to end (host array → host array) and the bare transfer round
 * trip — after a warm-up, reporting min and median. Anchors (OpenCV) are timed by bench/anchors.py in the
 * same run on the same images. Writes bench/results/<op>.json and an SVG plot beside it.
 * `npm run bench -- --roofline` writes the roofline table instead (bench/roofline.ts); `npm run bench -- --throughput`
 * the throughput matrix and start-up figures (bench/throughput.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { download, upload } from '../src/core/gpu/transfer.js';
import { allocPixels, imageFrom, type Image } from '../src/core/image.js';
import { kernelTotal, now, type Timings } from '../src/core/timings.js';
import { histogram } from '../src/ops/histogram/index.js';
import { threshold } from '../src/ops/threshold/index.js';
import { encodeNpy } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { equalize } from '../src/ops/equalize/index.js';
import { clahe } from '../src/ops/clahe/index.js';
import { gamma } from '../src/ops/gamma/index.js';
import { photoAt, repeat, stat, warmUp, type Stat } from './common.js';
import { plotSvg } from './plot.js';

const SIZES: Record<string, [number, number]> = {
  '480p': [640, 480], '512': [512, 512], '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320],
};


function scale(p: { memcpy: number; wait: number }, n: number) {
  return { memcpy: p.memcpy / n, wait: p.wait / n };
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}


async function benchEqualize(img: Image, reps: number, pool: NodeWorkerPool, gpu?: GpuContext, gpuWB?: GpuContext) {
  const r: Record<string, unknown> = {};
  r.cpu = await repeat(reps, async () => (await equalize(img, { pool })).timings.total);
  const cpuOut = imageFrom(allocPixels('uint8', img.data.length), img.shape as [number, number]);
  r.cpuReusedOutput = await repeat(reps, async () => (await equalize(img, { pool, out: cpuOut })).timings.total);
  if (!gpu) return r;
  const dev = await GpuImage.upload(gpu, img);
  const kernelTimes: Record<string, number[]> = {};
  r.gpuKernels = await repeat(reps, async () => {
    const res = await equalize(dev, { profile: true });
    for (const k of res.timings.kernels) (kernelTimes[k.name] ??= []).push(k.ms);
    res.output.release();
    return kernelTotal(res.timings);
  });
  r.gpuKernelsEach = Object.fromEntries(Object.entries(kernelTimes).map(([k, v]) => [k, stat(v.slice(1))]));
  r.gpuResident = await repeat(reps, async () => {
    const t0 = now();
    const res = await equalize(dev, { profile: false });
    await gpu.finish();
    res.output.release();
    return now() - t0;
  });
  r.gpuKernelsFused = await repeat(reps, async () => {
    const res = await equalize(dev, { profile: false });
    res.output.release();
    return kernelTotal(res.timings);
  });
  dev.release();
  const out = imageFrom(new Uint8Array(img.data.length), img.shape as [number, number]);
  r.gpuEndToEnd = await repeat(reps, async () => (await equalize(img, { gpu, profile: false, out })).timings.total);
  r.gpuEndToEndFreshOutput = await repeat(reps, async () => (await equalize(img, { gpu, profile: false })).timings.total);
  const split = await equalize(img, { gpu, profile: true });
  r.gpuSplit = split.timings;
  for (const [name, ctx] of [['roundTripStaging', gpu], ['roundTripWriteBuffer', gpuWB]] as const) {
    if (!ctx) continue;
    const out = new Uint8Array(img.data.length);
    const up = { memcpy: 0, wait: 0 }, down = { memcpy: 0, wait: 0 };
    r[name] = await repeat(reps, async () => {
      const t0 = now();
      const buf = await upload(ctx, img.data, 'bench', up);
      await download(ctx, buf, out, down);
      ctx.buffers.release(buf);
      return now() - t0;
    });
    // Mean per round trip (warm-up included): memcpy into/out of mapped staging memory vs. waiting on the GPU.
    r[`${name}Phases`] = { upload: scale(up, reps + 1), download: scale(down, reps + 1) };
  }
  return r;
}

/** How to run one benchmarked operation (variant) on a host image or a resident GpuImage. */
interface OpSpec {
  /** Runs on the CPU pool, on the GPU from host memory, or on a resident GpuImage (then `gpu` is unset). */
  run(img: Image | GpuImage, on: { pool?: NodeWorkerPool; gpu?: GpuContext; profile?: boolean; out?: Image }): Promise<{ output: unknown; timings: Timings }>;
  /** Anchor keys (bench/anchors.py) reported beside it. */
  anchors: string[];
  /** Larger images are skipped (work that grows with the window: a few sizes tell the story). */
  maxPixels?: number;
  /** Slow on the CPU (seconds per call): 3 repetitions there. */
  slowCpu?: boolean;
}

const released = (o: unknown) => (o instanceof GpuImage ? o.release() : undefined);

/** The operations of issue 3 (and equalize's variants), each with its CPU/GPU variants and anchors. */
const OPS: Record<string, OpSpec> = {
  'histogram.atomic': { run: (img, { out: _, ...on }) => histogram(img, { ...on, method: 'atomic' }), anchors: ['cv2.calcHist', 'np.bincount', 'cupy.bincount'] },
  'histogram.subhist': { run: (img, { out: _, ...on }) => histogram(img, { ...on, method: 'subhist' }), anchors: ['cv2.calcHist', 'np.bincount', 'cupy.bincount'] },
  'equalize.subhist': { run: (img, on) => equalize(img as Image, { ...on, hist: 'subhist' }), anchors: ['cv2.equalizeHist'] },
  'threshold.otsu': { run: (img, on) => threshold(img as Image, { ...on, method: 'otsu' }), anchors: ['cv2.threshold.otsu'] },
  'threshold.isodata': { run: (img, on) => threshold(img as Image, { ...on, method: 'isodata' }), anchors: ['skimage.threshold_isodata'] },
  'threshold.adaptive.sliding': { run: (img, on) => threshold(img as Image, { ...on, method: 'adaptive', window: 15, scheme: 'sliding' }), anchors: [] },
  'threshold.adaptive.naive': { run: (img, on) => threshold(img as Image, { ...on, method: 'adaptive', window: 15, scheme: 'naive' }), anchors: [] },
  'threshold.mean': { run: (img, on) => threshold(img as Image, { ...on, method: 'mean', window: 11, offset: 2 }), anchors: ['cv2.adaptiveThreshold.mean'] },
  'threshold.gaussian': { run: (img, on) => threshold(img as Image, { ...on, method: 'gaussian', window: 11, offset: 2 }), anchors: ['cv2.adaptiveThreshold.gaussian'] },
  // gamma 0.5 (8-bit: skimage's LUT applied on the device); anchors: skimage itself, the same LUT through cv2.LUT and CuPy.
  'gamma': { run: (img, on) => gamma(img as Image, { ...on, gamma: 0.5 }), anchors: ['skimage.adjust_gamma', 'cv2.LUT.gamma', 'cupy.take.gamma'] },
  ...claheOps(),
};

/** CLAHE: tiled with two grids (OpenCV, scikit-image anchors), sliding window per radius and GPU scheme. */
function claheOps(): Record<string, OpSpec> {
  const ops: Record<string, OpSpec> = {};
  for (const g of [8, 16]) {
    ops[`clahe.tiled.${g}x${g}`] = {
      run: (img, on) => clahe(img as Image, { ...on, tiles: { width: g, height: g }, clip: 2 }),
      anchors: [`cv2.createCLAHE.${g}x${g}`, `cv2.cuda.createCLAHE.${g}x${g}`, `skimage.equalize_adapthist.${g}x${g}`],
    };
  }
  for (const scheme of ['columns', 'naive'] as const) {
    for (const r of [5, 10, 20, 50]) {
      ops[`clahe.window.${scheme}.r${r}`] = {
        run: (img, on) => clahe(img as Image, { ...on, window: r, clip: 4, scheme }),
        anchors: [], slowCpu: true, maxPixels: scheme === 'naive' ? 1920 * 1080 : undefined,
      };
    }
  }
  return ops;
}

/** CPU, GPU host→host, GPU resident (wall and fused kernels) for one operation at one size. */
async function benchOp(spec: OpSpec, img: Image, reps: number, pool: NodeWorkerPool, gpu?: GpuContext) {
  const r: Record<string, unknown> = {};
  // Adaptive on the CPU costs seconds at 8K: fewer repetitions there.
  const cpuReps = (img.data.length > 1e7 && spec.anchors.length === 0) || spec.slowCpu ? Math.min(reps, 3) : reps;
  r.cpu = await repeat(cpuReps, async () => (await spec.run(img, { pool })).timings.total);
  if (!gpu) return r;
  // Image outputs go into one reused output image, as a frame loop would (a fresh 33 MB allocation per call
  // costs more first-touch page faults than the whole GPU pipeline).
  const out = imageFrom(allocPixels(img.dtype, img.data.length), img.shape as [number, number]);
  r.gpuEndToEnd = await repeat(reps, async () => {
    const res = await spec.run(img, { gpu, profile: false, out });
    return res.timings.total;
  });
  const dev = await GpuImage.upload(gpu, img);
  r.gpuResident = await repeat(reps, async () => {
    const t0 = now();
    const res = await spec.run(dev, { profile: false });
    await gpu.finish();
    released(res.output);
    return now() - t0;
  });
  r.gpuKernelsFused = await repeat(reps, async () => {
    const res = await spec.run(dev, { profile: false });
    released(res.output);
    return kernelTotal(res.timings);
  });
  const each = await spec.run(dev, { profile: true });
  released(each.output);
  r.gpuKernelsEach = each.timings.kernels;
  dev.release();
  return r;
}


async function main(): Promise<void> {
  if (process.argv.includes('--roofline')) return (await import('./roofline.js')).roofline();
  if (process.argv.includes('--throughput')) return (await import('./throughput.js')).throughput();
  const ops = arg('ops', ['equalize', ...Object.keys(OPS)].join(',')).split(',');
  const sizes = arg('sizes', '480p,1080p,4k,8k').split(',');
  const reps = Number(arg('reps', '10'));
  const outDir = 'bench/results';
  mkdirSync(outDir, { recursive: true });
  const pool = new NodeWorkerPool();
  let gpu: GpuContext | undefined, gpuWB: GpuContext | undefined;
  try {
    gpu = await createNodeGpuContext();
    gpuWB = await createNodeGpuContext({ transfer: 'writeBuffer' });
  } catch (e) {
    console.error(`no GPU (${(e as Error).message}): CPU only`);
  }
  const imgDir = mkdtempSync(join(tmpdir(), 'imgpu-bench-'));
  const images: Record<string, Image> = {};
  for (const s of sizes) {
    const [w, h] = SIZES[s] ?? (s.split('x').map(Number) as [number, number]);
    images[s] = await photoAt(w, h);
    writeFileSync(join(imgDir, `${s}.npy`), encodeNpy(images[s]));
  }
  const anchorsRun = spawnSync('python3', ['bench/anchors.py', imgDir, String(reps)], { encoding: 'utf8' });
  let anchors: { results?: Record<string, Record<string, Stat>> } & Record<string, unknown> = {};
  try {
    anchors = JSON.parse(anchorsRun.stdout);
  } catch {
    anchors = { error: `anchors did not run: ${anchorsRun.stderr || anchorsRun.error?.message}` };
  }
  const meta = {
    date: new Date().toISOString(), node: process.version, cpuThreads: pool.size, cores: availableParallelism(),
    adapter: gpu?.adapter ?? null, timestamps: gpu?.timestamps ?? false, reps, anchors: { ...anchors, results: undefined },
  };
  if (gpu) await warmUp(gpu, images[sizes[sizes.length - 1]]);
  for (const op of ops) {
    if (op !== 'equalize' && !OPS[op]) throw new Error(`no benchmark for '${op}' (have: equalize, ${Object.keys(OPS).join(', ')})`);
    const rows = [];
    for (const s of sizes) {
      const img = images[s];
      if (op !== 'equalize' && img.data.length > (OPS[op].maxPixels ?? Infinity)) continue;
      const measured = op === 'equalize' ? await benchEqualize(img, reps, pool, gpu, gpuWB) : await benchOp(OPS[op], img, reps, pool, gpu);
      const wanted = op === 'equalize' ? ['cv2.equalizeHist'] : OPS[op].anchors;
      const anchorRow = Object.fromEntries(Object.entries(anchors.results?.[s] ?? {}).filter(([k]) => wanted.includes(k)));
      const row = { size: s, shape: img.shape, ...measured, anchors: anchorRow };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    const file = join(outDir, `${op}.json`);
    writeFileSync(file, JSON.stringify({ op, ...meta, rows }, null, 2));
    writeFileSync(join(outDir, `${op}.svg`), plotSvg(op, rows as never));
    const extra = arg('json', '');
    if (extra) writeFileSync(extra, JSON.stringify({ op, ...meta, rows }, null, 2));
    console.error(`wrote ${file}`);
  }
  await pool.close();
  gpu?.destroy();
  gpuWB?.destroy();
}

await main();

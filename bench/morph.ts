/**
 * Morphology benchmark: `node dist/bench/morph.js [--sizes 1024,4k,8k] [--ks 3,7,15,27,39,51,101] [--reps 10] [--volume]
 * [--no-search] [--hold-clocks] [--variants NAME [--set passes|fused|unpack|unpacky|vec4|top]]`.
 * Erosion with a k×k rectangle of the bundled photograph resized to each size (and, with --volume, a
 * 512×512×361 u8 volume with k×k×k boxes): GPU van Herk/Gil-Werman kernels one isolated call and back to back
 * (20 in one submission), host→host, the naive direct kernel (small k only: it costs O(k²)), the CPU path on
 * all cores and on one thread, and the anchors of bench/morph_anchors.py (cv2.erode, CuPy grey_erosion) in
 * the same run. Also searches the line kernels' segment lengths at 8K (k = 3, 51, 101) and where the direct x
 * kernel beats vHGW (k = 3 … 15). --hold-clocks keeps the
 * GPU clock up meanwhile (common.ts holdClocks): without it, rows and search run at whatever clock the load before
 * them left (issue 22). Writes bench/results/morph.json and two plots (time against k, time against image size).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { grid1d } from '../src/core/gpu/dispatch.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { allocPixels, imageFrom, type Image } from '../src/core/image.js';
import { kernelTotal } from '../src/core/timings.js';
import { encodeNpy } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { DEFAULT_MORPH_SCHEDULE, MorphGpu, type MorphSchedule } from '../src/ops/morph/gpu.js';
import { fusedLayout } from '../src/ops/morph/fused.wgsl.js';
import { morph, parseElement } from '../src/ops/morph/index.js';
import { timeBatched } from './batched.js';
import { holdClocks, photoAt, repeat, warmUp, type Stat } from './common.js';
import { plotVsK, plotVsSize, SIZES, type Row } from './morph-plots.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const sizes = arg('sizes', '1024,4k,8k').split(',');
const ks = arg('ks', '3,7,15,27,39,51,101').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const withVolume = process.argv.includes('--volume');



/** A CT-like 512×512×361 u8 volume: the photograph stacked with a slow change along z. */
async function volume(): Promise<Image> {
  const slice = await photoAt(512, 512);
  const d = 361, px = allocPixels('uint8', 512 * 512 * d);
  for (let z = 0; z < d; z++) for (let i = 0; i < 512 * 512; i++) px[z * 512 * 512 + i] = (slice.data[i] + z) & 255;
  return imageFrom(px, [d, 512, 512]);
}

/** Back-to-back time of one erosion (all its passes) on a resident image. */
async function backToBack(gpu: GpuContext, dev: GpuImage, se: string, method: 'auto' | 'naive', schedule?: MorphSchedule, batch = 20): Promise<number> {
  const m = new MorphGpu(gpu, dev.dtype as 'uint8', schedule);
  const el = parseElement(se);
  // `batch` erosions in one submission (the aligned layout is the image itself: the widths are multiples of 4).
  return timeBatched(gpu, batch, async (rec) => m.primitive(rec, await m.toAligned(rec, dev), 'erode', el, 'opencv', 1, method));
}

/**
 * At 8K, back to back: the line kernels' segment lengths for a short, a medium and a long window; then, for short
 * windows, vHGW against the direct x kernel (where one word per invocation stops paying).
 */
async function searchSchedules(gpu: GpuContext, img: Image) {
  const dev = await GpuImage.upload(gpu, img);
  const search: Record<string, number | boolean>[] = [];
  const run = async (k: number, schedule: MorphSchedule) => {
    const ms = await backToBack(gpu, dev, `rect:${k}x${k}`, 'auto', schedule);
    search.push({ k, ...schedule, ms });
    console.log(JSON.stringify({ search: `8k rect:${k}x${k}`, ...schedule, ms }));
  };
  const vhgw = { ...DEFAULT_MORPH_SCHEDULE, segX: 0, segY: 0 };
  for (const k of [3, 51, 101]) {
    for (const segLines of [16, 32, 64, 128]) for (const segRows of [16, 32, 64]) await run(k, { ...vhgw, segLines, segRows });
  }
  for (const k of [3, 5, 7, 9, 11, 15]) for (const directX of [0, k]) await run(k, { ...vhgw, directX });
  dev.release();
  return search;
}

/**
 * `--variants NAME`: per pass (rect:Kx1 is the x pass alone, rect:1xK the y pass alone) and whole, on the last of
 * --sizes (8K), back to
 * back: the vHGW kernels against the register-segment kernels and packed-byte min/max (bench/results/NAME.jsonl).
 */
async function searchVariants(gpu: GpuContext, img: Image, name: string): Promise<void> {
  const dev = await GpuImage.upload(gpu, img);
  const base = DEFAULT_MORPH_SCHEDULE;
  // --set passes (the default): vHGW and the current defaults, then the register-segment kernels' shapes around
  // them, per pass and whole. --set fused: whole erosions only, the two passes against the fused x+y kernel's
  // shapes (fuseYS is cut to what fits workgroup memory: 48 KiB on the H100). --set unpack: the x pass on unpacked
  // lanes (unpackX), alone and whole, against the packed words. --set unpacky: the same for the y pass (unpackY).
  // --set vec4: the y pass on strips of four words (yVec4) at several segments and strips a workgroup, alone and
  // whole, against the default (first and last, for drift); also writes NAME-best.json, the yVec4 fields whose
  // whole erosions summed over --ks were fastest (IMGPU_MORPH_SCHEDULE for the roofline), and the copy floor.
  const set = arg('set', process.argv.includes('--whole') ? 'fused' : 'passes');
  const off = { segX: 0, segY: 0, swar: false };
  const twoPass = { fuseTW: 0 };
  const fused = (fuseTW: number, fuseXS: number, fuseYS: number, fuseThreads: number, more: Partial<MorphSchedule> = {}) => ({ fuseTW, fuseXS, fuseYS, fuseThreads, ...more });
  const unpacked = (segX: number) => ({ segX, unpackX: true, fuseTW: 0 });
  // (rows an invocation, strips a workgroup): a strip holds 4× an invocation's registers, so shorter segments too.
  const strips = ([[8, 16], [8, 32], [16, 8], [16, 16], [16, 32], [32, 16]] as const).map(([segY, segYCols]) => ({ yVec4: true, segY, segYCols }));
  const sets: Record<string, Partial<MorphSchedule>[][]> = {
    passes: [
      [off, {}, { swar: false }, ...[4, 8, 12].map((segX) => ({ segX }))],
      [off, {}, { swar: false }, ...[16, 64].flatMap((segY) => [64, 32, 16].map((segYCols) => ({ segY, segYCols })))],
      [off, twoPass, {}],
    ],
    fused: [[], [], [
      twoPass, fused(32, 4, 32, 256), fused(32, 4, 16, 256), fused(32, 2, 32, 256), fused(32, 4, 32, 256, { swar: false }), fused(32, 4, 64, 128), fused(32, 4, 32, 512),
      fused(32, 8, 32, 256), fused(32, 8, 32, 128), fused(32, 16, 64, 128), fused(32, 16, 64, 64), twoPass,
    ]],
    unpack: [
      [twoPass, ...[4, 6, 8, 12].map(unpacked), twoPass],
      [],
      [twoPass, unpacked(6), unpacked(8), fused(32, 8, 32, 256, { unpackX: true }), fused(32, 4, 32, 512, { unpackX: true }), twoPass],
    ],
    unpacky: [[], [{}, { unpackY: true }, { unpackY: true, segY: 16 }, { unpackY: true, segYCols: 64 }, {}], [{}, { unpackY: true }, {}]],
    vec4: [[], [{}, ...strips, {}], [{}, ...strips, {}]],
    // --set top: unpacked lanes with their pixel on top (laneTop) against masked lanes and packed words, along x
    // at several words an invocation (odd ones without the tile's skew) and along y at several rows an invocation
    // and columns a workgroup; whole erosions: the first schedule against the fastest x and y variants of the same
    // k, together and alone. (bench/morph-isolated.ts times the same passes isolated, as the roofline does.)
    top: [
      [{}, { laneTop: false }, { laneTop: false, segX: 6 }, ...[4, 6, 8, 10, 15].map((segX) => ({ segX })), {}],
      [{}, ...[16, 24, 32, 40].flatMap((segY) => [32, 64].map((segYCols) => ({ segY, segYCols }))), { laneTop: false }, { unpackY: false, laneTop: false }, {}],
      [],
    ],
  };
  const [xs, ys, both] = sets[set];
  const lines: string[] = [];
  const wholeMs = new Map<string, number>();
  // Line by line, so that a run cut short by a time limit keeps what it measured.
  const file = `bench/results/${name}.jsonl`;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(file, '');
  for (const k of ks) {
    const best = { x: [Infinity, {}] as [number, Partial<MorphSchedule>], y: [Infinity, {}] as [number, Partial<MorphSchedule>] };
    for (const [se, list0] of [[`rect:${k}x1`, xs], [`rect:1x${k}`, ys], [`rect:${k}x${k}`, both]] as const) {
      const list = set === 'top' && se === `rect:${k}x${k}` ? [{}, { ...best.x[1], ...best.y[1] }, best.x[1], best.y[1], {}] : list0;
      for (const v of list) {
        const schedule = { ...base, ...v };
        const ms = await backToBack(gpu, dev, se, 'auto', schedule);
        // The fused kernel's rows a tile as it ran (fuseYS cut to workgroup memory), where it ran.
        const [h, w] = img.shape;
        const fk = se === `rect:${k}x${k}` ? new MorphGpu(gpu, 'uint8', schedule).fusedKernel({ buffer: dev.buffer, d: 1, h, w, rw: Math.ceil(w / 4) }, { k, a: k >> 1 }, { k, a: k >> 1 }, 'erode') : undefined;
        const line = JSON.stringify({ search: `${w}x${h} ${se}`, ...schedule, fusedRows: fk ? fusedLayout(fk).r : 0, fusedYS: fk?.ys ?? 0, ms });
        console.log(line);
        lines.push(line);
        appendFileSync(file, line + '\n');
        if (se === `rect:${k}x${k}`) wholeMs.set(JSON.stringify(v), (wholeMs.get(JSON.stringify(v)) ?? 0) + ms);
        const axis = se === `rect:${k}x1` ? 'x' : se === `rect:1x${k}` ? 'y' : undefined;
        if (axis && ms < best[axis][0]) best[axis] = [ms, v];
      }
    }
  }
  if (set === 'unpack' || set === 'vec4') lines.push(...(await copyFloor(gpu, dev)));
  if (set === 'vec4') {
    const best = [...wholeMs].filter(([v]) => v.includes('yVec4')).sort((a, b) => a[1] - b[1])[0];
    console.log(JSON.stringify({ best: JSON.parse(best[0]), wholeMsSummed: best[1] }));
    writeFileSync(`bench/results/${name}-best.json`, best[0]);
  }
  writeFileSync(file, lines.join('\n') + '\n');
  dev.release();
}

/**
 * The floor under a pass: a kernel that only copies the image (one u32 an invocation, as the line kernels load, or
 * one vec4<u32>), back to back as the variants — what any pass costs before its window.
 */
async function copyFloor(gpu: GpuContext, dev: GpuImage): Promise<string[]> {
  const words = dev.buffer.size / 4;
  const out: string[] = [];
  for (const [type, per] of [['u32', 1], ['vec4u', 4]] as const) {
    const code = `@group(0) @binding(0) var<storage, read> src: array<${type}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${type}>;
@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) id: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = id.x + id.y * nwg.x * 256u;
  if (i < ${words / per}u) { dst[i] = src[i]; }
}`;
    const pipe = await gpu.pipeline(`copy-${type}`, code, 'copy');
    const [x, y] = grid1d(gpu, Math.ceil(words / per / 256));
    const ms = await timeBatched(gpu, 20, (rec) => rec.dispatch(`copy.${type}`, pipe, { src: dev.buffer, dst: rec.storage(words * 4, 'copy') }, x, y));
    const line = JSON.stringify({ search: `copy ${type}`, bytes: words * 4, ms });
    console.log(line);
    out.push(line);
  }
  return out;
}

async function main(): Promise<void> {
  const variants = arg('variants', '');
  if (variants) {
    const gpu = await createNodeGpuContext();
    const img = await photoAt(...SIZES[sizes[sizes.length - 1]]);
    const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
    await warmUp(gpu, img);
    await searchVariants(gpu, img, variants);
    hold?.release();
    gpu.destroy();
    return;
  }
  const pool = new NodeWorkerPool();
  const single = new NodeWorkerPool(1);
  let gpu: GpuContext | undefined;
  try {
    gpu = await createNodeGpuContext();
  } catch (e) {
    console.error(`no GPU (${(e as Error).message}): CPU only`);
  }
  const images: Record<string, Image> = {};
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-morph-'));
  for (const s of sizes) {
    const [w, h] = SIZES[s] ?? (s.split('x').map(Number) as [number, number]);
    images[s] = await photoAt(w, h);
    writeFileSync(join(dir, `${s}.npy`), encodeNpy(images[s]));
  }
  if (withVolume) {
    images.volume = await volume();
    writeFileSync(join(dir, 'volume.npy'), encodeNpy(images.volume));
  }
  const anchorsRun = spawnSync('python3', ['bench/morph_anchors.py', dir, ks.join(','), String(reps)], { encoding: 'utf8', maxBuffer: 1 << 24 });
  let anchors: { results?: Record<string, Record<string, Record<string, Stat>>> } & Record<string, unknown> = {};
  try {
    anchors = JSON.parse(anchorsRun.stdout);
  } catch {
    anchors = { error: `anchors did not run: ${anchorsRun.stderr || anchorsRun.error?.message}` };
  }
  const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
  if (gpu) await warmUp(gpu, images[sizes[sizes.length - 1]]);
  const rows: Row[] = [];
  for (const name of Object.keys(images)) {
    const img = images[name];
    const is3d = img.shape.length === 3;
    const dev = gpu ? await GpuImage.upload(gpu, img) : undefined;
    const out = imageFrom(allocPixels('uint8', img.data.length), img.shape);
    for (const k of is3d ? ks.filter((x) => x <= 27) : ks) {
      const se = is3d ? `box:${k}x${k}x${k}` : `rect:${k}x${k}`;
      const row: Row = { image: name, shape: img.shape, k, se };
      const cpuReps = img.data.length > 1e7 ? 3 : reps;
      row.cpu = await repeat(cpuReps, async () => (await morph(img, { se, pool })).timings.total);
      row.cpu1 = await repeat(Math.min(cpuReps, 3), async () => (await morph(img, { se, pool: single })).timings.total);
      if (gpu && dev) {
        row.gpuKernelsIsolated = await repeat(reps, async () => {
          const r = await morph(dev, { se, profile: false });
          r.output.release();
          return kernelTotal(r.timings);
        });
        const each = await morph(dev, { se, profile: true });
        each.output.release();
        row.gpuKernelsEach = each.timings.kernels;
        row.gpuBackToBack = await backToBack(gpu, dev, se, 'auto');
        row.gpuEndToEnd = await repeat(reps, async () => (await morph(img, { se, gpu, profile: false, out })).timings.total);
        // The direct kernel reads k² (k³) pixels per output: only where it finishes in reasonable time.
        if (k * k * (is3d ? k : 1) * img.data.length <= 3e10) row.gpuNaiveBackToBack = await backToBack(gpu, dev, se, 'naive', undefined, 3);
      }
      row.anchors = anchors.results?.[name]?.[String(k)] ?? {};
      console.log(JSON.stringify(row));
      rows.push(row);
    }
    dev?.release();
  }
  const search = process.argv.includes('--no-search') || !gpu || !images['8k'] ? [] : await searchSchedules(gpu, images['8k']);
  hold?.release();
  mkdirSync('bench/results', { recursive: true });
  const meta = { heldClocks: hold?.held ?? false, date: new Date().toISOString(), node: process.version, cpuThreads: pool.size, adapter: gpu?.adapter ?? null, reps, anchors: { ...anchors, results: undefined } };
  writeFileSync('bench/results/morph.json', JSON.stringify({ op: 'morph erode', ...meta, rows, search }, null, 2));
  writeFileSync('bench/results/morph-vs-k.svg', plotVsK(rows, sizes[sizes.length - 1]));
  writeFileSync('bench/results/morph-vs-size.svg', plotVsSize(rows, sizes, 51));
  console.error('wrote bench/results/morph.json and plots');
  await pool.close();
  await single.close();
  gpu?.destroy();
}

await main();

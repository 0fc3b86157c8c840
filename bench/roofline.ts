/**
 * The roofline table of issue 22: `npm run bench -- --roofline [--procs 3] [--reps 10] [--out NAME] [--hold-clocks]
 * [--only WORD,…]`
 * (bench/run.ts hands over to this file). For every operation and size: the bytes its kernels must move at least
 * (input read and output written once; a second read where the algorithm needs the whole input before it can
 * write, as equalize's histogram), the bound those bytes give at the copy bandwidth measured in the same process
 * (a vec4 copy kernel, back to back), and imgpu's times — isolated (one call, awaited, kernel time from
 * timestamps), back to back (calls submitted without waiting for each other, kernel time of each) and end to end
 * (host array → host array) — beside the anchors (OpenCV, CuPy: bench/anchors.py, morph_anchors.py,
 * conv_anchors.py) run by the same process. Each of `procs` child processes measures everything; the table has
 * the median over processes of each process's median, and the spread ((max − min) / median over processes).
 * Where `nvidia-smi` exists, the SM clock is sampled through the run and each measurement gets the median clock
 * of its window: on the H100 the clock follows the load (345–1980 MHz), which is most of the variance.
 * --hold-clocks keeps a CUDA context open beside the run (common.ts holdClocks), which holds the clock up.
 * Writes bench/results/NAME.json and NAME.svg (NAME: roofline).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { grid1d } from '../src/core/gpu/dispatch.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { acquireStorage } from '../src/core/gpu/transfer.js';
import { allocPixels, imageFrom, type Image } from '../src/core/image.js';
import { kernelTotal } from '../src/core/timings.js';
import { encodeNpy } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { OPERATIONS } from '../src/ops/registry.js';
import { holdClocks, photoAt, stat, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : d; };

/** One row of the table: an operation with its parameters on one input, the bytes it must move, its anchors. */
interface Case {
  id: string;
  op: string;
  params: Record<string, unknown>;
  input: '8k' | 'volume';
  /** Passes over the input the algorithm needs at least (1, or 2 where the whole input decides every output). */
  reads: number;
  /** Output bytes per input byte (1: same type; 0 where the output is a small table). */
  writes: number;
  /** Which anchor script and which of its keys. */
  anchors: { script: 'anchors' | 'morph' | 'conv'; keys: string[]; k?: number; filter?: string };
}

const ALL_CASES: Case[] = [
  { id: 'equalize', op: 'equalize', params: {}, input: '8k', reads: 2, writes: 1, anchors: { script: 'anchors', keys: ['cv2.equalizeHist'] } },
  { id: 'gamma 0.5', op: 'gamma', params: { gamma: 0.5 }, input: '8k', reads: 1, writes: 1, anchors: { script: 'anchors', keys: ['cv2.LUT.gamma', 'cupy.take.gamma'] } },
  { id: 'threshold mean w11', op: 'threshold', params: { method: 'mean', window: 11, offset: 2 }, input: '8k', reads: 1, writes: 1, anchors: { script: 'anchors', keys: ['cv2.adaptiveThreshold.mean'] } },
  { id: 'clahe tiled 8x8', op: 'clahe', params: {}, input: '8k', reads: 2, writes: 1, anchors: { script: 'anchors', keys: ['cv2.createCLAHE.8x8', 'cv2.cuda.createCLAHE.8x8'] } },
  ...[3, 51, 101].map((k): Case => ({ id: `erode rect ${k}x${k}`, op: 'morph', params: { op: 'erode', se: `rect:${k}x${k}` }, input: '8k', reads: 1, writes: 1, anchors: { script: 'morph', keys: ['cv2.erode', 'cupy.grey_erosion'], k } })),
  ...['gauss:3', 'sobel-x'].map((filter): Case => ({ id: `filter ${filter}`, op: 'filter', params: { filter }, input: 'volume', reads: 1, writes: 1, anchors: { script: 'conv', keys: ['cupy.kernels', 'scipy'], filter } })),
];

/** --only A,B: the cases whose id contains one of the words (e.g. --only erode). */
const ONLY = arg('only', '').split(',').filter(Boolean);
const CASES = ALL_CASES.filter((c) => !ONLY.length || ONLY.some((w) => c.id.includes(w)));

/** --small: the same cases on 640×360 and 64×64×45 inputs (a check of the script on a software adapter). */
const SMALL = process.argv.includes('--small');
const [W8, H8, VS, VD] = SMALL ? [640, 360, 64, 45] : [7680, 4320, 512, 361];
const INPUTS = { '8k': `${W8}×${H8} u8`, volume: `${VS}×${VS}×${VD} f32` };

/** A CT-sized float volume: the photograph stacked with a slow change along z. */
async function volume(): Promise<Image> {
  const slice = await photoAt(VS, VS);
  const n = VS * VS, px = allocPixels('float32', n * VD);
  for (let z = 0; z < VD; z++) for (let i = 0; i < n; i++) px[z * n + i] = slice.data[i] + z / 4;
  return imageFrom(px, [VD, VS, VS]);
}

const COPY_WGSL = /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<vec4u>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4u>;
@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * 256u;
  if (i < arrayLength(&dst)) { dst[i] = src[i]; }
}`;

/** Device copy bandwidth (bytes read + written per second), a vec4 copy of `bytes`, `batch` times in one pass. */
async function copyBandwidth(gpu: GpuContext, bytes: number, batch: number): Promise<number> {
  const a = acquireStorage(gpu, bytes, 'copy src'), b = acquireStorage(gpu, bytes, 'copy dst');
  const pipe = await gpu.pipeline('roofline-copy', COPY_WGSL, 'copy');
  const [x, y] = grid1d(gpu, Math.ceil(bytes / 16 / 256));
  const ts: number[] = [];
  for (let r = 0; r < 7; r++) {
    const timer = new KernelTimer(gpu, true);
    const rec = new Recording(gpu, timer, 'copy', true);
    for (let i = 0; i < batch; i++) rec.dispatch('copy', pipe, { src: a, dst: b }, x, y);
    rec.submit();
    await gpu.finish();
    ts.push((await timer.read()).reduce((s, k) => s + k.ms, 0) / batch);
    timer.destroy();
  }
  gpu.buffers.release(a);
  gpu.buffers.release(b);
  return (2 * bytes) / (stat(ts).median / 1e3);
}

interface Measured { median: number; min: number; from: number; to: number }

/** `reps` values of fn after one warm-up, with the wall-clock window they were taken in (for the clock samples). */
async function measure(reps: number, fn: () => Promise<number>): Promise<Measured> {
  await fn();
  const from = Date.now();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) xs.push(await fn());
  return { ...stat(xs), from, to: Date.now() };
}

type Run = (src: unknown, params: Record<string, unknown>, on: Record<string, unknown>) => Promise<{ output: { release?: () => void }; timings: Parameters<typeof kernelTotal>[0] }>;

function runAnchors(dir: string, reps: number): Record<string, unknown> {
  const py = (args: string[]) => {
    const r = spawnSync('python3', args, { encoding: 'utf8', maxBuffer: 1 << 24 });
    try {
      return JSON.parse(r.stdout);
    } catch {
      return { error: `${args[0]} did not run: ${(r.stderr || r.error?.message || '').slice(-300)}` };
    }
  };
  const ks = [...new Set(CASES.filter((c) => c.anchors.k).map((c) => c.anchors.k))].join(',');
  const filters = [...new Set(CASES.filter((c) => c.anchors.filter).map((c) => c.anchors.filter))].join(',');
  const used = (script: Case['anchors']['script']) => CASES.some((c) => c.anchors.script === script);
  return {
    anchors: used('anchors') ? py(['bench/anchors.py', join(dir, '2d'), String(reps)]) : {},
    morph: used('morph') ? py(['bench/morph_anchors.py', join(dir, '2d'), ks, String(reps)]) : {},
    conv: used('conv') ? py(['bench/conv_anchors.py', join(dir, '3d'), filters, String(Math.min(reps, 5))]) : {},
  };
}

/** Anchor medians of one case from the anchor scripts' output. */
function anchorsOf(c: Case, a: Record<string, { results?: Record<string, Record<string, unknown>> }>): Record<string, number> {
  const out: Record<string, number> = {};
  const res = c.anchors.script === 'anchors' ? a.anchors?.results?.['8k']
    : c.anchors.script === 'morph' ? (a.morph?.results?.['8k']?.[String(c.anchors.k)] as Record<string, unknown> | undefined)
      : (a.conv?.results?.volume?.[c.anchors.filter!] as Record<string, unknown> | undefined);
  for (const k of c.anchors.keys) {
    const v = (res?.[k] as { median?: number } | undefined)?.median;
    if (typeof v === 'number') out[k] = v;
  }
  return out;
}

/** One process's measurements of every case (printed as one JSON line for the parent). */
async function child(): Promise<void> {
  const reps = Number(arg('reps', '10'));
  const gpu = await createNodeGpuContext();
  const pool = new NodeWorkerPool();
  const images = { '8k': await photoAt(W8, H8), volume: CASES.some((c) => c.input === 'volume') ? await volume() : imageFrom(new Float32Array(1), [1, 1]) };
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-roofline-'));
  mkdirSync(join(dir, '2d'));
  mkdirSync(join(dir, '3d'));
  writeFileSync(join(dir, '2d', '8k.npy'), encodeNpy(images['8k']));
  writeFileSync(join(dir, '3d', 'volume.npy'), encodeNpy(images.volume));
  const anchorsFrom = Date.now();
  const anchors = runAnchors(dir, reps) as Record<string, { results?: Record<string, Record<string, unknown>> }>;
  const anchorsTo = Date.now();
  await warmUp(gpu, images['8k']);
  const copyFrom = Date.now();
  const bandwidth = await copyBandwidth(gpu, SMALL ? 4 << 20 : 256 << 20, 10);
  const copy = { bytesPerSecond: bandwidth, from: copyFrom, to: Date.now() };
  const rows = [];
  for (const c of CASES) {
    const op = (OPERATIONS[c.op] as unknown as { run: Run } | undefined);
    if (!op) continue;
    const img = images[c.input];
    const dev = await GpuImage.upload(gpu, img);
    const kernels = async (on: Record<string, unknown>) => {
      const r = await op.run(dev, c.params, { profile: false, ...on });
      r.output.release?.();
      return kernelTotal(r.timings);
    };
    const isolated = await measure(reps, () => kernels({}));
    // Back to back: `reps` calls submitted together; each call's own kernel time (the GPU never idles between).
    const b2b: number[] = [];
    const b2bFrom = Date.now();
    for (let round = 0; round < 3; round++) b2b.push(...(await Promise.all(Array.from({ length: reps }, () => kernels({})))));
    const backToBack = { ...stat(b2b.slice(reps)), from: b2bFrom, to: Date.now() };
    dev.release();
    const floatOut = c.op === 'filter';
    const out = floatOut ? undefined : imageFrom(allocPixels(img.dtype, img.data.length), img.shape);
    const endToEnd = await measure(Math.min(reps, 5), async () => (await op.run(img, c.params, { gpu, pool, profile: false, ...(out ? { out } : {}) })).timings.total);
    rows.push({ id: c.id, isolated, backToBack, endToEnd, anchors: anchorsOf(c, anchors) });
  }
  console.log(JSON.stringify({ adapter: gpu.adapter, copy, anchorsWindow: [anchorsFrom, anchorsTo], anchorVersions: Object.fromEntries(Object.entries(anchors).map(([k, v]) => [k, { ...v, results: undefined }])), rows }));
  await pool.close();
  gpu.destroy();
  process.exit(0);
}

interface ChildRow { id: string; isolated: Measured; backToBack: Measured; endToEnd: Measured; anchors: Record<string, number> }
interface ChildResult { adapter: unknown; copy: { bytesPerSecond: number; from: number; to: number }; anchorsWindow: [number, number]; anchorVersions: unknown; rows: ChildRow[] }

/** SM clock samples (ms since epoch, MHz) from nvidia-smi, or none where it is not installed. */
function clockLogger(file: string): ChildProcess | undefined {
  if (spawnSync('nvidia-smi', ['-L']).status !== 0) return undefined;
  return spawn('sh', ['-c', `exec nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv,noheader,nounits -lms 100 > ${file}`], { stdio: 'ignore' });
}

function readClocks(file: string): [number, number][] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter(Boolean).map((l) => {
    const [ts, mhz] = l.split(',').map((s) => s.trim());
    return [new Date(ts.replace(/\//g, '-').replace(' ', 'T')).getTime(), Number(mhz)] as [number, number];
  }).filter(([t, m]) => Number.isFinite(t) && Number.isFinite(m));
}

/** Median SM clock within [from, to] (nvidia-smi's timestamps are local time, as are Date's). */
function clockIn(clocks: [number, number][], from: number, to: number): number | null {
  const xs = clocks.filter(([t]) => t >= from - 100 && t <= to + 100).map(([, m]) => m);
  return xs.length ? stat(xs).median : null;
}

/** Median over processes and the spread (max − min) / median. */
function across(xs: number[]): { median: number; spread: number; perProcess: number[] } {
  const s = stat(xs);
  return { median: s.median, spread: xs.length ? (Math.max(...xs) - Math.min(...xs)) / s.median : 0, perProcess: xs };
}

/** The parent: runs the children, aggregates, writes JSON and the plot. */
export async function roofline(): Promise<void> {
  const procs = Number(arg('procs', '3'));
  const name = arg('out', 'roofline');
  const tmp = mkdtempSync(join(tmpdir(), 'imgpu-roofline-clocks-'));
  const clockFile = join(tmp, 'clocks.csv');
  const logger = clockLogger(clockFile);
  const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
  const results: ChildResult[] = [];
  try {
    for (let p = 0; p < procs; p++) {
      const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--child', '--reps', arg('reps', '10'), ...(SMALL ? ['--small'] : []), ...(ONLY.length ? ['--only', ONLY.join(',')] : [])], { encoding: 'utf8', maxBuffer: 1 << 26 });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      try {
        results.push(JSON.parse(line));
      } catch {
        throw new Error(`roofline process ${p} failed: ${r.stderr.slice(-2000)}`);
      }
      console.error(`roofline: process ${p + 1}/${procs} done`);
    }
  } finally {
    logger?.kill();
    hold?.release();
  }
  const clocks = readClocks(clockFile);
  const copyBw = across(results.map((r) => r.copy.bytesPerSecond));
  const table = CASES.map((c) => {
    const per = results.map((r) => r.rows.find((x) => x.id === c.id)).filter((x): x is ChildRow => x !== undefined);
    const img = c.input === '8k' ? W8 * H8 : VS * VS * VD * 4;
    const bytes = img * (c.reads + c.writes);
    const bound = (bytes / copyBw.median) * 1e3;
    const metric = (k: 'isolated' | 'backToBack' | 'endToEnd') => ({
      ...across(per.map((x) => x[k].median)),
      clockMHz: across(per.map((x) => clockIn(clocks, x[k].from, x[k].to)).filter((v): v is number => v !== null)).median || null,
    });
    const anchorKeys = [...new Set(per.flatMap((x) => Object.keys(x.anchors)))];
    const anchors = Object.fromEntries(anchorKeys.map((k) => [k, across(per.map((x) => x.anchors[k]).filter((v) => v !== undefined))]));
    const isolated = metric('isolated'), backToBack = metric('backToBack');
    return { id: c.id, input: INPUTS[c.input], bytes, boundMs: bound, isolated, backToBack, endToEnd: metric('endToEnd'), anchors, isolatedOverBound: isolated.median / bound, backToBackOverBound: backToBack.median / bound };
  });
  const doc = {
    date: new Date().toISOString(), node: process.version, adapter: results[0]?.adapter ?? null, processes: procs, reps: Number(arg('reps', '10')),
    holdClocks: hold?.held ?? false, copyBandwidthGBs: { ...copyBw, median: copyBw.median / 1e9, perProcess: copyBw.perProcess.map((v) => v / 1e9) },
    anchorVersions: results[0]?.anchorVersions, anchorClockMHz: results.map((r) => clockIn(clocks, r.anchorsWindow[0], r.anchorsWindow[1])),
    table,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${name}.json`, JSON.stringify(doc, null, 2));
  writeFileSync(`bench/results/${name}.svg`, rooflineSvg(table, doc.copyBandwidthGBs.median));
  for (const t of table) {
    const a = Object.entries(t.anchors).map(([k, v]) => `${k} ${v.median.toFixed(3)}`).join(', ');
    console.log(`${t.id.padEnd(22)} ${t.input.padEnd(16)} ${(t.bytes / 1e6).toFixed(0).padStart(5)} MB  bound ${t.boundMs.toFixed(3)}  isolated ${t.isolated.median.toFixed(3)} (±${(100 * t.isolated.spread).toFixed(0)}%, ${t.isolated.clockMHz} MHz)  b2b ${t.backToBack.median.toFixed(3)} (±${(100 * t.backToBack.spread).toFixed(0)}%, ${t.backToBack.clockMHz} MHz)  e2e ${t.endToEnd.median.toFixed(2)}  | ${a}`);
  }
  console.error(`wrote bench/results/${name}.json and .svg (copy ${doc.copyBandwidthGBs.median.toFixed(0)} GB/s)`);
}

interface PlotRow { id: string; boundMs: number; isolated: { median: number }; backToBack: { median: number }; anchors: Record<string, { median: number }> }

/** Time over bound per case (log scale): isolated, back to back, and the fastest anchor, with the bound at 1. */
function rooflineSvg(rows: PlotRow[], gbs: number): string {
  const W = 760, rowH = 22, top = 50, H = top + rows.length * rowH + 40, left = 170, right = W - 20;
  const series: [string, string, (r: (typeof rows)[number]) => number | undefined][] = [
    ['isolated', '#1f77b4', (r) => r.isolated.median / r.boundMs],
    ['back to back', '#2ca02c', (r) => r.backToBack.median / r.boundMs],
    ['best anchor', '#d62728', (r) => { const v = Object.values(r.anchors).map((a) => a.median).filter((x) => x > 0); return v.length ? Math.min(...v) / r.boundMs : undefined; }],
  ];
  const vals = rows.flatMap((r) => series.map(([, , f]) => f(r)).filter((v): v is number => v !== undefined && v > 0));
  const lo = Math.floor(Math.log10(Math.min(1, ...vals))), hi = Math.ceil(Math.log10(Math.max(10, ...vals)));
  const x = (v: number) => left + ((Math.log10(v) - lo) / (hi - lo)) * (right - left);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="18" font-size="13">time ÷ memory bound (bytes moved ÷ ${gbs.toFixed(0)} GB/s measured copy), log scale; 1 = at the bound</text>`];
  for (let e = lo; e <= hi; e++) parts.push(`<line x1="${x(10 ** e)}" x2="${x(10 ** e)}" y1="${top - 10}" y2="${top + rows.length * rowH}" stroke="${e === 0 ? '#000' : '#ddd'}"/><text x="${x(10 ** e) - 6}" y="${top + rows.length * rowH + 14}">${10 ** e}×</text>`);
  rows.forEach((r, i) => {
    const y = top + i * rowH + 6;
    parts.push(`<text x="10" y="${y + 4}">${r.id}</text>`);
    for (const [, color, f] of series) {
      const v = f(r);
      if (v !== undefined && v > 0) parts.push(`<circle cx="${x(v)}" cy="${y}" r="5" fill="${color}" fill-opacity="0.8"/>`);
    }
  });
  series.forEach(([label, color], j) => parts.push(`<circle cx="${left + j * 150}" cy="${H - 12}" r="5" fill="${color}"/><text x="${left + j * 150 + 10}" y="${H - 8}">${label}</text>`));
  parts.push('</svg>');
  return parts.join('\n');
}

if (process.argv.includes('--child')) await child();

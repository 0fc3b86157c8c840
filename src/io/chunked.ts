import { totalmem } from 'node:os';
import { InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Image } from '../core/image.js';
import type { Reach } from '../core/op.js';
import {
  AtomicFsStore, createOmeZarr, downsample, levelShape, openOmeZarr, readPlanes, writePlanes,
  type OmeZarr, type ZarrLevel, type ZarrWriteOptions,
} from './zarr.js';
import { checkChunkThreads, defaultChunkThreads, IN_FLIGHT, JOBS_PER_GC, poolMeanPlanes, poolReadPlanes, poolWritePlanes, SlabBuffers, ZarrChunkPool } from './zarr-pool.js';
import { nativeLayout } from './zarr-native.js';

/**
 * Chunked execution of a volume operation from one OME-Zarr to another with bounded memory (dask's map_overlap,
 * without its failure modes): the output's chunk rows along z are computed slab by slab, each slab read with the
 * halo planes the operation declares (Reach) — any chunk size, chunks thinner than the halo included — run as a
 * whole volume of its own, cropped, and written chunk file by chunk file atomically. Finished chunk rows are
 * recorded in a manifest beside the output, so a rerun continues from them. The pyramid's coarser levels follow,
 * each from the level above, slab by slab.
 *
 * Why the result equals the whole-volume run bit for bit: every output plane kept from a slab reads only planes
 * inside the slab's input, which are the planes it reads in the whole volume — gathered through the border rule
 * where the operation gives one (`Reach.gather`), or clipped to the volume where its border pads each pass itself
 * ('constant'), so that the volume's true ends are the slab's ends. In-plane work (x, y) sees whole planes.
 */

/** The operation on one slab: a [d, h, w] volume in, the same-shaped volume out (the whole-volume semantics). */
export type SlabRun = (slab: Image) => Promise<Image>;

export interface ChunkedOptions {
  /** Resident memory the slabs may take, in bytes (default: a quarter of the machine's memory). */
  memory?: number;
  /** Layout of the output (default: the input's chunk shape, gzip, OME-Zarr 0.4, one level). */
  write?: ZarrWriteOptions;
  /** What the output is made of (the operation and its parameters): a manifest made for another recipe is not resumed. */
  recipe: string;
  /** Called once each slab is written and recorded as finished (slabs skipped as finished before count as done). */
  progress?: (done: number, total: number) => void;
  /** Frees what a slab left (the CPU pool's shared buffers: CpuPool.collect), called after each slab is computed. */
  collect?: () => Promise<void>;
  /** Threads that read+decode and encode+write chunks (zarr-pool.ts; default: the machine's cores; 0: zarrita on the main thread). */
  chunkThreads?: number;
  /** Chunk threads of the caller's (started once for many runs), used instead of `chunkThreads` new ones and left running. */
  chunkPool?: ZarrChunkPool;
}

export interface ChunkedReport {
  shape: [number, number, number];
  outDtype: Dtype;
  /** Output planes per slab at level 0, and how many slabs ran (skipped ones — already finished — not counted). */
  slabPlanes: number;
  slabs: number;
  skipped: number;
  /** Slab memory as estimated for the budget (bytes). */
  estimate: number;
  levels: number;
  /** The whole volume ran as one slab: the operation needs it whole (no declared reach). */
  whole: boolean;
  /** Chunk threads (0: the main thread), and whether the next slab was read while one was computed. */
  chunkThreads: number;
  readAhead: boolean;
}

/** The default memory budget: a quarter of the machine's memory. */
export function defaultMemory(): number {
  return Math.floor(totalmem() / 4);
}

const BYTES: Record<Dtype, number> = { uint8: 1, uint16: 2, float32: 4 };

/**
 * Bytes a slab of `n` output planes takes: its input with halo and the decoded chunks overhanging it, the
 * operation's float32 working copies (a shared copy of the input, the 1-D passes' results: 12 bytes a voxel),
 * the output and its crop, and the encoded chunks waiting to be written.
 */
export function slabBytes(plane: number, n: number, reach: Reach, inDtype: Dtype, outDtype: Dtype, chunkZIn: number, pipe?: SlabPipe): number {
  const inPlanes = n + reach.before + reach.after + 1;
  const own = plane * (inPlanes * (BYTES[inDtype] + 12) + 2 * chunkZIn * BYTES[inDtype] + n * (3 * BYTES[outDtype] + 4));
  return pipe ? own + pipeBytes(plane, inPlanes, inDtype, outDtype, pipe) : own;
}

/** How chunks move beside a slab: chunk threads (voxels of the larger of the input's and the output's chunks), the next slab read ahead. */
export interface SlabPipe {
  threads: number;
  chunkVoxels: number;
  readAhead: boolean;
}

/**
 * Bytes beside a slab's own with chunk threads: the slab read ahead (its input), and the chunks each thread holds
 * (IN_FLIGHT jobs and the JOBS_PER_GC finished ones it collects: a read's file bytes and decoded voxels, or a
 * write's voxels and their encoding).
 */
function pipeBytes(plane: number, inPlanes: number, inDtype: Dtype, outDtype: Dtype, p: SlabPipe): number {
  const ahead = p.readAhead ? plane * inPlanes * BYTES[inDtype] : 0;
  return ahead + p.threads * (IN_FLIGHT + JOBS_PER_GC) * p.chunkVoxels * 2 * Math.max(BYTES[inDtype], BYTES[outDtype]);
}

/** Output planes per slab: the most whole chunk rows (of `cz` planes) whose slab fits the budget; a typed error if none does. */
function planeBudget(depth: number, plane: number, cz: number, reach: Reach, inDtype: Dtype, outDtype: Dtype, chunkZIn: number, memory: number, pipe?: SlabPipe): number {
  const fits = (rows: number) => slabBytes(plane, rows * cz, reach, inDtype, outDtype, chunkZIn, pipe) <= memory;
  if (!fits(1)) {
    const need = slabBytes(plane, cz, reach, inDtype, outDtype, chunkZIn, pipe);
    throw new InvalidArgumentError(`${optionRef('memory', mb(memory))}: one row of output chunks (${cz} plane(s) of ${plane} voxels with ${reach.before + reach.after} halo planes) needs about ${mb(need)}; give more memory or thinner chunks`);
  }
  // The most rows that fit: slab bytes grow with the rows.
  let lo = 1, hi = Math.ceil(depth / cz);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return Math.min(depth, lo * cz);
}

/** A size in words: MiB, or KiB below one MiB. */
const mb = (b: number) => (b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);

interface Manifest {
  recipe: string;
  /** per level: the finished chunk rows along z */
  done: Record<string, number[]>;
}

const MANIFEST = '.imgpu-chunked.json';

async function readManifest(store: AtomicFsStore): Promise<Manifest | undefined> {
  const b = await store.get(`/${MANIFEST}`);
  if (!b) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(b)) as Manifest;
  } catch {
    return undefined; // written atomically, so only a foreign file: start over
  }
}

/**
 * The input planes a slab [s0, s1) reads: their indices in the volume (gathered by the border rule, or clipped to
 * it), and where output plane s0 lies among them. A slab holds at least the kernel's extent and two planes, so that
 * it is a volume the operation accepts (one plane would run as a 2D image; a clipped end slab could be thinner than
 * the kernel): a clipped one is lengthened on its inner side, which its outputs do not read.
 */
export function slabPlanes(s0: number, s1: number, depth: number, reach: Reach): { planes: number[]; first: number } {
  const need = Math.min(depth, Math.max(2, reach.before + reach.after + 1));
  if (reach.gather) {
    const extra = Math.max(0, need - (s1 - s0 + reach.before + reach.after));
    const planes: number[] = [];
    for (let p = s0 - reach.before - extra; p < s1 + reach.after; p++) planes.push(reach.gather(p, depth));
    return { planes, first: reach.before + extra };
  }
  let lo = Math.max(0, s0 - reach.before), hi = Math.min(depth, s1 + reach.after);
  if (hi - lo < need) {
    if (lo === 0) hi = need;
    else lo = hi - need;
  }
  return { planes: Array.from({ length: hi - lo }, (_, i) => lo + i), first: s0 - lo };
}

/** Reads the listed planes of a level, one read per run of consecutive planes. */
async function gatherPlanes(level: ZarrLevel, dtype: Dtype, planes: number[], name: string): Promise<Image> {
  const [, h, w] = level.shape, plane = h * w;
  // One run (a slab away from the ends, or clipped): read as it is, no second copy.
  if (planes.every((p, i) => i === 0 || p === planes[i - 1] + 1)) return readPlanes(level, dtype, planes[0], planes[planes.length - 1] + 1, name);
  const data = allocPixels(dtype, planes.length * plane);
  for (let i = 0; i < planes.length;) {
    let j = i + 1;
    while (j < planes.length && planes[j] === planes[j - 1] + 1) j++;
    const part = await readPlanes(level, dtype, planes[i], planes[j - 1] + 1, name);
    data.set(part.data, i * plane);
    i = j;
  }
  return { data, shape: [planes.length, h, w], channels: 1, dtype };
}

/** Planes [a, b) of an image's data as an image of their own (a view, no copy). */
function planesOf(img: Image, a: number, b: number): Image {
  const [, h, w] = img.shape as [number, number, number];
  return { ...img, data: img.data.subarray(a * h * w, b * h * w), shape: [b - a, h, w] };
}

/** The output store: resumed when its manifest names the same recipe, else created afresh. */
async function outputOf(outRoot: string, shape: [number, number, number], dtype: Dtype, src: OmeZarr, o: Pick<ChunkedOptions, 'recipe' | 'write'>): Promise<{ out: OmeZarr; manifest: Manifest; store: AtomicFsStore }> {
  const store = new AtomicFsStore(outRoot);
  const write = { ...o.write, chunks: o.write?.chunks ?? src.levels[0].chunks };
  const recipe = JSON.stringify({ recipe: o.recipe, write });
  const old = await readManifest(store);
  if (old?.recipe === recipe) {
    const out = await openOmeZarr(outRoot).catch(() => undefined);
    if (out && out.dtype === dtype && out.levels.length === (write.levels ?? 1) && out.levels[0].shape.every((n, a) => n === shape[a])) return { out, manifest: old, store };
  }
  const out = await createOmeZarr(outRoot, shape, dtype, src.geometry, write);
  const manifest: Manifest = { recipe, done: {} };
  await store.set(`/${MANIFEST}`, new TextEncoder().encode(JSON.stringify(manifest)));
  return { out, manifest, store };
}

/** The slab of a level-0 run: `n` output planes (whole chunk rows of the output), and what the budget estimated. */
interface SlabPlan {
  src: OmeZarr;
  reach: Reach;
  whole: boolean;
  n: number;
  estimate: number;
  /** Chunk threads, and whether the budget holds the next slab read while one is computed. */
  pipe?: SlabPipe;
}

/**
 * Opens the input and sizes its slabs for the budget; a typed error where even one chunk row (or the whole volume,
 * `reach` undefined) does not fit. With chunk threads the next slab is read ahead where the budget holds one row
 * so, else slab after slab; where it does not hold the threads' chunks either, chunks go through the main thread.
 */
async function planSlabs(inRoot: string, reach: Reach | undefined, outDtype: Dtype, outChunks: readonly number[] | undefined, memory: number, threads: number): Promise<SlabPlan> {
  const src = await openOmeZarr(inRoot);
  const level = src.levels[0];
  const [depth, h, w] = level.shape, plane = h * w;
  const whole = reach === undefined;
  const r: Reach = reach ?? { before: 0, after: 0 };
  const cz = whole ? depth : Math.min(outChunks?.[0] ?? level.chunks[0], depth);
  const voxels = (c: readonly number[]) => c.reduce((a, b) => a * b, 1);
  const ahead: SlabPipe = { threads, chunkVoxels: Math.max(voxels(level.chunks), voxels(outChunks ?? level.chunks)), readAhead: !whole };
  const pipes = threads > 0 ? [ahead, { ...ahead, readAhead: false }] : [];
  const pipe = pipes.find((q) => slabBytes(plane, cz, r, src.dtype, outDtype, level.chunks[0], q) <= memory);
  const wholeBytes = slabBytes(plane, depth, r, src.dtype, outDtype, level.chunks[0], pipe);
  if (whole && wholeBytes > memory) throw new InvalidArgumentError(`this operation needs the whole ${depth}×${h}×${w} volume at once (about ${mb(wholeBytes)}), more than ${optionRef('memory', mb(memory))}`);
  const n = planeBudget(depth, plane, cz, r, src.dtype, outDtype, level.chunks[0], memory, pipe);
  return { src, reach: r, whole, n, estimate: slabBytes(plane, n, r, src.dtype, outDtype, level.chunks[0], pipe), pipe };
}

/** Where a run's chunks are read and written: chunk threads (zarr-pool.ts), or zarrita on the main thread. */
interface ChunkIo {
  threads: number;
  /** The listed planes of a level, into the buffer of `slot` (two slots alternate when slabs are read ahead). */
  read(z: OmeZarr, level: ZarrLevel, planes: number[], slot: string): Promise<Image>;
  /** Writes the planes of `img` at plane z0; with chunk threads, returns them as written (in a slab buffer the threads share). */
  write(z: OmeZarr, level: ZarrLevel, img: Image, z0: number): Promise<Image | void>;
  /** Planes [s0, s1) of pyramid level `coarse` from the finer level's planes `fine` (as read), computed and written by the chunk threads; absent on the main thread. */
  mean?: (z: OmeZarr, fineLevel: ZarrLevel, coarse: ZarrLevel, fine: Image, range: [number, number]) => Promise<void>;
  /** Lets go of the slab buffers (level 0's, before the pyramid, whose slabs are sized otherwise). */
  release(): void;
  close(): Promise<void>;
}

/** The chunk threads a run asks for: the caller's pool's, `chunkThreads` (checked), or the machine's cores. */
function threadsOf(o: Pick<ChunkedOptions, 'chunkThreads' | 'chunkPool'>): number {
  if (o.chunkPool) return o.chunkPool.size;
  const threads = o.chunkThreads ?? defaultChunkThreads();
  checkChunkThreads(threads);
  return threads;
}

/** The chunk I/O of a run as planned: the caller's chunk threads, new ones, or none (a plan without threads). */
function chunkIo(o: Pick<ChunkedOptions, 'chunkPool'>, threads: number): ChunkIo {
  const pool = threads > 0 ? (o.chunkPool ?? new ZarrChunkPool(threads)) : undefined;
  if (!pool) {
    return {
      threads: 0,
      read: (z, level, planes) => gatherPlanes(level, z.dtype, planes, z.root),
      write: (_, level, img, z0) => writePlanes(level, img, z0),
      release: () => undefined,
      close: () => Promise.resolve(),
    };
  }
  const bufs = new SlabBuffers();
  return {
    threads: pool.size,
    read: (z, level, planes, slot) => poolReadPlanes(pool, bufs, slot, z, level, planes),
    write: (z, level, img, z0) => poolWritePlanes(pool, bufs, 'out', z, level, img, z0),
    mean: (z, fineLevel, coarse, fine, range) => poolMeanPlanes(pool, z, fineLevel, coarse, fine, range),
    release: () => bufs.clear(),
    close: () => (o.chunkPool ? Promise.resolve() : pool.close()),
  };
}

/** A slab to compute: output planes [s0, s1), and the chunk rows it finishes. */
interface Slab {
  s0: number;
  s1: number;
  rows: number[];
}

/** A slab's steps: its input read (into `slot`), the planes it keeps computed from it, those written. */
interface SlabSteps {
  read(s: Slab, slot: string): Promise<Image>;
  compute(input: Image, s: Slab): Promise<Image>;
  write(kept: Image, s: Slab): Promise<unknown>;
  /** After a slab's chunks are all written (in slab order). */
  finished(s: Slab): Promise<void>;
}

/**
 * Runs the slabs in order. Read ahead: slab k + 1 is read (into the other input slot) while slab k is computed and
 * slab k − 1 written; slab k's write starts once k − 1's has finished (one output slot), so the manifest records
 * finished rows in order. Otherwise each slab is read, computed, written in turn.
 */
async function runSlabs(slabs: Slab[], steps: SlabSteps, ahead: boolean): Promise<void> {
  const slot = (k: number) => `in${k % 2}`;
  let reading = slabs.length ? handled(steps.read(slabs[0], slot(0))) : undefined;
  let writing: Promise<void> = Promise.resolve();
  try {
    for (let k = 0; k < slabs.length; k++) {
      const input = await reading!;
      if (ahead && k + 1 < slabs.length) reading = handled(steps.read(slabs[k + 1], slot(k + 1)));
      const kept = await steps.compute(input, slabs[k]);
      await writing;
      writing = handled(steps.write(kept, slabs[k]).then(() => steps.finished(slabs[k])));
      if (!ahead) {
        await writing;
        if (k + 1 < slabs.length) reading = handled(steps.read(slabs[k + 1], slot(k + 1)));
      }
    }
    await writing;
  } finally {
    // A failed slab: the previous slab's write still finishes and is recorded (a rerun resumes after it), and no
    // read or write is left running on the buffers or the files when the error reaches the caller.
    await Promise.allSettled([reading, writing]);
  }
}

/** The promise itself, marked handled: a read or write that fails while another step is awaited rejects when its turn comes, not the process. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/**
 * The level-0 steps of a plan: the slab's input planes (halo included) read, `run` on them, the planes kept written.
 * `collect` runs as soon as a slab is computed, before the next one is (with read-ahead the next one's compute
 * starts while this one is written: collected only after the write, its working buffers were measured to add
 * ~110 MiB to the peak of a 256 MiB budget).
 */
function levelZeroSteps(p: SlabPlan, out: OmeZarr, run: SlabRun, io: ChunkIo, collect: (() => Promise<void>) | undefined, finished: (s: Slab) => Promise<void>, written?: (planes: Image, s: Slab) => Promise<void>): SlabSteps {
  const level = p.src.levels[0];
  const firsts = new Map<Slab, number>();
  return {
    read: async (s, slot) => {
      const { planes, first } = slabPlanes(s.s0, s.s1, level.shape[0], p.reach);
      firsts.set(s, first);
      return { ...(await io.read(p.src, level, planes, slot)), geometry: p.src.geometry };
    },
    compute: async (input, s) => {
      const first = firsts.get(s)!;
      firsts.delete(s);
      const kept = planesOf(await run(input), first, first + s.s1 - s.s0);
      await collect?.();
      return kept;
    },
    write: async (kept, s) => {
      const planes = await io.write(out, out.levels[0], kept, s.s0);
      if (planes && written) await written(planes, s);
    },
    finished,
  };
}

/**
 * Runs `run` over the OME-Zarr at `inRoot` (level 0) into a new OME-Zarr at `outRoot`, slab by slab within the
 * memory budget. `reach` undefined: the operation needs the whole volume, which must then fit the budget.
 */
export async function runChunked(inRoot: string, outRoot: string, run: SlabRun, reach: Reach | undefined, outDtype: Dtype, o: ChunkedOptions): Promise<ChunkedReport> {
  const memory = o.memory ?? defaultMemory();
  const p = await planSlabs(inRoot, reach, outDtype, o.write?.chunks, memory, threadsOf(o));
  if (p.pipe && (o.write?.levels ?? 1) > 1) p.n = pairedRows(p.n, p.src.levels[0].shape[0], o.write?.chunks?.[0] ?? p.src.levels[0].chunks[0]);
  const io = chunkIo(o, p.pipe?.threads ?? 0);
  try {
    const depth = p.src.levels[0].shape[0];
    const { out, manifest, store } = await outputOf(outRoot, p.src.levels[0].shape, outDtype, p.src, o);
    const report: ChunkedReport = { shape: p.src.levels[0].shape, outDtype, slabPlanes: p.n, slabs: 0, skipped: 0, estimate: p.estimate, levels: out.levels.length, whole: p.whole, chunkThreads: io.threads, readAhead: p.pipe?.readAhead ?? false };
    const total = Math.ceil(depth / p.n);
    const done = new Set(manifest.done['0'] ?? []);
    const { slabs, skipped } = pendingSlabs([0, depth], p.n, out.levels[0].chunks[0], done);
    report.skipped = skipped;
    await runSlabs(slabs, levelZeroSteps(p, out, run, io, o.collect, async (s) => {
      report.slabs++;
      for (const c of s.rows) done.add(c);
      await recordDone(store, manifest, '0', done);
      o.progress?.(report.slabs + report.skipped, total);
    }, levelOneWith(io, out, (rows) => recordDone(store, manifest, '1', rows), manifest.done['1'])), report.readAhead);
    if (out.levels.length > 1) {
      io.release();
      await o.collect?.();
    }
    for (let i = 1; i < out.levels.length; i++) {
      const done = new Set(manifest.done[String(i)] ?? []);
      await pyramidRows(out, i, [0, Infinity], memory, done, io, (rows) => recordDone(store, manifest, String(i), rows));
    }
    return report;
  } finally {
    await io.close();
  }
}

/**
 * Pyramid level 1 computed from each level-0 slab as it is written (by the chunk threads, where they write level 1
 * natively), for a slab of whole level-1 chunk rows: level 1 is then not read back and decoded from level 0's
 * files — the largest share of the pyramid's work (a second decode of the whole volume). Its rows are recorded
 * done, so pyramidRows skips them; other slabs' rows (a slab thinner than two level-1 chunk rows, a resumed run's
 * remnants) are left to it. Undefined where it does not apply.
 */
function levelOneWith(io: ChunkIo, out: OmeZarr, recorded: (done: Set<number>) => Promise<void>, before: number[] | undefined): ((planes: Image, s: Slab) => Promise<void>) | undefined {
  const mean = io.mean;
  if (!mean || out.levels.length < 2 || !nativeLayout(out.root, out.levels[1].path)) return undefined;
  const [fine, coarse] = out.levels, step = 2 * coarse.chunks[0], depth = fine.shape[0];
  const done = new Set(before ?? []);
  return async (planes, s) => {
    if (s.s0 % step !== 0 || (s.s1 % step !== 0 && s.s1 !== depth)) return;
    const range: [number, number] = [s.s0 / 2, Math.ceil(s.s1 / 2)];
    await mean(out, fine, coarse, planes, range);
    for (let r = range[0] / coarse.chunks[0]; r < Math.ceil(range[1] / coarse.chunks[0]); r++) done.add(r);
    await recorded(done);
  };
}

/**
 * Slab planes `n` (whole level-0 chunk rows of `cz` planes) made whole pairs of them — whole level-1 chunk rows,
 * which levelOneWith computes from the slab — where at least one pair fits (fewer planes: within the budget still).
 */
function pairedRows(n: number, depth: number, cz: number): number {
  const step = 2 * Math.min(cz, depth, Math.ceil(depth / 2));
  return n >= step && n < depth ? n - (n % step) : n;
}

/** The finished chunk rows of a level recorded in the manifest (written atomically). */
async function recordDone(store: AtomicFsStore, manifest: Manifest, key: string, done: ReadonlySet<number>): Promise<void> {
  manifest.done[key] = [...done].sort((a, b) => a - b);
  await store.set(`/${MANIFEST}`, new TextEncoder().encode(JSON.stringify(manifest)));
}

/**
 * The slabs of `n` planes (a multiple of the chunk depth `cz`) of planes [z0, z1) whose chunk rows are not all in
 * `done`, each narrowed to its runs of rows not in `done` (a run killed mid-job may have finished some): finished
 * rows are never recomputed. `skipped`: the slabs finished before.
 */
function pendingSlabs([z0, z1]: [number, number], n: number, cz: number, done: ReadonlySet<number>): { slabs: Slab[]; skipped: number } {
  const slabs: Slab[] = [];
  let skipped = 0;
  for (let s0 = z0; s0 < z1; s0 += n) {
    const s1 = Math.min(z1, s0 + n);
    const rows: number[] = [];
    for (let c = s0 / cz; c < Math.ceil(s1 / cz); c++) rows.push(c);
    if (rows.every((c) => done.has(c))) {
      skipped++;
      continue;
    }
    for (const run of unfinishedRuns(rows, done)) slabs.push({ s0: Math.max(s0, run[0] * cz), s1: Math.min(s1, (run[run.length - 1] + 1) * cz), rows: run });
  }
  return { slabs, skipped };
}

/** The runs of consecutive rows of `rows` not in `done`. */
function unfinishedRuns(rows: number[], done: ReadonlySet<number>): number[][] {
  const runs: number[][] = [];
  for (const c of rows) {
    if (done.has(c)) continue;
    const last = runs[runs.length - 1];
    if (last && last[last.length - 1] === c - 1) last.push(c);
    else runs.push([c]);
  }
  return runs;
}

/**
 * Chunk rows [r0, r1) (clipped to the level) of pyramid level i from level i − 1 (2×2×2 means), slab by slab
 * within the budget; rows in `done` skipped, `recorded` told after each slab.
 */
async function pyramidRows(out: OmeZarr, i: number, [r0, r1]: [number, number], memory: number, done: Set<number>, io: ChunkIo, recorded: (done: Set<number>, rows: number[]) => Promise<void>): Promise<void> {
  const fine = out.levels[i - 1], coarse = out.levels[i];
  const [depth] = levelShape(fine.shape, 1);
  const cz = coarse.chunks[0];
  const perPlane = fine.shape[1] * fine.shape[2] * BYTES[out.dtype] * 3; // two fine planes and their decoded chunks, one coarse plane
  let rows = Math.max(1, Math.floor(memory / (perPlane * cz)));
  rows = Math.min(rows, Math.ceil(depth / cz));
  const { slabs } = pendingSlabs([r0 * cz, Math.min(depth, r1 * cz)], rows * cz, cz, done);
  const fineRange = (s: Slab) => Array.from({ length: Math.min(fine.shape[0], 2 * s.s1) - 2 * s.s0 }, (_, k) => 2 * s.s0 + k);
  // The means computed by the chunk threads, chunk by chunk, where they write the level natively (measured: the
  // main thread's `downsample` was the largest share of its busy time in a 16-thread copy); else here.
  const mean = io.mean && nativeLayout(out.root, coarse.path) ? io.mean : undefined;
  await runSlabs(slabs, {
    read: (s, slot) => io.read(out, fine, fineRange(s), slot),
    compute: async (src, s) => (mean ? src : downsample(src, fine.shape, s.s0, s.s1)),
    write: (kept, s) => (mean ? mean(out, fine, coarse, kept, [s.s0, s.s1]) : io.write(out, coarse, kept, s.s0)),
    finished: async (s) => {
      for (const c of s.rows) done.add(c);
      await recorded(done, s.rows);
    },
  }, false);
}

/** What a run of some chunk rows (a queue job's) is given. */
export interface ChunkRowsOptions {
  /** resident memory its slabs may take, in bytes (default: a quarter of the machine's) */
  memory?: number;
  /** chunk rows finished before (by a run that was killed since): not redone */
  done?: Iterable<number>;
  /** called after each slab with the rows it wrote (their chunk files all renamed into place) */
  written?: (rows: number[]) => Promise<void>;
  /** frees what a slab left (CpuPool.collect) */
  collect?: () => Promise<void>;
  /** chunk threads (default: the machine's cores; 0: the main thread), or the caller's pool */
  chunkThreads?: number;
  chunkPool?: ZarrChunkPool;
}

/**
 * Output chunk rows [r0, r1) along z of level `level` of an OME-Zarr that exists (made by createChunkedOutput):
 * level 0 by `run` over the input's level 0 with the halo `reach` declares, a coarser level from the level above
 * it. Rows of other runs are neither read back nor written, so runs of disjoint rows may go at once (a queue's
 * jobs); the result equals runChunked's. Returns the rows written now.
 */
export async function runChunkRows(inRoot: string, outRoot: string, level: number, rows: [number, number], run: SlabRun, reach: Reach | undefined, o: ChunkRowsOptions = {}): Promise<number[]> {
  const memory = o.memory ?? defaultMemory();
  const out = await openOmeZarr(outRoot);
  if (level >= out.levels.length) throw new UnsupportedFormatError(`${outRoot} has ${out.levels.length} level(s), not level ${level}`);
  const done = new Set(o.done ?? []);
  const wrote: number[] = [];
  const recorded = async (_: Set<number>, r: number[]) => {
    wrote.push(...r);
    await o.written?.(r);
  };
  if (level > 0) {
    const io = chunkIo(o, threadsOf(o));
    try {
      await pyramidRows(out, level, rows, memory, done, io, recorded);
    } finally {
      await io.close();
    }
    return wrote;
  }
  const cz = out.levels[0].chunks[0];
  const p = await planSlabs(inRoot, reach, out.dtype, out.levels[0].chunks, memory, threadsOf(o));
  const io = chunkIo(o, p.pipe?.threads ?? 0);
  try {
    const depth = p.src.levels[0].shape[0];
    if (!out.levels[0].shape.every((n, a) => n === p.src.levels[0].shape[a])) throw new UnsupportedFormatError(`${outRoot} is ${out.levels[0].shape.join('×')}, its input ${inRoot} ${p.src.levels[0].shape.join('×')}`);
    const { slabs } = pendingSlabs([rows[0] * cz, Math.min(depth, rows[1] * cz)], p.whole ? depth : p.n, cz, done);
    await runSlabs(slabs, levelZeroSteps(p, out, run, io, o.collect, async (s) => {
      for (const c of s.rows) done.add(c);
      await recorded(done, s.rows);
    }), p.pipe?.readAhead ?? false);
    return wrote;
  } finally {
    await io.close();
  }
}

/**
 * The output OME-Zarr of a chunked run made once, before any chunk is written (a queue's submitter makes it, its
 * jobs write into it): kept as it is when it was made for the same recipe and layout, else created afresh.
 */
export async function createChunkedOutput(inRoot: string, outRoot: string, outDtype: Dtype, o: Pick<ChunkedOptions, 'recipe' | 'write'>): Promise<OmeZarr> {
  const src = await openOmeZarr(inRoot);
  return (await outputOf(outRoot, src.levels[0].shape, outDtype, src, o)).out;
}

/**
 * Writes a volume held in memory as an OME-Zarr (level 0 chunk rows, then the pyramid from it): what `convert`
 * does for NIfTI and DICOM inputs.
 */
export async function writeOmeZarr(outRoot: string, img: Image, o: ZarrWriteOptions = {}): Promise<OmeZarr> {
  if (img.channels !== 1) throw new UnsupportedFormatError('OME-Zarr output holds one channel: convert to gray first');
  const shape = (img.shape.length === 3 ? img.shape : [1, ...img.shape]) as [number, number, number];
  const out = await createOmeZarr(outRoot, shape, img.dtype, img.geometry, o);
  const cz = out.levels[0].chunks[0];
  const vol = { ...img, shape };
  for (let z = 0; z < shape[0]; z += cz) await writePlanes(out.levels[0], planesOf(vol, z, Math.min(shape[0], z + cz)), z);
  // No manifest: a volume in memory is written in one go.
  for (let i = 1; i < out.levels.length; i++) await pyramidRows(out, i, [0, Infinity], Infinity, new Set(), chunkIo({}, 0), async () => undefined);
  return out;
}

import { totalmem } from 'node:os';
import { InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Image } from '../core/image.js';
import type { Reach } from '../core/op.js';
import {
  AtomicFsStore, createOmeZarr, downsample, levelShape, openOmeZarr, readPlanes, writePlanes,
  type OmeZarr, type ZarrLevel, type ZarrWriteOptions,
} from './zarr.js';

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
  /** Frees what a slab left (the CPU pool's shared buffers: CpuPool.collect), called after each slab. */
  collect?: () => Promise<void>;
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
export function slabBytes(plane: number, n: number, reach: Reach, inDtype: Dtype, outDtype: Dtype, chunkZIn: number): number {
  const inPlanes = n + reach.before + reach.after + 1;
  return plane * (inPlanes * (BYTES[inDtype] + 12) + 2 * chunkZIn * BYTES[inDtype] + n * (3 * BYTES[outDtype] + 4));
}

/** Output planes per slab: the most whole chunk rows (of `cz` planes) whose slab fits the budget; a typed error if none does. */
function planeBudget(depth: number, plane: number, cz: number, reach: Reach, inDtype: Dtype, outDtype: Dtype, chunkZIn: number, memory: number): number {
  const fits = (rows: number) => slabBytes(plane, rows * cz, reach, inDtype, outDtype, chunkZIn) <= memory;
  if (!fits(1)) {
    const need = slabBytes(plane, cz, reach, inDtype, outDtype, chunkZIn);
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
async function outputOf(outRoot: string, shape: [number, number, number], dtype: Dtype, src: OmeZarr, o: ChunkedOptions): Promise<{ out: OmeZarr; manifest: Manifest; store: AtomicFsStore }> {
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

/**
 * Runs `run` over the OME-Zarr at `inRoot` (level 0) into a new OME-Zarr at `outRoot`, slab by slab within the
 * memory budget. `reach` undefined: the operation needs the whole volume, which must then fit the budget.
 */
export async function runChunked(inRoot: string, outRoot: string, run: SlabRun, reach: Reach | undefined, outDtype: Dtype, o: ChunkedOptions): Promise<ChunkedReport> {
  const src = await openOmeZarr(inRoot);
  const level = src.levels[0];
  const [depth, h, w] = level.shape, plane = h * w;
  const memory = o.memory ?? defaultMemory();
  const chunks = o.write?.chunks ?? level.chunks;
  const whole = reach === undefined;
  const r: Reach = reach ?? { before: 0, after: 0 };
  const cz = whole ? depth : Math.min(chunks[0], depth);
  const wholeBytes = slabBytes(plane, depth, r, src.dtype, outDtype, level.chunks[0]);
  if (whole && wholeBytes > memory) throw new InvalidArgumentError(`this operation needs the whole ${depth}×${h}×${w} volume at once (about ${mb(wholeBytes)}), more than ${optionRef('memory', mb(memory))}`);
  const n = planeBudget(depth, plane, cz, r, src.dtype, outDtype, level.chunks[0], memory);
  const { out, manifest, store } = await outputOf(outRoot, level.shape, outDtype, src, o);
  const report: ChunkedReport = { shape: level.shape, outDtype, slabPlanes: n, slabs: 0, skipped: 0, estimate: slabBytes(plane, n, r, src.dtype, outDtype, level.chunks[0]), levels: out.levels.length, whole };
  const outCz = out.levels[0].chunks[0];
  const total = Math.ceil(depth / n);
  await slabsOf(store, manifest, '0', depth, n, outCz, async (s0, s1) => {
    const { planes, first } = slabPlanes(s0, s1, depth, r);
    const input = { ...(await gatherPlanes(level, src.dtype, planes, inRoot)), geometry: src.geometry };
    const result = await run(input);
    await writePlanes(out.levels[0], planesOf(result, first, first + s1 - s0), s0);
    report.slabs++;
    await o.collect?.();
  }, () => report.skipped++, () => o.progress?.(report.slabs + report.skipped, total));
  for (let i = 1; i < out.levels.length; i++) await pyramidLevel(out, store, manifest, i, memory);
  return report;
}

/**
 * Calls `slab(s0, s1)` for each slab of `n` planes (a multiple of the chunk depth `cz`) not yet finished, and
 * records its chunk rows in the manifest (atomically) once its chunks are written.
 */
async function slabsOf(store: AtomicFsStore | undefined, manifest: Manifest, key: string, depth: number, n: number, cz: number, slab: (s0: number, s1: number) => Promise<void>, skip: () => void, recorded?: () => void): Promise<void> {
  const done = new Set(manifest.done[key] ?? []);
  for (let s0 = 0; s0 < depth; s0 += n) {
    const s1 = Math.min(depth, s0 + n);
    const rows: number[] = [];
    for (let c = s0 / cz; c < Math.ceil(s1 / cz); c++) rows.push(c);
    if (rows.every((c) => done.has(c))) {
      skip();
      continue;
    }
    await slab(s0, s1);
    for (const c of rows) done.add(c);
    manifest.done[key] = [...done].sort((a, b) => a - b);
    await store?.set(`/${MANIFEST}`, new TextEncoder().encode(JSON.stringify(manifest)));
    recorded?.();
  }
}

/** Level i of the pyramid from level i − 1 (2×2×2 means), slab by slab within the budget. */
async function pyramidLevel(out: OmeZarr, store: AtomicFsStore | undefined, manifest: Manifest, i: number, memory: number): Promise<void> {
  const fine = out.levels[i - 1], coarse = out.levels[i];
  const [depth] = levelShape(fine.shape, 1);
  const cz = coarse.chunks[0];
  const perPlane = fine.shape[1] * fine.shape[2] * BYTES[out.dtype] * 3; // two fine planes and their decoded chunks, one coarse plane
  let rows = Math.max(1, Math.floor(memory / (perPlane * cz)));
  rows = Math.min(rows, Math.ceil(depth / cz));
  await slabsOf(store, manifest, String(i), depth, rows * cz, cz, async (a, b) => {
    const src = await readPlanes(fine, out.dtype, 2 * a, Math.min(fine.shape[0], 2 * b), out.root);
    await writePlanes(coarse, downsample(src, fine.shape, a, b), a);
  }, () => undefined);
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
  for (let i = 1; i < out.levels.length; i++) await pyramidLevel(out, undefined, { recipe: '', done: {} }, i, Infinity);
  return out;
}

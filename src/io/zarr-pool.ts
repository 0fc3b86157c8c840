import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import type { Dtype, Image } from '../core/image.js';
import type { OmeZarr, ZarrLevel } from './zarr.js';

/**
 * Chunk threads for chunked volume runs (io/chunked.ts): worker threads that read and decode chunk files into a
 * slab, and encode and write them from one (temporary file + rename, AtomicFsStore), through zarrita's codecs as
 * the main thread would run them — so the files are byte for byte the main thread's. The slabs are
 * SharedArrayBuffers the threads copy chunks into and out of; the main thread only assembles the jobs and runs the
 * operation. Measured before this pool (docs/volumes.md): codecs (zstd's wasm, zlib), zarrita's per-row copies and
 * its garbage took the main thread's time while the operation's threads waited.
 */

/** The default number of chunk threads: the machine's cores (available parallelism). */
export function defaultChunkThreads(): number {
  return availableParallelism();
}

/** Checks a chunk thread count (an integer 0–256; 0: chunks on the main thread) before any work. */
export function checkChunkThreads(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 256) throw new InvalidArgumentError(`${optionRef('chunkThreads')} must be an integer 0–256, got ${n}`);
}

/** Which level of which opening a job is for (chunk threads open each once). */
interface LevelRef {
  root: string;
  path: string;
  opened: string;
}

/** A chunk read into a slab: its planes in [a, b), level plane a at slab plane `dstPlane`. */
export interface ReadJob {
  op: 'read';
  level: LevelRef;
  chunk: [number, number, number];
  planes: [number, number];
  buffer: SharedArrayBuffer;
  dtype: Dtype;
  dstPlane: number;
}

/** A chunk written from a slab of `planes` planes (at element `offset` of the buffer) whose plane 0 is level plane `srcZ0`. */
export interface WriteJob {
  op: 'write';
  level: LevelRef;
  chunk: [number, number, number];
  buffer: SharedArrayBuffer;
  offset: number;
  dtype: Dtype;
  srcZ0: number;
  planes: number;
}

/**
 * A pyramid chunk computed from a finer level's slab and written: the slab (`fineVoxels` long from element
 * `fineOffset`, of a level of shape `fineShape`) holds fine planes from 2 · coarse[0]; the chunk's voxels in coarse
 * planes [coarse[0], coarse[1]).
 */
export interface MeanJob {
  op: 'mean';
  level: LevelRef;
  chunk: [number, number, number];
  buffer: SharedArrayBuffer;
  fineOffset: number;
  dtype: Dtype;
  fineShape: [number, number, number];
  fineVoxels: number;
  coarse: [number, number];
}

export type ChunkJob = ReadJob | WriteJob | MeanJob;
export type ChunkReply = { id: number; error?: string };

interface Pending {
  job: ChunkJob;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Jobs a thread holds at once: one decoding while the next one's file is read. */
export const IN_FLIGHT = 2;
/** Jobs between a thread's collections of the chunks its jobs left (zarr-worker.ts). */
export const JOBS_PER_GC = 4;

/** The worker threads and their queue. Threads start with the first job and are unref'd while idle. */
export class ZarrChunkPool {
  private readonly workers: { w: Worker; busy: number }[] = [];
  private readonly queue: Pending[] = [];
  private readonly running = new Map<number, Pending & { worker: { w: Worker; busy: number } }>();
  private next = 0;

  constructor(readonly size: number = defaultChunkThreads()) {
    checkChunkThreads(size);
    if (size < 1) throw new InvalidArgumentError(`${optionRef('chunkThreads')}: a pool needs at least one thread`);
  }

  /** Starts the threads and loads zarrita in each (so that a measurement after it sees their start-up done). */
  async start(): Promise<void> {
    while (this.workers.length < this.size) this.spawn();
    await Promise.all(this.workers.map((x) => new Promise<void>((resolve) => {
      x.w.ref(); // held until it answers: an unref'd thread would let the process exit meanwhile
      x.w.once('message', () => {
        if (x.busy === 0) x.w.unref();
        resolve();
      });
      x.w.postMessage({ op: 'load' });
    })));
  }

  private spawn(): void {
    const w = new Worker(new URL('./zarr-worker.js', import.meta.url));
    const entry = { w, busy: 0 };
    w.on('message', (m: ChunkReply) => this.done(m));
    w.on('error', (e) => this.fail(entry, e));
    w.unref();
    this.workers.push(entry);
  }

  /** Runs one job on the least busy thread (queued while every thread holds IN_FLIGHT). */
  run(job: ChunkJob): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.workers.length < this.size) this.spawn();
    while (this.queue.length) {
      const worker = this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
      if (worker.busy >= IN_FLIGHT) return;
      const p = this.queue.shift()!;
      const id = ++this.next;
      if (worker.busy++ === 0) worker.w.ref();
      this.running.set(id, { ...p, worker });
      worker.w.postMessage({ id, job: p.job });
    }
  }

  private done(m: ChunkReply): void {
    const p = this.running.get(m.id);
    if (!p) return; // the 'load' reply of start()
    this.running.delete(m.id);
    if (--p.worker.busy === 0) p.worker.w.unref();
    if (m.error !== undefined) p.reject(new UnsupportedFormatError(m.error));
    else p.resolve();
    this.dispatch();
  }

  /** A thread that died (out of memory, a crash): its jobs fail, a new thread takes the queue. */
  private fail(worker: { w: Worker; busy: number }, e: Error): void {
    for (const [id, p] of this.running) {
      if (p.worker !== worker) continue;
      this.running.delete(id);
      p.reject(e);
    }
    this.workers.splice(this.workers.indexOf(worker), 1);
    this.dispatch();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((x) => x.w.terminate()));
  }
}

/** The level of an opening as the threads name it. */
function refOf(z: OmeZarr, level: ZarrLevel): LevelRef {
  return { root: z.root, path: level.path, opened: z.opened };
}

const BYTES: Record<Dtype, number> = { uint8: 1, uint16: 2, float32: 4 };
const CTORS = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array } as const;

/** Pixels over a shared buffer (a slab's, one of SlabBuffers'), `voxels` long from element `offset`. */
export function pixelsOver(buffer: ArrayBufferLike, dtype: Dtype, voxels: number, offset = 0): Image['data'] {
  return new CTORS[dtype](buffer as unknown as ArrayBuffer, offset * BYTES[dtype], voxels) as Image['data'];
}

/**
 * Shared buffers reused slab after slab: fresh shared buffers per slab stay resident until a full collection
 * (Node 22 does not count them as external memory; docs/volumes.md), reused ones cost their size once.
 */
export class SlabBuffers {
  private readonly slots = new Map<string, SharedArrayBuffer>();
  /** A shared buffer of at least `bytes` for `slot` (the slot's own, grown when too small). */
  get(slot: string, bytes: number): SharedArrayBuffer {
    let b = this.slots.get(slot);
    if (!b || b.byteLength < bytes) {
      b = new SharedArrayBuffer(bytes);
      this.slots.set(slot, b);
    }
    return b;
  }
  /** Lets go of every slot (a run's level 0 done: the pyramid's slabs are sized otherwise). */
  clear(): void {
    this.slots.clear();
  }
  /** Whether `buffer` is the buffer of `slot`. */
  holds(slot: string, buffer: ArrayBufferLike): boolean {
    return this.slots.get(slot) === buffer;
  }
}

/**
 * Planes of a level, listed (a slab with its halo: runs of consecutive planes, gathered through a border rule
 * possibly), read by the chunk threads into the shared buffer of `slot`: one job per chunk of each run.
 */
export async function poolReadPlanes(pool: ZarrChunkPool, bufs: SlabBuffers, slot: string, z: OmeZarr, level: ZarrLevel, planes: number[]): Promise<Image> {
  const [, h, w] = level.shape, [cz, cy, cx] = level.chunks;
  const buffer = bufs.get(slot, planes.length * h * w * BYTES[z.dtype]);
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < planes.length;) {
    let j = i + 1;
    while (j < planes.length && planes[j] === planes[j - 1] + 1) j++;
    const a = planes[i], b = planes[j - 1] + 1;
    for (let c = Math.floor(a / cz); c * cz < b; c++) {
      for (let y = 0; y * cy < h; y++) {
        for (let x = 0; x * cx < w; x++) jobs.push(pool.run({ op: 'read', level: refOf(z, level), chunk: [c, y, x], planes: [a, b], buffer, dtype: z.dtype, dstPlane: i }));
      }
    }
    i = j;
  }
  await settleAll(jobs);
  return { data: pixelsOver(buffer, z.dtype, planes.length * h * w), shape: [planes.length, h, w], channels: 1, dtype: z.dtype };
}

/**
 * Writes the planes of `img` at plane z0 of a level through the chunk threads, one job per chunk: from the shared
 * buffer of `slot`, `img` copied into it unless it lies there already (an operation's own output buffer is not
 * handed to the threads: a fresh shared buffer per slab would stay resident in them).
 */
export async function poolWritePlanes(pool: ZarrChunkPool, bufs: SlabBuffers, slot: string, z: OmeZarr, level: ZarrLevel, img: Image, z0: number): Promise<Image> {
  const [n, h, w] = img.shape as [number, number, number], [cz, cy, cx] = level.chunks;
  const own = bufs.holds(slot, img.data.buffer);
  const buffer = own ? img.data.buffer as SharedArrayBuffer : bufs.get(slot, img.data.byteLength);
  const offset = own ? img.data.byteOffset / BYTES[z.dtype] : 0;
  const jobs: Promise<void>[] = [];
  for (let c = Math.floor(z0 / cz); c * cz < z0 + n; c++) {
    // Copied chunk row by chunk row, the threads encoding one row while the next is copied (and the main thread
    // free between rows to hand them more jobs).
    if (!own) {
      await new Promise(setImmediate);
      copyPlanes(img, buffer, Math.max(0, c * cz - z0), Math.min(n, (c + 1) * cz - z0));
    }
    for (let y = 0; y * cy < h; y++) {
      for (let x = 0; x * cx < w; x++) jobs.push(pool.run({ op: 'write', level: refOf(z, level), chunk: [c, y, x], buffer, offset, dtype: z.dtype, srcZ0: z0, planes: n }));
    }
  }
  await settleAll(jobs);
  return { ...img, data: pixelsOver(buffer, z.dtype, img.data.length, offset) };
}

/** Planes [a, b) of `img` copied to the same place in `buffer` (as bytes: one memory copy). */
function copyPlanes(img: Image, buffer: SharedArrayBuffer, a: number, b: number): void {
  const plane = img.data.byteLength / img.shape[0];
  new Uint8Array(buffer, a * plane, (b - a) * plane).set(new Uint8Array(img.data.buffer, img.data.byteOffset + a * plane, (b - a) * plane));
}

/**
 * Planes [s0, s1) of a pyramid level computed from the finer level's planes (`fine`, read by poolReadPlanes: a
 * slab buffer) and written by the chunk threads, one job per chunk — the 2×2×2 means off the main thread. For a
 * level the threads write natively (zarr-native.ts); the caller checks.
 */
export async function poolMeanPlanes(pool: ZarrChunkPool, z: OmeZarr, fineLevel: ZarrLevel, coarse: ZarrLevel, fine: Image, [s0, s1]: [number, number]): Promise<void> {
  const [, h, w] = coarse.shape, [cz, cy, cx] = coarse.chunks;
  const jobs: Promise<void>[] = [];
  for (let c = Math.floor(s0 / cz); c * cz < s1; c++) {
    for (let y = 0; y * cy < h; y++) {
      for (let x = 0; x * cx < w; x++) {
        jobs.push(pool.run({ op: 'mean', level: refOf(z, coarse), chunk: [c, y, x], buffer: fine.data.buffer as SharedArrayBuffer, fineOffset: fine.data.byteOffset / BYTES[z.dtype], dtype: z.dtype, fineShape: fineLevel.shape, fineVoxels: fine.data.length, coarse: [s0, s1] }));
      }
    }
  }
  await settleAll(jobs);
}

/** Waits for every job (none left running on a buffer about to be reused), then throws the first failure. */
async function settleAll(jobs: Promise<void>[]): Promise<void> {
  const r = await Promise.allSettled(jobs);
  const bad = r.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (bad) throw bad.reason;
}

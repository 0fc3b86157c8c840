import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import * as errors from '../core/errors.js';
import type { Image } from '../core/image.js';
import type { ReadOptions, WriteOptions } from '../io/index.js';
import type { PipelineStep } from '../ops/pipeline.js';

/** What a lane worker reports of an image it processed whole (CodecPool.process). */
export interface LaneDone {
  ms: number;
  first: boolean;
  /** The decoder's warnings, where a lenient failOn read a damaged file through. */
  warnings?: readonly string[];
}

/**
 * The capacity of a recycled pixel buffer for `bytes`: 8 size classes per doubling (at most 12.5 % more), so the
 * photos of a folder, which rarely share a size, share buffers.
 */
export function bufferClass(bytes: number): number {
  const step = 2 ** Math.max(12, Math.floor(Math.log2(Math.max(bytes, 1))) - 3);
  return Math.ceil(bytes / step) * step;
}

/**
 * Shared pixel buffers handed out again once nothing reads them, by capacity class (bufferClass): a fresh 12 MB
 * buffer per image meant page faults, zero-filling and garbage collection in every thread that made one. Keeps at
 * most `keep` free buffers per class, and in all no more bytes than `keep` buffers of the largest class given: a
 * folder of photos of many sizes filled class after class, 4 buffers each, in every codec worker. Measured on 200
 * photos of 12–24 MP: peak RSS 2,358 → 2,219 MiB. Most of that batch's growth with its count remains (docs/memory.md).
 */
export class RecycledBuffers {
  private readonly free = new Map<number, SharedArrayBuffer[]>();
  private freeBytes = 0;
  private largest = 0;
  constructor(private readonly keep: number) {}

  /**
   * A buffer of at least bufferClass(bytes) bytes: a free one of that class, else the smallest free one up to twice
   * as large, else a new one of that class. Classes alone rarely matched in a folder of photos growing in size: each
   * photo's memory was new (50 ms of a 210-photo batch's main thread on the H200, `alloc` in its profile).
   */
  alloc(bytes: number): SharedArrayBuffer {
    const cap = bufferClass(bytes);
    let best: number | undefined = this.free.get(cap)?.length ? cap : undefined;
    if (best === undefined) for (const [size, list] of this.free) if (list.length && size > cap && size <= 2 * cap && (best === undefined || size < best)) best = size;
    return (best !== undefined && this.take(best)) || new SharedArrayBuffer(cap);
  }

  /** A free buffer of class `size`, taken off its list. */
  private take(size: number): SharedArrayBuffer | undefined {
    const b = this.free.get(size)?.pop();
    if (b) this.freeBytes -= b.byteLength;
    return b;
  }

  /** Takes back a buffer that came from alloc (others — exact-size ones, plain memory — are left to the GC). */
  give(buffer: ArrayBufferLike): void {
    if (!recyclable(buffer)) return;
    const size = buffer.byteLength;
    this.largest = Math.max(this.largest, size);
    const list = this.free.get(size) ?? [];
    this.free.set(size, list);
    if (list.length >= this.keep) return;
    // Over the bytes kept: other classes' buffers go first, in the order their classes were first given back (Map order).
    for (const [other, l] of this.free) {
      while (other !== size && l.length && this.freeBytes + size > this.keep * this.largest) this.take(other);
    }
    if (this.freeBytes + size > this.keep * this.largest) return;
    list.push(buffer);
    this.freeBytes += size;
  }

  /** Bytes of the free buffers kept (tests). */
  get kept(): number {
    return this.freeBytes;
  }
}

/**
 * The CPU path's output bytes written between full garbage collections (SharedGarbage). Measured on 12–24 MP photos
 * (docs/memory.md): 256 MiB peaked at 705–933 MiB RSS, 128 MiB at 584–642, at the same speed.
 */
export const COLLECT_BYTES = 128 * 2 ** 20;

/**
 * Images finished with between full garbage collections in every thread (SharedGarbage), whatever their size. A
 * batch's main thread promotes the short-lived objects of the images in flight (promises, events, messages) to V8's
 * old space, where only a full collection frees them, and V8 ran none of its own over 30,000 small images: their
 * anonymous memory grew 1.6 KB an image (docs/memory.md). A collection every 2,000 images freed 14 MiB of the main
 * heap's 28 and took 33 ms of the main thread (50–90 ms of a codec worker's) on the loaded 2-core machine, one every
 * ~5 s there; the anonymous memory of 40,000 small images then stayed within 2.3 MiB from the 8,000th on.
 */
export const COLLECT_IMAGES = 2000;

/**
 * Collects garbage once `budget` bytes of fresh shared pixel memory have been dropped, or `images` images finished
 * with, since the last collection. V8 does not count SharedArrayBuffers towards its memory pressure (node/gc.ts), so
 * a batch of large photos on the CPU path — each operation's output and intermediates a new shared buffer, held by
 * the main thread, the CPU pool's workers and the codec worker that encoded it — kept them resident until some
 * collection happened to run: peak RSS grew with the number of photos. Small images, whose bytes would take tens of
 * thousands to reach the budget, left the garbage of their promises and messages in V8's old space instead
 * (COLLECT_IMAGES). `collect` runs in every thread that held them (docs/memory.md).
 */
export class SharedGarbage {
  private dropped = 0;
  private finished = 0;
  constructor(private readonly budget: number, private readonly collect: () => void, private readonly images = COLLECT_IMAGES) {}

  /** An image is finished with, and `bytes` of its shared memory are no longer referenced by the batch. */
  drop(bytes = 0): void {
    this.dropped += bytes;
    this.finished++;
    if (this.dropped < this.budget && this.finished < this.images) return;
    this.dropped = 0;
    this.finished = 0;
    this.collect();
  }
}

/**
 * The bytes of the file at `path`, read into memory from `host` (a RecycledBuffers), for the caller to give back once
 * read: a batch's input files, whose fresh Buffer per photo (fs.readFile) added external memory that V8 answers with
 * full collections on the main thread (0.5–0.9 s of a 210-photo batch's on the H100, with the files written).
 */
export async function readFileInto(path: string, host: { alloc(bytes: number): SharedArrayBuffer }): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const bytes = new Uint8Array(host.alloc(size), 0, size);
    let at = 0;
    for (let n = -1; at < size && n !== 0; at += n) n = (await fh.read(bytes, at, size - at, at)).bytesRead;
    return bytes.subarray(0, at);
  } finally {
    await fh.close();
  }
}

/** Whether `buffer` is a shared buffer of a capacity class (so RecycledBuffers.alloc may hand it out again). */
function recyclable(buffer: ArrayBufferLike): buffer is SharedArrayBuffer {
  return buffer instanceof SharedArrayBuffer && buffer.byteLength === bufferClass(buffer.byteLength);
}

/**
 * Worker threads that read and write images (codec-worker.ts): decoding, the gray conversion and encoding of a
 * batch run here, several at a time, while the main thread feeds the GPU. Pixels come back in shared memory
 * (allocPixels), so handing an image between threads copies nothing. Errors keep their imgpu type.
 */
export class CodecPool {
  private readonly workers: Worker[] = [];
  private readonly jobs = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  /** Jobs sent to each worker and not yet answered. */
  private readonly load = new Map<Worker, number>();
  private next = 0;
  private turn = 0;

  // One worker per core but the main thread's and the GPU driver's: with libjpeg-turbo a batch is codec-bound.
  // IMGPU_CODEC_THREADS overrides it (benchmarks). Workers start with the jobs that need them: each costs ~160 ms of
  // CPU to start (an isolate and its modules), and a `--jpeg gpu` batch of JPEGs sends them nothing — starting 14 at
  // once took cores from its busy main thread and entropy decoding (H100 profile, docs/jpeg.md).
  // `nice`: the workers' priority (Linux nice value; the workers' default is 5: codec-worker.ts).
  constructor(readonly size = Number(process.env.IMGPU_CODEC_THREADS) || Math.max(2, Math.min(16, availableParallelism() - 2)), private readonly nice?: number) {}

  /** Workers started so far (tests). */
  get started(): number {
    return this.workers.length;
  }

  /**
   * The worker with the fewest jobs, a new one while fewer than `size` run and none is idle: jobs of very different
   * lengths (a CPU lane's whole images beside reads and writes) queued in turn waited behind a long one while
   * another worker sat idle.
   */
  private worker(): Worker {
    let best: Worker | undefined;
    for (const w of this.workers) if (!best || this.load.get(w)! < this.load.get(best)!) best = w;
    if ((!best || this.load.get(best)! > 0) && this.workers.length < this.size) {
      best = this.start();
      this.workers.push(best);
    }
    return best!;
  }

  private start(): Worker {
    const w = new Worker(new URL('./codec-worker.js', import.meta.url), { workerData: { nice: this.nice } });
    this.load.set(w, 0);
    w.on('message', (m: { id: number; ok: boolean; value?: unknown; name?: string; message?: string }) => {
      const j = this.jobs.get(m.id);
      this.jobs.delete(m.id);
      if (!j) return;
      this.load.set(w, this.load.get(w)! - 1);
      if (m.ok) j.resolve(m.value);
      else {
        const Ctor = (errors as unknown as Record<string, new (msg: string) => Error>)[m.name ?? ''] ?? Error;
        j.reject(new Ctor(m.message ?? 'codec worker failed'));
      }
    });
    w.on('error', (e) => {
      for (const j of this.jobs.values()) j.reject(e);
      this.jobs.clear();
      for (const x of this.workers) this.load.set(x, 0);
    });
    return w;
  }

  private send<T>(msg: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    const w = this.worker();
    this.load.set(w, this.load.get(w)! + 1);
    return new Promise<T>((resolve, reject) => {
      this.jobs.set(id, { resolve: resolve as (v: unknown) => void, reject });
      w.postMessage({ ...msg, id });
    });
  }

  /**
   * Hands a decoded image's shared buffer back to a worker, which decodes a later image into it (size classes:
   * bufferClass). Only for buffers nothing reads any more.
   */
  recycle(buffer: ArrayBufferLike): void {
    if (!recyclable(buffer) || this.workers.length === 0) return; // no worker has decoded into one yet
    this.workers[this.turn++ % this.workers.length].postMessage({ kind: 'recycle', buffer });
  }

  /**
   * A full garbage collection in every worker, queued behind its jobs: an output image written here came in a
   * shared buffer, which stays resident until every thread that held it has collected (node/gc.ts).
   */
  collect(): void {
    for (const w of this.workers) w.postMessage({ kind: 'gc' });
  }

  read(path: string, opts: ReadOptions): Promise<Image> {
    return this.send<Image>({ kind: 'read', path, opts });
  }

  write(path: string, image: Image, opts: WriteOptions = {}): Promise<void> {
    return this.send<void>({ kind: 'write', path, image, opts });
  }

  /**
   * Processes an image whole on a worker: reads `path` (`read`), runs `steps` on the CPU there, writes `out`
   * (atomically, `write`). Nothing of it runs on the calling thread (a batch's CPU lane). Resolves to the
   * milliseconds the worker spent on it, whether it was the worker's first (slower: its code still compiling), and
   * the decoder's warnings where a lenient failOn read a damaged file through.
   */
  process(path: string, out: string, steps: PipelineStep[], read: ReadOptions, write: WriteOptions = {}): Promise<LaneDone> {
    return this.send<LaneDone>({ kind: 'process', path, out, steps, read, write });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

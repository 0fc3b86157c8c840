/**
 * CPU parallelism. A pool runs named tasks (pure functions over typed arrays, listed in one task table) either
 * inline or on worker threads that share the pixel buffers (SharedArrayBuffer) instead of copying them.
 * The interface is platform-neutral; the worker_threads implementation lives in src/node/.
 */
export type TaskFn = (...args: any[]) => unknown;
export type TaskTable = Record<string, TaskFn>;

export interface CpuPool {
  /** Number of tasks that can run at once. */
  readonly size: number;
  run<R>(task: string, args: unknown[]): Promise<R>;
  /** Runs a task on the calling thread (for work too small to be worth a thread hand-off). */
  runLocal<R>(task: string, args: unknown[]): R;
  close(): Promise<void>;
}

export function runTask(tasks: TaskTable, task: string, args: unknown[]): unknown {
  const fn = tasks[task];
  if (!fn) throw new Error(`unknown CPU task '${task}'`);
  return fn(...args);
}

/** Runs tasks on the calling thread: the browser default and the path for small inputs. */
export class InlinePool implements CpuPool {
  readonly size = 1;
  constructor(private readonly tasks: TaskTable) {}
  async run<R>(task: string, args: unknown[]): Promise<R> {
    return this.runLocal<R>(task, args);
  }
  runLocal<R>(task: string, args: unknown[]): R {
    return runTask(this.tasks, task, args) as R;
  }
  async close(): Promise<void> {}
}

/**
 * Pixels per block of the point operations (histogram, LUT), which workers take dynamically (forBlocks). Swept on
 * the H100 machine (bench/cpu-dispatch.ts, 2^15–2^18): 2^17 and 2^18 best at 4K and 8K, smaller blocks slower
 * (per-block results). A setting so that benchmarks can sweep it.
 */
export const cpuTuning = { pixelBlock: 1 << 17 };

/**
 * Splits [0, n) into at most pool.size chunks of at least `minChunk` items and runs `task` on each; below
 * 2·minChunk the work runs as one chunk (thread hand-off costs more than it saves).
 */
export async function forChunks<R>(
  pool: CpuPool, n: number, minChunk: number, task: string, argsFor: (start: number, end: number) => unknown[],
): Promise<R[]> {
  const chunks = Math.max(1, Math.min(pool.size, Math.floor(n / minChunk)));
  if (chunks === 1) return [pool.runLocal<R>(task, argsFor(0, n))];
  const per = Math.ceil(n / chunks);
  const jobs: Promise<R>[] = [];
  for (let start = 0; start < n; start += per) jobs.push(pool.run<R>(task, argsFor(start, Math.min(n, start + per))));
  return Promise.all(jobs);
}

/** Placeholders in a block task's arguments, replaced by each block's bounds (forBlocks). */
export const BLOCK_START = '\u0000start';
export const BLOCK_END = '\u0000end';

/**
 * Worker side of forBlocks: takes blocks of `block` items from the shared counter until none are left and runs
 * `task` on each (BLOCK_START/BLOCK_END in `args` replaced by the block's bounds). Returns the blocks' results, or
 * with `sum` their elementwise sum (typed arrays of one length, e.g. partial histograms) as one result.
 */
export function runBlocks(tasks: TaskTable, task: string, counter: Int32Array, n: number, block: number, args: unknown[], sum = false): unknown[] {
  const out: unknown[] = [];
  for (;;) {
    const start = Atomics.add(counter, 0, 1) * block;
    if (start >= n) return out;
    const end = Math.min(n, start + block);
    const r = runTask(tasks, task, args.map((a) => (a === BLOCK_START ? start : a === BLOCK_END ? end : a)));
    if (sum && out.length) {
      const acc = out[0] as Uint32Array, add = r as Uint32Array;
      for (let i = 0; i < acc.length; i++) acc[i] += add[i];
    } else {
      out.push(r);
    }
  }
}

/**
 * Like forChunks, but scheduled dynamically, as OpenCV's parallel_for_: each worker gets one 'blocks' task that
 * takes blocks of [0, n) from a shared counter until all are taken, so a worker that wakes late or is descheduled
 * does fewer blocks instead of holding the others up. Measured on the H100 machine (bench/cpu-dispatch.ts,
 * 16 workers, 8K): the last of 16 equal chunks came back at 5.6 ms, the first at 3.1 ms; with blocks the
 * histogram pass went 5.7 → 4.5 ms and the LUT pass 6.2 → 3.9 ms. Results come per block in no particular order
 * (`sum`: one elementwise sum per worker).
 */
export async function forBlocks<R>(pool: CpuPool, n: number, block: number, task: string, args: unknown[], sum = false): Promise<R[]> {
  if (pool.size <= 1 || n < 2 * block || typeof SharedArrayBuffer === 'undefined') {
    return [pool.runLocal<R>(task, args.map((a) => (a === BLOCK_START ? 0 : a === BLOCK_END ? n : a)))];
  }
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const workers = Math.min(pool.size, Math.ceil(n / block));
  const parts = await Promise.all(Array.from({ length: workers }, () => pool.run<R[]>('blocks', [task, counter, n, block, args, sum])));
  return parts.flat() as R[];
}

/** True when the array's memory can be shared with workers without a copy. */
export function isShared(a: ArrayBufferView): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && a.buffer instanceof SharedArrayBuffer;
}

/** True when workers of `pool` can write their results straight into `a` (shared memory, or no workers). */
export function writableByWorkers(pool: CpuPool, a: ArrayBufferView): boolean {
  return pool.size <= 1 || isShared(a);
}

/**
 * Returns `a` itself if it lives in shared memory or the pool is inline, else a shared copy (one copy, instead
 * of each worker receiving a structured clone of the whole underlying buffer).
 */
export function shareable<A extends Uint8Array | Uint16Array | Uint32Array | Float32Array>(pool: CpuPool, a: A): A {
  if (pool.size <= 1 || isShared(a) || typeof SharedArrayBuffer === 'undefined') return a;
  const Ctor = a.constructor as new (b: SharedArrayBuffer) => A;
  const copy = new Ctor(new SharedArrayBuffer(a.byteLength));
  copy.set(a as never);
  return copy;
}

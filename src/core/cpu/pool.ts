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
 * Pixels per chunk below which point operations (histogram, LUT) do not split further. Swept on the H100 machine
 * (16 threads, bench/cpu-profile.ts --chunk, h100-cpu-chunk-sweep.txt): at 4K, 2^20 left 8 of the 16 threads idle
 * and equalize took 4.7 ms; 2^17–2^19 all gave 2.3–2.6 ms; 8K is split 16 ways either way. A setting so that
 * benchmarks can sweep it.
 */
export const cpuTuning = { pixelChunk: 1 << 18 };

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

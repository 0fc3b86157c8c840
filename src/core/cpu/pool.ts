/**
 * CPU parallelism. A pool runs tasks (pure functions of one argument object over typed arrays, each declared once
 * with defineTask by its family) either inline or on worker threads that share the pixel buffers
 * (SharedArrayBuffer) instead of copying them: an argument object is structured-cloned, and a typed array on a
 * SharedArrayBuffer inside it arrives as a view of the same memory. The interface is platform-neutral; the
 * worker_threads implementation lives in src/node/.
 */
import type { PointKernels } from './native.js';

/**
 * A CPU task: its function and the name workers know it by (the key of the table that ops/tasks.ts builds from
 * the families' handles; only the wire between threads uses it).
 */
export interface TaskHandle<A, R> {
  readonly name: string;
  readonly fn: (args: A) => R;
}

/** Declares a task; `name` must be unique among the tasks of ops/tasks.ts ('family.task'). */
export function defineTask<A, R>(name: string, fn: (args: A) => R): TaskHandle<A, R> {
  return { name, fn };
}

/** The range of a chunk or block task ([start, end) of its items), filled in by forChunks / forBlocks. */
export interface Range {
  start: number;
  end: number;
}

/** A task's arguments without its range: what a caller of forChunks / forBlocks passes. */
export type RangeFree<A extends Range> = Omit<A, keyof Range>;

// A table holds tasks of every argument type.
type AnyTask = TaskHandle<any, unknown>;

/** The tasks a worker thread can run, by name. */
export type TaskTable = ReadonlyMap<string, AnyTask>;

export interface CpuPool {
  /** Number of tasks that can run at once. */
  readonly size: number;
  /**
   * Native point kernels (8-bit histogram and LUT on native threads) where this pool's platform provides them:
   * set by the Node pool when dist/native/imgpu-native.node loads, absent on the inline pool and in browsers.
   */
  readonly native?: PointKernels;
  run<A, R>(task: TaskHandle<A, R>, args: A): Promise<R>;
  /** Runs a task on the calling thread (for work too small to be worth a thread hand-off). */
  runLocal<A, R>(task: TaskHandle<A, R>, args: A): R;
  /** Frees the shared buffers of past tasks now (a Node pool: node/gc.ts); long runs of many inputs call it between them. */
  collect?(): Promise<void>;
  close(): Promise<void>;
}

/** Worker side: runs the task called `name` from `tasks`. */
export function runTask(tasks: TaskTable, name: string, args: unknown): unknown {
  const t = tasks.get(name);
  if (!t) throw new Error(`unknown CPU task '${name}'`);
  return t.fn(args);
}

/** Runs tasks on the calling thread: the browser default and the path for small inputs. */
export class InlinePool implements CpuPool {
  readonly size = 1;
  async run<A, R>(task: TaskHandle<A, R>, args: A): Promise<R> {
    return task.fn(args);
  }
  runLocal<A, R>(task: TaskHandle<A, R>, args: A): R {
    return task.fn(args);
  }
  async close(): Promise<void> {}
}

/**
 * The single-threaded pool used when the caller passes none (and in browsers): tasks run their handle's function
 * on the calling thread, so it needs no task table — a family's code reaches no other family's kernels through it.
 */
export const inlinePool: CpuPool = new InlinePool();

/**
 * Pixels per block of the point operations (histogram, LUT), which workers take dynamically (forBlocks). Swept on
 * the H100 machine (bench/cpu-dispatch.ts, 2^15–2^18): 2^17 and 2^18 best at 4K and 8K, smaller blocks slower
 * (per-block results). A setting so that benchmarks can sweep it.
 */
export const cpuTuning = { pixelBlock: 1 << 17 };

/**
 * Splits [0, n) into at most pool.size chunks of at least `minChunk` items and runs `task` on each with `args`
 * and the chunk's `start`, `end`; below 2·minChunk the work runs as one chunk (thread hand-off costs more than it
 * saves).
 */
export async function forChunks<A extends Range, R>(pool: CpuPool, n: number, minChunk: number, task: TaskHandle<A, R>, args: RangeFree<A>): Promise<R[]> {
  const chunks = Math.max(1, Math.min(pool.size, Math.floor(n / minChunk)));
  if (chunks === 1) return [pool.runLocal(task, withRange(args, 0, n))];
  const per = Math.ceil(n / chunks);
  const jobs: Promise<R>[] = [];
  for (let start = 0; start < n; start += per) jobs.push(pool.run(task, withRange(args, start, Math.min(n, start + per))));
  return Promise.all(jobs);
}

function withRange<A extends Range>(args: RangeFree<A>, start: number, end: number): A {
  return { ...args, start, end } as A;
}

/** The arguments of the worker side of forBlocks (BLOCKS_TASK). */
interface BlocksArgs {
  /** The name of the block task. */
  task: string;
  /** Shared counter of blocks taken. */
  counter: Int32Array;
  n: number;
  block: number;
  /** The block task's arguments, without its range. */
  args: object;
  sum: boolean;
}

/** The wire name of the worker side of forBlocks, added to every task table by taskTable. */
const BLOCKS_TASK = 'core.blocks';

/**
 * Worker side of forBlocks: takes blocks of `block` items from the shared counter until none are left and runs
 * `task` on each (its arguments with the block's `start`, `end`). Returns the blocks' results, or with `sum`
 * their elementwise sum (typed arrays of one length, e.g. partial histograms) as one result.
 */
function runBlocks(tasks: TaskTable, { task, counter, n, block, args, sum }: BlocksArgs): unknown[] {
  const out: unknown[] = [];
  for (;;) {
    const start = Atomics.add(counter, 0, 1) * block;
    if (start >= n) return out;
    const end = Math.min(n, start + block);
    const r = runTask(tasks, task, { ...args, start, end });
    if (sum && out.length) {
      const acc = out[0] as Uint32Array, add = r as Uint32Array;
      for (let i = 0; i < acc.length; i++) acc[i] += add[i];
    } else {
      out.push(r);
    }
  }
}

/** The worker side of forBlocks over the tasks of `table`. */
function blocksTask(table: TaskTable): TaskHandle<BlocksArgs, unknown[]> {
  return defineTask(BLOCKS_TASK, (a: BlocksArgs) => runBlocks(table, a));
}

/** The table of `tasks` by name (names must be unique), with the worker side of forBlocks. */
export function taskTable(tasks: readonly AnyTask[]): TaskTable {
  const table = new Map<string, AnyTask>();
  for (const t of [...tasks, blocksTask(table)]) {
    if (table.has(t.name)) throw new Error(`CPU task '${t.name}' is defined twice`);
    table.set(t.name, t);
  }
  return table;
}

/**
 * Like forChunks, but scheduled dynamically, as OpenCV's parallel_for_: each worker gets one blocks task that
 * takes blocks of [0, n) from a shared counter until all are taken, so a worker that wakes late or is descheduled
 * does fewer blocks instead of holding the others up. Measured on the H100 machine (bench/cpu-dispatch.ts,
 * 16 workers, 8K): the last of 16 equal chunks came back at 5.6 ms, the first at 3.1 ms; with blocks the
 * histogram pass went 5.7 → 4.5 ms and the LUT pass 6.2 → 3.9 ms. Results come per block in no particular order
 * (`sum`: one elementwise sum per worker).
 */
export async function forBlocks<A extends Range, R>(pool: CpuPool, n: number, block: number, task: TaskHandle<A, R>, args: RangeFree<A>, sum = false): Promise<R[]> {
  if (pool.size <= 1 || n < 2 * block || typeof SharedArrayBuffer === 'undefined') return [pool.runLocal(task, withRange(args, 0, n))];
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const workers = Math.min(pool.size, Math.ceil(n / block));
  // Only the name travels to the workers, whose table has BLOCKS_TASK; run here, it would know just `task`.
  const blocks = blocksTask(new Map([[task.name, task]])) as TaskHandle<BlocksArgs, R[]>;
  const parts = await Promise.all(Array.from({ length: workers }, () => pool.run(blocks, { task: task.name, counter, n, block, args, sum })));
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

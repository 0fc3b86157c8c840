import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PointKernels } from '../core/cpu/native.js';
import type { CpuPool, TaskHandle } from '../core/cpu/pool.js';
import { TASKS } from '../ops/tasks.js';
import { fullGc } from './gc.js';
import { loadPointKernels } from './native-kernels.js';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * A worker_threads pool over the task table in ops/tasks.ts (a task's name and its argument object go to a
 * worker). Pixel arrays backed by SharedArrayBuffer are shared, not copied. Idle workers are unref'd so a forgotten pool never keeps the process alive.
 */
export class NodeWorkerPool implements CpuPool {
  readonly size: number;
  /**
   * The 8-bit histogram and LUT passes on native threads (as many as the pool has) where the native module is
   * built, not on the workers; undefined otherwise. Settable, e.g. to measure the JavaScript loops.
   */
  native: PointKernels | undefined;
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { task: string; args: unknown; p: Pending }[] = [];
  private readonly pending = new Map<Worker, Pending>();
  private gc: (() => void) | undefined;

  /**
   * Workers start when a task finds none idle, up to `size`: each costs ~160 ms of CPU to start, and a GPU run
   * (the CLI makes a pool for every command) or the native point kernels often need none.
   */
  constructor(size = Math.min(availableParallelism(), 16)) {
    this.size = Math.max(1, size);
    this.native = loadPointKernels();
  }

  /** Workers started so far (tests). */
  get started(): number {
    return this.workers.length;
  }

  private start(): void {
    const w = new Worker(new URL('./cpu-worker.js', import.meta.url));
    w.on('message', (msg: { ok: boolean; value?: unknown; error?: string }) => this.done(w, msg));
    w.on('error', (e) => this.done(w, { ok: false, error: e.message }));
    w.unref();
    this.workers.push(w);
    this.idle.push(w);
  }

  run<A, R>(task: TaskHandle<A, R>, args: A): Promise<R> {
    if (!TASKS.has(task.name)) return Promise.reject(new Error(`CPU task '${task.name}' is not in the workers' table (ops/tasks.ts)`));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ task: task.name, args, p: { resolve: resolve as (v: unknown) => void, reject } });
      this.pump();
    });
  }

  runLocal<A, R>(task: TaskHandle<A, R>, args: A): R {
    return task.fn(args);
  }

  private pump(): void {
    while (this.idle.length < this.queue.length && this.workers.length < this.size) this.start();
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.pending.set(w, job.p);
      w.ref();
      w.postMessage({ task: job.task, args: job.args });
    }
  }

  private done(w: Worker, msg: { ok: boolean; value?: unknown; error?: string }): void {
    const p = this.pending.get(w);
    this.pending.delete(w);
    w.unref();
    this.idle.push(w);
    if (msg.ok) p?.resolve(msg.value);
    else p?.reject(new Error(msg.error));
    this.pump();
  }

  /**
   * A full garbage collection in the main thread and in every idle worker, so that the SharedArrayBuffers of past
   * tasks are freed (V8 does not collect them in time by itself: node/gc.ts). Workers busy with a task are skipped.
   */
  async collect(): Promise<void> {
    (this.gc ??= fullGc())();
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((w) => new Promise((resolve, reject) => {
      this.pending.set(w, { resolve, reject });
      w.ref();
      w.postMessage({ gc: true });
    })));
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
    this.idle.length = 0;
  }
}

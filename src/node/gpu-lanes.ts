import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import * as errors from '../core/errors.js';
import type { Timings } from '../core/timings.js';
import type { ReadOptions, WriteOptions } from '../io/index.js';

/** What one image cost in a lane: the operation's timings and the lane's read (decode) and write (encode) times. */
export interface LaneResult {
  timings: Timings;
  read: number;
  op: number;
  write: number;
}

/** Lanes by default: a thread per core but the main thread's and Dawn's, at most 8 devices. */
export function defaultLanes(): number {
  return Math.max(1, Math.min(8, availableParallelism() - 2));
}

/**
 * GPU batch lanes: worker threads, each with its own GPU device, that take whole images through
 * (gpu-lane-worker.ts). Measured on the H100, a GPU batch on the main thread was paced by that one thread — copies
 * into and out of mapped memory and Dawn's completion polling — with the codec threads a third busy; in lanes those
 * costs run side by side, the output is encoded straight from mapped memory (no copy out), and nothing crosses
 * threads but file names. Errors keep their imgpu type.
 */
export class GpuLanes {
  private readonly workers: Worker[] = [];
  private readonly jobs = new Map<number, { resolve: (v: LaneResult) => void; reject: (e: unknown) => void }>();
  private readonly idle: Worker[] = [];
  private readonly queue: { id: number; input: string; output: string }[] = [];
  private readonly busyOn = new Map<Worker, number>();
  private next = 0;
  private alive: number;

  constructor(command: string, params: Record<string, unknown>, read: ReadOptions, write: WriteOptions, gpu: { adapter?: string; backend?: string },
    readonly size = defaultLanes()) {
    this.alive = size;
    for (let i = 0; i < size; i++) {
      const w = new Worker(new URL('./gpu-lane-worker.js', import.meta.url), { workerData: { command, params, read, write, ...gpu } });
      w.on('message', (m: { id: number; ok: boolean; name?: string; message?: string } & Partial<LaneResult>) => {
        const j = this.jobs.get(m.id);
        this.jobs.delete(m.id);
        this.busyOn.delete(w);
        this.idle.push(w);
        this.pump();
        if (!j) return;
        if (m.ok) j.resolve(m as LaneResult);
        else {
          const Ctor = (errors as unknown as Record<string, new (msg: string) => Error>)[m.name ?? ''] ?? Error;
          j.reject(new Ctor(m.message ?? 'GPU lane failed'));
        }
      });
      w.on('error', (e) => {
        // A lane that dies fails its image; the others go on, and when none is left the queue fails too.
        const id = this.busyOn.get(w);
        this.busyOn.delete(w);
        if (id !== undefined) this.jobs.get(id)?.reject(e);
        this.jobs.delete(id ?? -1);
        this.alive--;
        if (this.alive === 0) for (const q of this.queue.splice(0)) this.jobs.get(q.id)?.reject(e);
      });
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  /** Reads `input`, runs the operation on the lane's GPU and writes `output` (atomically). */
  run(input: string, output: string): Promise<LaneResult> {
    const id = this.next++;
    return new Promise<LaneResult>((resolve, reject) => {
      this.jobs.set(id, { resolve, reject });
      this.queue.push({ id, input, output });
      this.pump();
    });
  }

  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.busyOn.set(w, job.id);
      w.postMessage(job);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

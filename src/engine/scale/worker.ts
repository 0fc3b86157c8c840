import { readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import type { Job, Worker } from 'bullmq';
import { GpuDeviceLostError, ImgpuError, InvalidArgumentError } from '../../core/errors.js';
import { now } from '../../core/timings.js';
import { CodecPool } from '../../node/codec-pool.js';
import { paramsAsRun } from '../commands.js';
import { PIPELINE } from '../../ops/pipeline.js';
import { acquire, adapterName, type DeviceChoice, type Execution } from '../context.js';
import { cliWording } from '../flags.js';
import { prepareOutputFolder, type Job as Image } from '../batch/plan.js';
import type { ProgressSink } from '../batch/report.js';
import { runImages } from '../batch/run.js';
import { outsideRoots, realRoots } from './confine.js';
import { openTarget, redisConnection, type OutageHooks, type QueueTarget } from './connection.js';
import { checkJobData, type ChunkJob, type ScaleJobData, type ScaleJobProgress, type ScaleJobResult } from './jobs.js';
import { runChunkJob } from './volume-jobs.js';
import type { PipelineStep } from '../../ops/pipeline.js';
import { queueModules } from './modules.js';

/** How long a job may go without its worker's heartbeat before it is re-delivered, when stallMs is not given. */
export const DEFAULT_STALL_MS = 30_000;
/** A job whose workers die this many times is failed ('job stalled more than allowable limit'): a poison job. */
const MAX_STALLS = 3;

/** What createWorker takes. */
export interface WorkerOptions extends QueueTarget {
  /**
   * The folders the worker may read and write (repeatable --root): a job naming any path outside them (after `..`
   * and symbolic links are resolved) fails with the reason, unrun. Absent or empty: any path the process may open.
   */
  roots?: readonly string[];
  /** jobs at once (default 1: the images of a job are already overlapped) */
  concurrency?: number;
  /** a job unheard of (its worker's heartbeat) for this long is re-delivered to another worker (default 30 s) */
  stallMs?: number;
  /** resident memory a volume's chunk job may take for its slabs, in bytes (default: a quarter of the machine's) */
  memory?: number;
  /** where images run (default 'auto', as the image commands: the GPU where it is a hardware one) */
  device?: Exclude<DeviceChoice, 'both'>;
  /** a GPU adapter by name, a backend (vulkan, d3d12, metal, opengles), CPU threads */
  adapter?: string;
  backend?: string;
  threads?: number;
  /** What the worker does, as it happens: the library prints nothing. */
  onEvent?: (e: WorkerEvent) => void;
}

/** Test hooks, not part of the package's API (the CLI passes IMGPU_TEST_HANG_AFTER on). */
export interface WorkerTestOptions {
  /** write this many images (a chunk job: slabs) of the job taken, report them, and hang: a worker stuck mid-job, to be killed */
  hangAfter?: number;
}

/** What a worker reports. */
export type WorkerEvent =
  | { type: 'ready'; worker: string; queue: string; server: string; device: string; concurrency: number; roots: string[]; warnings: string[] }
  | { type: 'job'; job: string; batch: string; result: ScaleJobResult }
  /** a job failed: refused (malformed, outside the roots) or failed by a typed error; not retried */
  | { type: 'failed'; job: string; reason: string }
  /** the connection to Redis lost (once per outage) or back */
  | { type: 'outage'; down: boolean; message: string }
  /** an error of BullMQ's not tied to a job */
  | { type: 'error'; message: string }
  /** test hook: the worker hangs mid-job (WorkerTestOptions.hangAfter) */
  | { type: 'hanging'; job: string; done: number };

/** A running worker. */
export interface ScaleWorker {
  /** host:pid (several in one process share it) */
  readonly id: string;
  /** Takes no new job, finishes the jobs it holds, then releases the GPU, codecs and connection. */
  close(): Promise<void>;
  /**
   * Settles when the worker has ended (closed): rejects with GpuDeviceLostError when its GPU device was lost — the
   * jobs it held are back on the queue for other workers, and a new worker needs a new device.
   */
  readonly done: Promise<void>;
}

/**
 * A worker on the queue: takes the jobs of submit() and runs them with local batch mode's code (one GPU context,
 * images in flight overlapped, outputs written atomically) until close(). It installs no signal handler and never
 * ends the process. Checks the server, the roots and the device before taking any job.
 */
export async function createWorker(o: WorkerOptions & WorkerTestOptions): Promise<ScaleWorker> {
  const m = await queueModules();
  const concurrency = intOption(o.concurrency, 'concurrency', 1, 1, 64);
  const stallMs = intOption(o.stallMs, 'stallMs', DEFAULT_STALL_MS, 500, 3_600_000);
  const roots = await realRoots(o.roots ?? []);
  const { server, queue } = await openTarget(m, o);
  const exec = await acquire(o.device ?? 'auto', deviceFlags(o));
  const say = o.onEvent ?? (() => undefined);
  const me = `${hostname()}:${process.pid}`;
  const outage = outageHooks(say, server.shown);
  const connection = redisConnection(m, server, outage);
  const codecs = new CodecPool();
  if (o.memory !== undefined && !(Number.isSafeInteger(o.memory) && o.memory > 0)) throw new InvalidArgumentError(`option \`memory\` must be a positive number of bytes, got ${o.memory}`);
  const jobs = new JobRunner(exec, codecs, roots, me, o.hangAfter ?? 0, say, o.memory);
  let lost: GpuDeviceLostError | undefined;
  const worker: Worker<ScaleJobData, ScaleJobResult> = new m.bullmq.Worker<ScaleJobData, ScaleJobResult>(queue, async (job, token) => {
    try {
      return await jobs.run(job);
    } catch (e) {
      if (e instanceof GpuDeviceLostError) {
        // Every image after it would fail: the job goes back to the queue at once, and the worker ends.
        lost ??= e;
        await job.moveToWait(token);
        void worker.close();
        throw new m.bullmq.WaitingError();
      }
      // A typed error (malformed, outside the roots, an output folder that cannot be made) fails every run the
      // same way: the job fails once with the reason, not retried; retry() re-queues it once it is fixed.
      if (e instanceof ImgpuError) throw new m.bullmq.UnrecoverableError(cliWording(e.message));
      throw e;
    }
  }, { connection, concurrency, lockDuration: stallMs, stalledInterval: stallMs, maxStalledCount: MAX_STALLS, autorun: false });
  // BullMQ's own errors; a lost connection (BullMQ's blocking connections report it too) is said once per outage.
  worker.on('error', (e) => (isConnectionError(e) ? outage.down?.(e) : say({ type: 'error', message: e.message })));
  worker.on('failed', (job, e) => {
    if (!(e instanceof m.bullmq.WaitingError)) say({ type: 'failed', job: job?.id ?? '?', reason: e.message });
  });
  const device = exec.gpu ? `GPU ${adapterName(exec.gpu.adapter)}` : 'CPU';
  say({ type: 'ready', worker: me, queue, server: server.shown, device, concurrency, roots, warnings: exec.warnings });
  const done = worker.run().finally(async () => {
    await codecs.close();
    await exec.close();
    await connection.quit().catch(() => undefined);
  }).then(() => {
    if (lost) throw lost;
  });
  done.catch(() => undefined); // rejected only for a lost device: the caller reads it from `done`
  return {
    id: me,
    done,
    async close() {
      await worker.close();
      await done.catch(() => undefined);
    },
  };
}

/** The jobs of one worker: checked, confined, and run through the batch engine. */
class JobRunner {
  private readonly cmd = PIPELINE;
  /** Each pipeline's parameters as run (files it names read once per worker). */
  private readonly prepared = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    private readonly exec: Execution,
    private readonly codecs: CodecPool,
    private readonly roots: string[],
    private readonly me: string,
    private readonly hangAfter: number,
    private readonly say: (e: WorkerEvent) => void,
    private readonly memory?: number,
  ) {}

  async run(job: Job<ScaleJobData, ScaleJobResult>): Promise<ScaleJobResult> {
    const t0 = now();
    const d = checkJobData(job.data);
    await this.confine(d);
    const params = await this.params(d.pipeline);
    if (d.chunks) return this.runChunks(job, { ...d, chunks: d.chunks }, params.steps as PipelineStep[], t0);
    await prepareOutputFolder(d.outDir); // a FileAccessError fails the job once, with the reason
    const earlier = await writtenBefore(job, d);
    const skip = new Set(earlier.map((i) => i.key));
    const todo = d.images.filter((i) => !skip.has(i.key));
    if (job.attemptsStarted > 1 || job.stalledCounter > 0) await removeStrayTemps(todo);
    const done = [...skip];
    const written: string[] = [];
    const r = await runImages({ name: 'pipeline', cmd: this.cmd, params, exec: this.exec, codecs: this.codecs }, this.hangAfter ? todo.slice(0, this.hangAfter) : todo, {
      read: d.failOn ? { failOn: d.failOn } : {}, write: d.write, progress: jobProgress(job, d, done), onFailure: 'count',
      written: (img) => {
        done.push(img.key);
        written.push(img.input);
      },
      fatal: (e) => e instanceof GpuDeviceLostError,
    });
    if (this.hangAfter) await this.hang(job, d, done, r.failed.length);
    const result: ScaleJobResult = { written, earlier: earlier.map((i) => i.input), failed: r.failed, seconds: (now() - t0) / 1000, worker: this.me };
    this.say({ type: 'job', job: job.id!, batch: d.batch, result });
    return result;
  }

  /** A volume's chunk job (volume-jobs.ts): the chunk files of its rows written, none of its images. */
  private async runChunks(job: Job<ScaleJobData, ScaleJobResult>, d: ScaleJobData & { chunks: ChunkJob }, steps: PipelineStep[], t0: number): Promise<ScaleJobResult> {
    const afterSlab = async (slabs: number) => {
      if (!this.hangAfter || slabs < this.hangAfter) return;
      this.say({ type: 'hanging', job: job.id!, done: slabs });
      await new Promise<never>(() => undefined);
    };
    const rows = await runChunkJob(job, d, { exec: this.exec, steps, memory: this.memory, afterSlab });
    const result: ScaleJobResult = { written: [], earlier: [], failed: [], seconds: (now() - t0) / 1000, worker: this.me, rows };
    this.say({ type: 'job', job: job.id!, batch: d.batch, result });
    return result;
  }

  /** Refuses a job that names a path outside the roots (none given: any path). */
  private async confine(d: ScaleJobData): Promise<void> {
    if (this.roots.length === 0) return;
    const out = await outsideRoots(d, this.roots);
    if (out) throw new InvalidArgumentError(`refused: ${out.path}${out.real !== out.path ? ` (${out.real})` : ''} is outside the worker's roots (${this.roots.join(', ')})`);
  }

  /** The pipeline's parameters, its files read once; a failure is not kept (the file may be there for the next job). */
  private params(pipeline: string): Promise<Record<string, unknown>> {
    let p = this.prepared.get(pipeline);
    if (!p) {
      p = paramsAsRun(PIPELINE, { chain: pipeline }).catch((e: unknown) => {
        this.prepared.delete(pipeline);
        throw e;
      });
      this.prepared.set(pipeline, p);
    }
    return p;
  }

  /** The test hook's hang: the images written so far reported (awaited, unlike the loop's updates), then no end. */
  private async hang(job: Job<ScaleJobData, ScaleJobResult>, d: ScaleJobData, done: string[], failed: number): Promise<never> {
    const p: ScaleJobProgress = { done: [...done], failed, total: d.images.length };
    await job.updateProgress(p);
    this.say({ type: 'hanging', job: job.id!, done: done.length });
    return new Promise<never>(() => undefined);
  }
}

/** The images of a job whose outputs an earlier run of it (its worker killed since) reported written and that exist. */
async function writtenBefore(job: Job<ScaleJobData, ScaleJobResult>, d: ScaleJobData): Promise<Image[]> {
  const reported = new Set((job.progress as ScaleJobProgress | undefined)?.done ?? []);
  const there = await Promise.all(d.images.map(async (i) => reported.has(i.key) && (await stat(i.output).then(() => true, () => false))));
  return d.images.filter((_, k) => there[k]);
}

/**
 * A job's progress: the outputs written so far (`done`, which the loop's written() fills), after every image — a
 * few hundred bytes to Redis against an image's milliseconds of work — so that a run following a kill skips them.
 * Sent in order on one connection; a lost update costs redoing an image.
 */
function jobProgress(job: Job<ScaleJobData, ScaleJobResult>, d: ScaleJobData, done: string[]): ProgressSink {
  return {
    update(_written, failed) {
      const p: ScaleJobProgress = { done: [...done], failed, total: d.images.length };
      void job.updateProgress(p).catch(() => undefined);
    },
  };
}

/**
 * The hidden temporary files (io writeAtomically: .<name>.<pid>.<hex>.tmp) of the outputs of `images` that a run
 * of the job killed mid-write left: the job is this worker's now, so they are no one's. One listing per folder.
 */
async function removeStrayTemps(images: readonly Image[]): Promise<void> {
  const byDir = new Map<string, Set<string>>();
  for (const i of images) byDir.set(dirname(i.output), (byDir.get(dirname(i.output)) ?? new Set()).add(basename(i.output)));
  for (const [dir, names] of byDir) {
    const entries = await readdir(dir).catch(() => [] as string[]);
    for (const e of entries) {
      const m = /^\.(.+)\.\d+\.[0-9a-f]{8}\.tmp$/.exec(e);
      if (m && names.has(m[1])) await rm(join(dir, e), { force: true });
    }
  }
}

/** The device options as acquire() takes them (the CLI's flags). */
function deviceFlags(o: WorkerOptions): Map<string, string> {
  const given = { adapter: o.adapter, backend: o.backend, threads: o.threads };
  return new Map(Object.entries(given).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
}

/** An error of the connection to Redis (a socket's, or a command failed by the connection closing), not of a command. */
function isConnectionError(e: Error): boolean {
  return 'syscall' in e || e.message === 'Connection is closed.';
}

/** A lost connection is said once per outage (its connections re-open themselves), and when it is back. */
function outageHooks(say: (e: WorkerEvent) => void, shown: string): OutageHooks {
  let down = false;
  return {
    down(e) {
      if (!down) say({ type: 'outage', down: true, message: `the Redis server at ${shown} is unreachable (${e.message}); reconnecting` });
      down = true;
    },
    up() {
      if (down) say({ type: 'outage', down: false, message: `reconnected to ${shown}` });
      down = false;
    },
  };
}

function intOption(v: number | undefined, name: string, def: number, min: number, max: number): number {
  const n = v ?? def;
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`option \`${name}\` must be an integer ${min}–${max}, got ${v}`);
  return n;
}

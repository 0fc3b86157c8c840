import type { IRedisClient, Job, Queue } from 'bullmq';
import { InvalidArgumentError, QueueUnavailableError } from '../../core/errors.js';
import { openTarget, redisConnection, batchKey, type QueueTarget, type RedisServer } from './connection.js';
import type { ScaleJobData, ScaleJobProgress, ScaleJobResult } from './jobs.js';
import { queueModules, type QueueModules } from './modules.js';

// A batch's state from its jobs on the queue (status, watch) and its failed jobs re-queued (retry).

/** Which batch: the id submit() returned, on the queue of `redis`. */
export interface BatchTarget extends QueueTarget {
  batch: string;
}

/** One failure of a batch: an image (file) that failed inside its job, or a whole job with its images (or chunk files). */
export interface Failure {
  job: string;
  file?: string;
  images?: number;
  chunks?: number;
  message: string;
}

/** A batch's state: what status() returns and `imgpu status --json` prints. */
export interface BatchStatus {
  batch: string;
  queue: string;
  jobs: number;
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  /** jobs waiting on jobs that failed (a pyramid level whose finer level has a failed job): they run once retry() re-queues those and they complete */
  blocked: number;
  images: number;
  images_done: number;
  images_failed: number;
  /** a volume's batch: its output chunk files (every level's), those written, those of failed jobs */
  chunks: number;
  chunks_done: number;
  chunks_failed: number;
  /** images done per second since the first job started (until the last one finished) */
  images_per_s: number;
  /** a volume's batch: chunk files written per second, as images_per_s */
  chunks_per_s?: number;
  /** seconds left at that rate; null before any image is done; 0 when finished */
  eta_s: number | null;
  failures: Failure[];
}

/**
 * A batch's jobs as stored (undefined: removed from the queue since), each with its state. The states are read
 * first: a job read first and found 'failed' afterwards had moved in between, without the reason it failed
 * (BullMQ sets the reason as it moves the job; a status watched to the end then printed no reason).
 */
async function batchJobs(m: QueueModules, q: Queue, redis: IRedisClient, queue: string, batch: string, server: RedisServer): Promise<{ jobs: (Job<ScaleJobData, ScaleJobResult> | undefined)[]; states: string[]; images: number; chunks: number }> {
  const meta = await redis.hgetall(batchKey(queue, batch));
  if (!meta.jobs) throw new InvalidArgumentError(`no batch ${batch} on queue ${queue} at ${server.shown}`);
  const ids = JSON.parse(meta.jobs) as string[];
  const states = await Promise.all(ids.map((id) => q.getJobState(id)));
  return { jobs: await Promise.all(ids.map((id) => m.bullmq.Job.fromId<ScaleJobData, ScaleJobResult>(q, id))), states, images: Number(meta.images), chunks: Number(meta.chunks ?? 0) };
}

/** Counts a batch's jobs and images from the jobs' states, results and progress. */
async function batchStatus(m: QueueModules, q: Queue, redis: IRedisClient, queue: string, batch: string, server: RedisServer): Promise<BatchStatus> {
  const { jobs, states, images, chunks } = await batchJobs(m, q, redis, queue, batch, server);
  const s: BatchStatus = { batch, queue, jobs: jobs.length, waiting: 0, active: 0, completed: 0, failed: 0, blocked: 0, images, images_done: 0, images_failed: 0, chunks, chunks_done: 0, chunks_failed: 0, images_per_s: 0, eta_s: null, failures: [] };
  let children = 0;
  let first = Infinity, last = 0;
  jobs.forEach((j, i) => {
    const state = states[i];
    if (!j || state === 'unknown') {
      s.failed++;
      s.failures.push({ job: j?.id ?? '?', message: 'the job is no longer on the queue (removed); submit the batch again' });
      return;
    }
    if (j.processedOn) first = Math.min(first, j.processedOn);
    if (j.finishedOn) last = Math.max(last, j.finishedOn);
    const c = j.data.chunks;
    if (c) {
      countChunkJob(s, state, c.chunks, c.chunks / (c.rows[1] - c.rows[0]), j.progress);
      if (state === 'waiting-children') children++;
    }
    if (state === 'completed') {
      s.completed++;
      const r = j.returnvalue;
      s.images_done += r.written.length + r.earlier.length;
      s.images_failed += r.failed.length;
      for (const f of r.failed) s.failures.push({ job: j.id!, file: f.file, message: f.message });
    } else if (state === 'failed') {
      s.failed++;
      s.images_failed += j.data.images.length;
      s.failures.push({ job: j.id!, ...(c ? { chunks: c.chunks } : { images: j.data.images.length }), message: j.failedReason });
    } else if (state === 'active') {
      s.active++;
      const p = j.progress as ScaleJobProgress | number;
      if (typeof p === 'object' && p && !c) s.images_done += p.done.length;
    } else {
      s.waiting++; // waiting, delayed, prioritized, waiting-children
    }
  });
  // A level waiting on a failed job waits until retry(): not work in progress (watch ends).
  if (s.failed > 0 && children > 0 && s.active === 0 && s.waiting === children) [s.blocked, s.waiting] = [children, 0];
  const finished = s.waiting === 0 && s.active === 0;
  const seconds = ((finished && last ? last : Date.now()) - first) / 1000;
  // The rate and time left in images, or in chunk files for a volume.
  const [total, done, failed] = chunks ? [s.chunks, s.chunks_done, s.chunks_failed] : [s.images, s.images_done, s.images_failed];
  const rate = first < Infinity && seconds > 0 ? done / seconds : 0;
  s.images_per_s = chunks ? 0 : rate;
  if (chunks) s.chunks_per_s = rate;
  s.eta_s = finished ? 0 : rate > 0 ? (total - done - failed) / rate : null;
  return s;
}

/** A chunk job's chunk files counted: all of a completed job's, a running job's reported rows', a failed job's as failed. */
function countChunkJob(s: BatchStatus, state: string, chunks: number, perRow: number, progress: unknown): void {
  if (state === 'completed') s.chunks_done += chunks;
  else if (state === 'failed') s.chunks_failed += chunks;
  else if (state === 'active' && typeof progress === 'object' && progress) s.chunks_done += (progress as ScaleJobProgress).done.length * perRow;
}

/** An open queue: its server, name, BullMQ queue and connection; close() when done. */
interface OpenQueue {
  m: QueueModules;
  server: RedisServer;
  name: string;
  q: Queue;
  redis: IRedisClient;
  close(): Promise<void>;
}

/** The queue of `t` open (its server checked first); close() closes the queue and its connection. */
async function openQueue(t: QueueTarget): Promise<OpenQueue> {
  const m = await queueModules();
  const { server, queue } = await openTarget(m, t);
  const redis = redisConnection(m, server);
  redis.on('error', () => undefined); // an outage is reported where a command fails (watch waits it out)
  const q = new m.bullmq.Queue(queue, { connection: redis });
  return {
    m, server, name: queue, q, redis,
    async close() {
      await q.close();
      await redis.quit().catch(() => undefined);
    },
  };
}

/** Runs `body` with the batch's queue open, closing the queue and its connection after. */
async function withQueue<T>(t: QueueTarget, body: (o: OpenQueue) => Promise<T>): Promise<T> {
  const o = await openQueue(t);
  try {
    return await body(o);
  } finally {
    await o.close();
  }
}

/** A batch's jobs and images: waiting, active, done and failed, with each failure's reason. */
export async function status(t: BatchTarget): Promise<BatchStatus> {
  return withQueue(t, (o) => batchStatus(o.m, o.q, o.redis, o.name, t.batch, o.server));
}

/** What watch() yields: the batch's state, or the server unreachable (a Redis restart, waited out). */
export type WatchReport = { status: BatchStatus } | { unreachable: string };

/**
 * The batch's state every `intervalMs` (default 2 s) until no job waits or runs (the last report says so), or
 * `signal` aborts; a server that stops answering meanwhile is reported once per outage and waited out. An unknown
 * batch is an InvalidArgumentError at once.
 */
export async function* watch(t: BatchTarget & { intervalMs?: number; signal?: AbortSignal }): AsyncGenerator<WatchReport> {
  const intervalMs = t.intervalMs ?? 2000;
  if (!(intervalMs >= 100)) throw new InvalidArgumentError(`option \`intervalMs\` must be at least 100, got ${t.intervalMs}`);
  const o = await openQueue(t);
  try {
    let said = false;
    while (!t.signal?.aborted) {
      let s: BatchStatus | undefined;
      try {
        s = await batchStatus(o.m, o.q, o.redis, o.name, t.batch, o.server);
        said = false;
      } catch (e) {
        if (e instanceof InvalidArgumentError) throw e;
        // Redis restarting: the connection comes back on its own; said once, and watched on.
        if (!said) yield { unreachable: unreachable(o.server, e).message };
        said = true;
      }
      if (s) {
        yield { status: s };
        if (s.waiting === 0 && s.active === 0) return;
      }
      await sleep(intervalMs, t.signal);
    }
  } finally {
    await o.close();
  }
}

/** The batch's failed jobs back on the queue (images that failed inside a completed job, e.g. corrupt files, are not). */
export async function retry(t: BatchTarget): Promise<{ batch: string; retried: number }> {
  return withQueue(t, async (o) => {
    const { jobs } = await batchJobs(o.m, o.q, o.redis, o.name, t.batch, o.server);
    const failed = (await Promise.all(jobs.map(async (j) => (j && (await j.getState()) === 'failed' ? j : undefined)))).filter((j) => j !== undefined);
    for (const j of failed) await j.retry('failed');
    return { batch: t.batch, retried: failed.length };
  });
}

function unreachable(server: RedisServer, e: unknown): QueueUnavailableError {
  return new QueueUnavailableError(`the Redis server at ${server.shown} stopped answering (${(e as Error).message})`);
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((r) => {
  const timer = setTimeout(r, ms);
  signal?.addEventListener('abort', () => (clearTimeout(timer), r()), { once: true });
});

import { Job, Queue, type IRedisClient } from 'bullmq';
import { InvalidArgumentError, QueueUnavailableError } from '../../core/errors.js';
import { parseArgs, rejectUnknown } from '../args.js';
import { EXIT_OK, EXIT_SOME_FAILED } from '../exit.js';
import { batchKey, checkServer, parseRedisUrl, queueName, redisConnection, type RedisServer } from './connection.js';
import type { ScaleJobData, ScaleJobProgress, ScaleJobResult } from './jobs.js';

export const STATUS_HELP = `imgpu status <batch> --redis URL [--queue NAME] [--watch] [--json]
  A batch's jobs (waiting, active, completed, failed), its images done and failed, images/s, the time left, and
  each failure with its message. --watch repeats it every 2 s until no job is waiting or active (and waits out a
  Redis restart). --json: one object per report.
  Exit 0, or 9 when images or jobs failed; 2 unknown batch, 7 Redis unreachable.
imgpu retry <batch> --redis URL [--queue NAME] [--json]
  Re-queues the batch's failed jobs (images that failed inside a completed job, e.g. corrupt files, are not).`;

/** One failure of a batch: an image (file) that failed inside its job, or a whole job with its images. */
interface Failure {
  job: string;
  file?: string;
  images?: number;
  message: string;
}

/** What `imgpu status --json` prints. */
export interface BatchStatus {
  batch: string;
  queue: string;
  jobs: number;
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  images: number;
  images_done: number;
  images_failed: number;
  /** images done per second since the first job started (until the last one finished) */
  images_per_s: number;
  /** seconds left at that rate; null before any image is done; 0 when finished */
  eta_s: number | null;
  failures: Failure[];
}

/**
 * A batch's jobs as stored (undefined: removed from the queue since), each with its state. The states are read
 * first: a job read first and found 'failed' afterwards had moved in between, without the reason it failed
 * (BullMQ sets the reason as it moves the job; a status watched to the end then printed no reason).
 */
async function batchJobs(q: Queue, redis: IRedisClient, queue: string, batch: string, server: RedisServer): Promise<{ jobs: (Job<ScaleJobData, ScaleJobResult> | undefined)[]; states: string[]; images: number }> {
  const meta = await redis.hgetall(batchKey(queue, batch));
  if (!meta.jobs) throw new InvalidArgumentError(`no batch ${batch} on queue ${queue} at ${server.shown}`);
  const ids = JSON.parse(meta.jobs) as string[];
  const states = await Promise.all(ids.map((id) => q.getJobState(id)));
  return { jobs: await Promise.all(ids.map((id) => Job.fromId<ScaleJobData, ScaleJobResult>(q, id))), states, images: Number(meta.images) };
}

/** Counts a batch's jobs and images from the jobs' states, results and progress. */
async function batchStatus(q: Queue, redis: IRedisClient, queue: string, batch: string, server: RedisServer): Promise<BatchStatus> {
  const { jobs, states, images } = await batchJobs(q, redis, queue, batch, server);
  const s: BatchStatus = { batch, queue, jobs: jobs.length, waiting: 0, active: 0, completed: 0, failed: 0, images, images_done: 0, images_failed: 0, images_per_s: 0, eta_s: null, failures: [] };
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
    if (state === 'completed') {
      s.completed++;
      const r = j.returnvalue;
      s.images_done += r.written.length + r.earlier.length;
      s.images_failed += r.failed.length;
      for (const f of r.failed) s.failures.push({ job: j.id!, file: f.file, message: f.message });
    } else if (state === 'failed') {
      s.failed++;
      s.images_failed += j.data.images.length;
      s.failures.push({ job: j.id!, images: j.data.images.length, message: j.failedReason });
    } else if (state === 'active') {
      s.active++;
      const p = j.progress as ScaleJobProgress | number;
      if (typeof p === 'object' && p) s.images_done += p.done.length;
    } else {
      s.waiting++; // waiting, delayed, prioritized, waiting-children
    }
  });
  const finished = s.waiting === 0 && s.active === 0;
  const seconds = ((finished && last ? last : Date.now()) - first) / 1000;
  if (first < Infinity && seconds > 0) s.images_per_s = s.images_done / seconds;
  const left = s.images - s.images_done - s.images_failed;
  s.eta_s = finished ? 0 : s.images_per_s > 0 ? left / s.images_per_s : null;
  return s;
}

function describe(s: BatchStatus): string[] {
  const eta = s.eta_s === null ? '' : s.eta_s > 0 ? `, ETA ${s.eta_s.toFixed(0)} s` : '';
  return [
    `batch ${s.batch}: ${s.jobs} jobs: ${s.waiting} waiting, ${s.active} active, ${s.completed} completed, ${s.failed} failed; ${s.images_done}/${s.images} images done, ${s.images_failed} failed, ${s.images_per_s.toFixed(1)} images/s${eta}`,
    ...s.failures.map((f) => `  failed: ${f.file ?? `job ${f.job} (${f.images} images)`}: ${f.message}`),
  ];
}

/** The batch id, server and queue of `imgpu status|retry <batch> --redis URL [--queue NAME]`. */
function batchArgs(name: string, argv: string[], booleans: string[], known: string[]): { batch: string; server: RedisServer; queue: string; flags: Map<string, string> } | undefined {
  const { positional, flags } = parseArgs(argv, new Set([...booleans, 'help']));
  if (flags.has('help')) {
    console.log(STATUS_HELP);
    return undefined;
  }
  rejectUnknown(flags, ['redis', 'queue', 'help', ...booleans, ...known]);
  if (positional.length !== 1) throw new InvalidArgumentError(`imgpu ${name} needs one <batch> (the id imgpu submit printed), got ${positional.length} arguments`);
  return { batch: positional[0], server: parseRedisUrl(flags.get('redis')), queue: queueName(flags.get('queue')), flags };
}

/** Runs `body` with the batch's queue open, closing the queue and its connection after. */
async function withQueue<T>(server: RedisServer, queue: string, body: (q: Queue, redis: IRedisClient) => Promise<T>): Promise<T> {
  await checkServer(server);
  const connection = redisConnection(server);
  connection.on('error', () => undefined); // an outage is reported where a command fails (status --watch waits it out)
  const q = new Queue(queue, { connection });
  try {
    return await body(q, connection);
  } finally {
    await q.close();
    await connection.quit();
  }
}

/** `imgpu status <batch>`: the batch's counts, once or (--watch) until it is finished. */
export async function statusCommand(argv: string[]): Promise<number> {
  const a = batchArgs('status', argv, ['json', 'watch'], ['interval']);
  if (!a) return EXIT_OK;
  const json = a.flags.has('json'), watch = a.flags.has('watch');
  const intervalMs = Number(a.flags.get('interval') ?? 2) * 1000;
  if (!(intervalMs >= 100)) throw new InvalidArgumentError(`--interval must be a number of seconds ≥ 0.1, got ${a.flags.get('interval')}`);
  return withQueue(a.server, a.queue, async (q, redis) => {
    let said = false;
    for (;;) {
      let s: BatchStatus;
      try {
        s = await batchStatus(q, redis, a.queue, a.batch, a.server);
        said = false;
      } catch (e) {
        if (!watch || e instanceof InvalidArgumentError) throw e instanceof InvalidArgumentError ? e : unreachable(a.server, e);
        // Redis restarting: the connection comes back on its own; say it once and keep watching.
        if (!said) console.error(`imgpu status: ${unreachable(a.server, e).message}; retrying`);
        said = true;
        await sleep(intervalMs);
        continue;
      }
      if (json) console.log(JSON.stringify(s));
      else for (const l of describe(s)) console.log(l);
      if (!watch || (s.waiting === 0 && s.active === 0)) return s.failures.length ? EXIT_SOME_FAILED : EXIT_OK;
      await sleep(intervalMs);
    }
  });
}

/** `imgpu retry <batch>`: its failed jobs back on the queue. */
export async function retryCommand(argv: string[]): Promise<number> {
  const a = batchArgs('retry', argv, ['json'], []);
  if (!a) return EXIT_OK;
  return withQueue(a.server, a.queue, async (q, redis) => {
    const { jobs } = await batchJobs(q, redis, a.queue, a.batch, a.server);
    const failed = (await Promise.all(jobs.map(async (j) => (j && (await j.getState()) === 'failed' ? j : undefined)))).filter((j) => j !== undefined);
    for (const j of failed) await j.retry('failed');
    if (a.flags.has('json')) console.log(JSON.stringify({ batch: a.batch, retried: failed.length }));
    else console.log(`batch ${a.batch}: ${failed.length} failed job${failed.length === 1 ? '' : 's'} re-queued`);
    return EXIT_OK;
  });
}

function unreachable(server: RedisServer, e: unknown): QueueUnavailableError {
  return new QueueUnavailableError(`the Redis server at ${server.shown} stopped answering (${(e as Error).message})`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

import { readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { GpuDeviceLostError, ImgpuError, InvalidArgumentError } from '../../core/errors.js';
import { now } from '../../core/timings.js';
import { CodecPool } from '../../node/codec-pool.js';
import { parseArgs, rejectUnknown } from '../args.js';
import { COMMANDS, type ImageCommand } from '../commands.js';
import { acquire } from '../context.js';
import { EXIT_OK } from '../exit.js';
import { cliWording } from '../flags.js';
import { prepareOutputFolder } from '../batch/plan.js';
import type { ProgressSink } from '../batch/report.js';
import { runImages } from '../batch/run.js';
import { checkServer, parseRedisUrl, queueName, redisConnection, type OutageHooks } from './connection.js';
import type { ScaleJobData, ScaleJobProgress, ScaleJobResult } from './jobs.js';
import type { Job as Image } from '../batch/plan.js';

/** How long a job may go without its worker's heartbeat before it is re-delivered, when --stall-ms is not given. */
const DEFAULT_STALL_MS = 30_000;
/** A job whose workers die this many times is failed ('job stalled more than allowable limit'): a poison job. */
const MAX_STALLS = 3;

export const WORKER_HELP = `imgpu worker --redis URL [options]
  Runs the jobs of \`imgpu submit\` from a Redis queue with local batch mode's code (one GPU context, images in
  flight overlapped, outputs written atomically), until SIGTERM or SIGINT: then it finishes the jobs it holds,
  takes no new one, and exits 0. A job whose worker dies (kill -9, a lost machine) is re-delivered to another
  worker after the stall interval; a job's outputs written before are not redone.
  --redis <url>        redis://[user:password@]host[:port][/db] or unix:///path/redis.sock
  --queue <name>       queue name (default imgpu)
  --concurrency <n>    jobs at once in this process (default 1: the images of a job are already overlapped)
  --device <gpu|cpu|auto>  where to run (default auto, as the image commands); --adapter, --backend, --threads
  --stall-ms <ms>      heartbeat lease of a job: a job unheard of for this long is re-delivered (default ${DEFAULT_STALL_MS})
  --json               one JSON line per job done on stdout
  Exit 0 after SIGTERM/SIGINT, 2 bad arguments, 4 no GPU adapter, 5 the GPU device lost (the job goes back to the
  queue: a supervisor restarts the worker), 7 Redis unreachable at start (later outages are waited out).`;

/** `imgpu worker`: takes jobs from the queue and runs them until told to stop. */
export async function workerCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, new Set(['json', 'help']));
  if (flags.has('help')) {
    console.log(WORKER_HELP);
    return EXIT_OK;
  }
  rejectUnknown(flags, ['redis', 'queue', 'concurrency', 'device', 'adapter', 'backend', 'threads', 'stall-ms', 'json', 'help']);
  const server = parseRedisUrl(flags.get('redis'));
  const queue = queueName(flags.get('queue'));
  const concurrency = intFlag(flags, 'concurrency', 1, 1, 64);
  const stallMs = intFlag(flags, 'stall-ms', DEFAULT_STALL_MS, 500, 3_600_000);
  const json = flags.has('json');
  await checkServer(server);
  const exec = await acquire(flags.get('device') ?? 'auto', flags);
  const codecs = new CodecPool();
  const outage = outageReporter(server.shown);
  const connection = redisConnection(server, outage);
  const cmd = COMMANDS.pipeline as ImageCommand;
  const me = `${hostname()}:${process.pid}`;
  /** Each pipeline's parameters as run (files it names read once per worker). */
  const prepared = new Map<string, Promise<Record<string, unknown>>>();

  async function runJob(job: Job<ScaleJobData, ScaleJobResult>): Promise<ScaleJobResult> {
    const t0 = now();
    const d = job.data;
    // A failure is not kept: the file the pipeline names may be there for the next job.
    if (!prepared.has(d.pipeline)) prepared.set(d.pipeline, cmd.prepare!({ chain: d.pipeline }).catch((e: unknown) => (prepared.delete(d.pipeline), Promise.reject(e as Error))));
    const params = await prepared.get(d.pipeline)!;
    await prepareOutputFolder(d.outDir); // a FileAccessError fails the job once, with the reason (below)
    const earlier = await writtenBefore(job);
    const skip = new Set(earlier.map((i) => i.key));
    const todo = d.images.filter((i) => !skip.has(i.key));
    const hangAfter = testHangAfter();
    if (job.attemptsStarted > 1 || job.stalledCounter > 0) await removeStrayTemps(todo);
    const done = [...skip];
    const written: string[] = [];
    const progress = jobProgress(job, done);
    const r = await runImages({ name: 'pipeline', cmd, params, exec, codecs }, hangAfter ? todo.slice(0, hangAfter) : todo, {
      read: {}, write: d.write, progress, onFailure: 'count',
      written: (img) => {
        done.push(img.key);
        written.push(img.input);
      },
      fatal: (e) => e instanceof GpuDeviceLostError,
    });
    if (hangAfter) await hangMidJob(job, done, r.failed.length);
    const result: ScaleJobResult = { written, earlier: earlier.map((i) => i.input), failed: r.failed, seconds: (now() - t0) / 1000, worker: me };
    const line = `imgpu worker: job ${job.id} (batch ${d.batch}): ${written.length} written${earlier.length ? `, ${earlier.length} written before` : ''}, ${r.failed.length} failed, ${result.seconds.toFixed(1)} s`;
    if (json) console.log(JSON.stringify({ job: job.id, batch: d.batch, ...result }));
    else console.error(line);
    for (const f of r.failed) console.error(`imgpu worker: job ${job.id}: failed ${f.file}: ${f.message}`);
    return result;
  }

  const worker = new Worker<ScaleJobData, ScaleJobResult>(queue, async (job) => {
    try {
      return await runJob(job);
    } catch (e) {
      if (e instanceof GpuDeviceLostError) deviceLost(e, job.id);
      // A typed error (an output folder that cannot be made, a pipeline's file gone) would fail every run the same
      // way: the job fails once with the reason, not retried; `imgpu retry` re-queues it once it is fixed.
      if (e instanceof ImgpuError) throw new UnrecoverableError(cliWording(e.message));
      throw e;
    }
  }, { connection, concurrency, lockDuration: stallMs, stalledInterval: stallMs, maxStalledCount: MAX_STALLS, autorun: false });
  // BullMQ's own errors; a lost connection (BullMQ's blocking connections report it too) is said once per outage.
  worker.on('error', (e) => (isConnectionError(e) ? outage.down?.(e) : console.error(`imgpu worker: ${e.message}`)));
  worker.on('failed', (job, e) => console.error(`imgpu worker: job ${job?.id} failed: ${e.message}`));
  const stop = () => {
    console.error('imgpu worker: stopping: finishing the jobs it holds, taking no new one');
    void worker.close();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  for (const w of exec.warnings) console.error(w);
  console.error(`imgpu worker: ${me} on queue ${queue} at ${server.shown}, ${exec.gpu ? `GPU ${exec.gpu.adapter.description || exec.gpu.adapter.vendor}` : 'CPU'}, ${concurrency} job${concurrency > 1 ? 's' : ''} at once`);
  try {
    await worker.run();
  } finally {
    await codecs.close();
    await exec.close();
    await connection.quit();
  }
  return EXIT_OK;
}

/** The images of a job whose outputs an earlier run of it (its worker killed since) reported written and that exist. */
async function writtenBefore(job: Job<ScaleJobData, ScaleJobResult>): Promise<Image[]> {
  const reported = new Set((job.progress as ScaleJobProgress | undefined)?.done ?? []);
  const there = await Promise.all(job.data.images.map(async (i) => reported.has(i.key) && (await stat(i.output).then(() => true, () => false))));
  return job.data.images.filter((_, k) => there[k]);
}

/**
 * A job's progress: the outputs written so far (`done`, which the loop's written() fills), after every image — a
 * few hundred bytes to Redis against an image's milliseconds of work — so that a run following a kill skips them.
 * Sent in order on one connection; a lost update costs redoing an image.
 */
function jobProgress(job: Job<ScaleJobData, ScaleJobResult>, done: string[]): ProgressSink {
  return {
    update(_written, failed) {
      const p: ScaleJobProgress = { done: [...done], failed, total: job.data.images.length };
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

/**
 * The GPU device is gone: every image after it would fail. The worker ends at once with the error's exit code (5)
 * and without finishing the job, whose lease then lapses: it is re-delivered after the stall interval, and a
 * supervisor (systemd's Restart=) starts a worker with a new device.
 */
function deviceLost(e: GpuDeviceLostError, job: string | undefined): never {
  console.error(`imgpu: error: ${cliWording(e.message)}; the worker ends and job ${job} goes back to the queue`);
  process.exit(e.exitCode);
}

/**
 * Test-only (test/scale/scale.test.ts): IMGPU_TEST_HANG_AFTER=n makes the worker write the first n images of the job
 * it takes, report them, and then hang as a worker stuck mid-job, so that a test kills it at a known point of a job
 * rather than racing the job's end. 0 (unset) in normal use.
 */
function testHangAfter(): number {
  const n = Number(process.env.IMGPU_TEST_HANG_AFTER ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** IMGPU_TEST_HANG_AFTER's hang: the images written so far reported (awaited, unlike the loop's updates), then no end. */
async function hangMidJob(job: Job<ScaleJobData, ScaleJobResult>, done: string[], failed: number): Promise<never> {
  const p: ScaleJobProgress = { done: [...done], failed, total: job.data.images.length };
  await job.updateProgress(p);
  console.error(`imgpu worker: job ${job.id}: IMGPU_TEST_HANG_AFTER: ${done.length} images reported, hanging`);
  return new Promise<never>(() => undefined);
}

/** An error of the connection to Redis (a socket's, or a command failed by the connection closing), not of a command. */
function isConnectionError(e: Error): boolean {
  return 'syscall' in e || e.message === 'Connection is closed.';
}

/** A lost connection is said once per outage (its connections re-open themselves), and when it is back. */
function outageReporter(shown: string): OutageHooks {
  let down = false;
  return {
    down(e) {
      if (!down) console.error(`imgpu worker: the Redis server at ${shown} is unreachable (${e.message}); reconnecting`);
      down = true;
    },
    up() {
      if (down) console.error(`imgpu worker: reconnected to ${shown}`);
      down = false;
    },
  };
}

function intFlag(flags: Map<string, string>, name: string, def: number, min: number, max: number): number {
  const v = Number(flags.get(name) ?? def);
  if (!Number.isInteger(v) || v < min || v > max) throw new InvalidArgumentError(`--${name} must be an integer ${min}–${max}, got ${flags.get(name)}`);
  return v;
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FileAccessError, GpuDeviceLostError, InvalidArgumentError } from '../core/errors.js';
import { EXIT_OK, EXIT_SOME_FAILED } from '../engine/exit.js';
import { cliWording } from '../engine/flags.js';
import { failOnOption } from '../engine/jpeg.js';
import { createWorker, DEFAULT_SHARD, DEFAULT_STALL_MS, DEFAULT_VOLUME_SHARD, retry, status, submit, watch, type BatchStatus, type QueueTarget, type RedisTls, type WorkerEvent } from '../engine/scale/index.js';
import { parseArgs, rejectUnknown } from './args.js';
import { parseSize, zarrWriteOptions } from './zarr.js';

// The scale-out commands: argument parsing and printing over the library (src/engine/scale, the package's
// imgpu/scale). Loaded by main.ts only for these commands; bullmq and ioredis load on the library's first call.

const REDIS_HELP = `  --redis <url>        redis://[user:password@]host[:port][/db], rediss://… (TLS) or unix:///path/redis.sock
  --queue <name>       queue name (default imgpu)
  --tls-ca <file>      PEM certificate(s) to trust for a rediss:// server; --tls-cert, --tls-key: a client certificate`;

export const SUBMIT_HELP = `imgpu submit <inputs…|folder> <out-folder> "<pipeline>" --redis URL [options]
imgpu submit <in.zarr> <out.zarr> "<volume operation>" --redis URL [options]
  Enqueues a batch on a Redis queue for \`imgpu worker\` processes (any machine that sees the same paths) and returns
  at once with its id. A job is a shard of images (one volume alone); its id derives from the inputs (path, size,
  modification time), the pipeline, its parameters and the output folder, so submitting the same batch again
  enqueues nothing that is done, queued or failed ("jobs": 0; \`imgpu retry\` re-queues failed jobs).
${REDIS_HELP}
  An OME-Zarr input: submit makes the output OME-Zarr, then enqueues jobs of its chunk rows along z (whole rows of
  output chunks: no two jobs write one chunk file), each run as \`imgpu <op> in.zarr out.zarr\` runs its slabs;
  the pyramid's level i is one job that runs after every job of level i − 1 (docs/scale-out.md).
  --shard <n>          images per job (default ${DEFAULT_SHARD}); of a .zarr: output chunk rows per job (default ${DEFAULT_VOLUME_SHARD})
  --levels, --chunks, --compressor, --clevel, --ome  the output .zarr's layout, as for \`imgpu filter\`
  --recursive          include sub-folders (their layout is kept under <out-folder>)
  --format <ext>       output format (default: the input's); --compression <0-9>, --quality <1-100> as for a batch
  --fail-on <none|truncated|error|warning>  a damaged JPEG read through or refused, as for a batch (default
                       warning); carried in each job: the workers read with it
  --json               {"batch", "jobs", "images", "total_jobs", "total_images", "queue"} on stdout
  Exit 2 bad arguments, 3 no inputs or an output folder that cannot be made, 6 bullmq/ioredis not installed,
  7 Redis unreachable.`;

export const WORKER_HELP = `imgpu worker --redis URL [options]
  Runs the jobs of \`imgpu submit\` from a Redis queue with local batch mode's code (one GPU context, images in
  flight overlapped, outputs written atomically), until SIGTERM or SIGINT: then it finishes the jobs it holds,
  takes no new one, and exits 0. A job whose worker dies (kill -9, a lost machine) is re-delivered to another
  worker after the stall interval; a job's outputs written before are not redone.
${REDIS_HELP}
  --root <dir>         a folder the worker may read and write (repeatable): a job naming any path outside the
                       roots (after '..' and links are resolved) fails with the reason, unrun. Without --root, any
                       path this process may open: give roots wherever others can write to the queue
  --concurrency <n>    jobs at once in this process (default 1: the images of a job are already overlapped)
  --device <gpu|cpu|auto>  where to run (default auto, as the image commands); --adapter, --backend, --threads
  --stall-ms <ms>      heartbeat lease of a job: a job unheard of for this long is re-delivered (default ${DEFAULT_STALL_MS})
  --memory <size>      memory a volume's chunk job may take for its slabs, e.g. 512M (default: a quarter of RAM)
  --json               one JSON line per job done on stdout
  A malformed job (its payload not what submit makes) fails with the reason; the worker goes on.
  Exit 0 after SIGTERM/SIGINT, 2 bad arguments or a --root that is not a folder, 4 no GPU adapter, 5 the GPU device
  lost (its jobs go back to the queue: a supervisor restarts the worker), 6 bullmq/ioredis not installed, 7 Redis
  unreachable at start (later outages are waited out).`;

export const STATUS_HELP = `imgpu status <batch> --redis URL [--queue NAME] [--watch] [--interval S] [--json]
  A batch's jobs (waiting, active, completed, failed), its images done and failed, images/s, the time left, and
  each failure with its message. --watch repeats it every 2 s until no job is waiting or active (and waits out a
  Redis restart). --json: one object per report.
  Exit 0, or 9 when images or jobs failed; 2 unknown batch, 6 bullmq/ioredis not installed, 7 Redis unreachable.
imgpu retry <batch> --redis URL [--queue NAME] [--json]
  Re-queues the batch's failed jobs (images that failed inside a completed job, e.g. corrupt files, are not).`;

const QUEUE_FLAGS = ['redis', 'queue', 'tls-ca', 'tls-cert', 'tls-key'];

/** The queue of --redis, --queue and the --tls-* files (read here: the library takes their contents). */
function queueTarget(flags: Map<string, string>): QueueTarget {
  const file = (flag: string) => {
    const path = flags.get(flag);
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (e) {
      throw new FileAccessError(`cannot read --${flag} ${path}: ${(e as Error).message}`);
    }
  };
  const tls: RedisTls = { ca: file('tls-ca'), cert: file('tls-cert'), key: file('tls-key') };
  const given = Object.values(tls).some((v) => v !== undefined);
  if (given && !flags.get('redis')?.startsWith('rediss:')) throw new InvalidArgumentError(`--tls-ca, --tls-cert and --tls-key are for a rediss:// server, got --redis ${flags.get('redis')}`);
  return { redis: flags.get('redis') ?? '', queue: flags.get('queue'), tls: given ? tls : undefined };
}

/** Every value of a repeatable flag (`--root A --root B`, or `--root=A`), and the arguments without it. */
function takeAll(argv: string[], name: string): { values: string[]; rest: string[] } {
  const values: string[] = [], rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}`) {
      if (i + 1 >= argv.length) throw new InvalidArgumentError(`--${name} needs a value`);
      values.push(argv[++i]);
    } else if (argv[i].startsWith(`--${name}=`)) values.push(argv[i].slice(name.length + 3));
    else rest.push(argv[i]);
  }
  return { values, rest };
}

/** `imgpu submit`: the batch planned as local batch mode plans it, split into jobs, the new ones enqueued. */
export async function submitCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['recursive', 'json', 'help']));
  if (flags.has('help')) {
    console.log(SUBMIT_HELP);
    return EXIT_OK;
  }
  rejectUnknown(flags, [...QUEUE_FLAGS, 'shard', 'recursive', 'format', 'compression', 'quality', 'fail-on', 'levels', 'chunks', 'compressor', 'clevel', 'ome', 'json', 'help']);
  if (positional.length < 3) throw new InvalidArgumentError('imgpu submit needs <inputs…|folder> <out-folder> "<pipeline>" (see imgpu submit --help)');
  const num = (f: string) => (flags.has(f) ? Number(flags.get(f)) : undefined);
  const s = await submit({
    ...queueTarget(flags), inputs: positional.slice(0, -2), out: positional[positional.length - 2], pipeline: positional[positional.length - 1],
    shard: num('shard'), recursive: flags.has('recursive'), format: flags.get('format'), compression: num('compression'), quality: num('quality'),
    failOn: flags.has('fail-on') ? failOnOption(flags) : undefined, zarr: zarrWriteOptions(flags),
  });
  const volume = s.totalChunks !== undefined;
  if (flags.has('json')) console.log(JSON.stringify({ batch: s.batch, jobs: s.jobs, images: s.images, total_jobs: s.totalJobs, total_images: s.totalImages, ...(volume ? { chunks: s.chunks, total_chunks: s.totalChunks } : {}), queue: s.queue }));
  else console.log(`batch ${s.batch}: ${s.jobs} jobs (${volume ? `${s.chunks} chunk files` : `${s.images} images`}) enqueued on queue ${s.queue}${s.jobs < s.totalJobs ? `; ${s.totalJobs - s.jobs} of its ${s.totalJobs} jobs were already queued, done or failed` : ''}`);
  return EXIT_OK;
}

/** `imgpu worker`: takes jobs from the queue and runs them until SIGTERM/SIGINT. */
export async function workerCommand(argv: string[]): Promise<number> {
  const { values: roots, rest } = takeAll(argv, 'root');
  const { flags } = parseArgs(rest, new Set(['json', 'help']));
  if (flags.has('help')) {
    console.log(WORKER_HELP);
    return EXIT_OK;
  }
  rejectUnknown(flags, [...QUEUE_FLAGS, 'concurrency', 'device', 'adapter', 'backend', 'threads', 'stall-ms', 'memory', 'json', 'help']);
  const device = flags.get('device') ?? 'auto';
  if (!['auto', 'gpu', 'cpu'].includes(device)) throw new InvalidArgumentError(`--device must be one of auto|gpu|cpu, got '${device}'`);
  const int = (f: string) => (flags.has(f) ? Number(flags.get(f)) : undefined);
  const worker = await createWorker({
    ...queueTarget(flags), roots: roots.map((r) => resolve(r)), concurrency: int('concurrency'), stallMs: int('stall-ms'),
    memory: flags.has('memory') ? parseSize(flags.get('memory')!, 'memory') : undefined,
    device: device as 'auto' | 'gpu' | 'cpu', adapter: flags.get('adapter'), backend: flags.get('backend'), threads: int('threads'),
    hangAfter: testHangAfter(), onEvent: workerPrinter(flags.has('json')),
  });
  const stop = () => {
    console.error('imgpu worker: stopping: finishing the jobs it holds, taking no new one');
    void worker.close();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    await worker.done;
  } catch (e) {
    if (!(e instanceof GpuDeviceLostError)) throw e;
    console.error(`imgpu: error: ${cliWording(e.message)}; the worker ends and its jobs go back to the queue`);
    return e.exitCode;
  }
  return EXIT_OK;
}

/** The worker's events as lines: on stderr, and with --json a JSON line per job done on stdout. */
function workerPrinter(json: boolean): (e: WorkerEvent) => void {
  return (e) => {
    switch (e.type) {
      case 'ready':
        for (const w of e.warnings) console.error(w);
        console.error(`imgpu worker: ${e.worker} on queue ${e.queue} at ${e.server}, ${e.device}, ${e.concurrency} job${e.concurrency > 1 ? 's' : ''} at once, ${e.roots.length ? `confined to ${e.roots.join(', ')}` : 'not confined (no --root)'}`);
        break;
      case 'job': {
        const r = e.result;
        if (json) console.log(JSON.stringify({ job: e.job, batch: e.batch, ...r }));
        else if (r.rows) console.error(`imgpu worker: job ${e.job} (batch ${e.batch}): chunk rows ${r.rows.written.join(',') || 'none'} written${r.rows.earlier.length ? `, ${r.rows.earlier.join(',')} written before` : ''}, ${r.seconds.toFixed(1)} s`);
        else console.error(`imgpu worker: job ${e.job} (batch ${e.batch}): ${r.written.length} written${r.earlier.length ? `, ${r.earlier.length} written before` : ''}, ${r.failed.length} failed, ${r.seconds.toFixed(1)} s`);
        for (const f of r.failed) console.error(`imgpu worker: job ${e.job}: failed ${f.file}: ${f.message}`);
        break;
      }
      case 'failed':
        console.error(`imgpu worker: job ${e.job} failed: ${e.reason}`);
        break;
      case 'outage':
        console.error(`imgpu worker: ${e.message}`);
        break;
      case 'error':
        console.error(`imgpu worker: ${e.message}`);
        break;
      case 'hanging':
        console.error(`imgpu worker: job ${e.job}: IMGPU_TEST_HANG_AFTER: ${e.done} images reported, hanging`);
        break;
    }
  };
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

function describe(s: BatchStatus): string[] {
  const eta = s.eta_s === null ? '' : s.eta_s > 0 ? `, ETA ${s.eta_s.toFixed(0)} s` : '';
  return [
    `batch ${s.batch}: ${s.jobs} jobs: ${s.waiting} waiting, ${s.active} active, ${s.completed} completed, ${s.failed} failed${s.blocked ? `, ${s.blocked} waiting on failed jobs (retry)` : ''}; ${s.chunks ? `${s.chunks_done}/${s.chunks} chunk files done, ${s.chunks_failed} failed, ${(s.chunks_per_s ?? 0).toFixed(1)} chunks/s` : `${s.images_done}/${s.images} images done, ${s.images_failed} failed, ${s.images_per_s.toFixed(1)} images/s`}${eta}`,
    ...s.failures.map((f) => `  failed: ${f.file ?? `job ${f.job} (${f.chunks !== undefined ? `${f.chunks} chunk files` : `${f.images} images`})`}: ${f.message}`),
  ];
}

/** The batch and queue of `imgpu status|retry <batch> --redis URL [--queue NAME]`; undefined after --help. */
function batchArgs(name: string, argv: string[], booleans: string[], known: string[]): { target: QueueTarget & { batch: string }; flags: Map<string, string> } | undefined {
  const { positional, flags } = parseArgs(argv, new Set([...booleans, 'help']));
  if (flags.has('help')) {
    console.log(STATUS_HELP);
    return undefined;
  }
  rejectUnknown(flags, [...QUEUE_FLAGS, 'help', ...booleans, ...known]);
  if (positional.length !== 1) throw new InvalidArgumentError(`imgpu ${name} needs one <batch> (the id imgpu submit printed), got ${positional.length} arguments`);
  return { target: { ...queueTarget(flags), batch: positional[0] }, flags };
}

/** `imgpu status <batch>`: the batch's counts, once or (--watch) until it is finished. */
export async function statusCommand(argv: string[]): Promise<number> {
  const a = batchArgs('status', argv, ['json', 'watch'], ['interval']);
  if (!a) return EXIT_OK;
  const json = a.flags.has('json'), watching = a.flags.has('watch');
  const intervalMs = Number(a.flags.get('interval') ?? 2) * 1000;
  if (!(intervalMs >= 100)) throw new InvalidArgumentError(`--interval must be a number of seconds ≥ 0.1, got ${a.flags.get('interval')}`);
  if (!watching) return printed(await status(a.target), json);
  let code = EXIT_OK;
  for await (const r of watch({ ...a.target, intervalMs })) {
    if ('unreachable' in r) console.error(`imgpu status: ${r.unreachable}; retrying`);
    else code = printed(r.status, json);
  }
  return code;
}

/** A status printed; exit 9 where images or jobs failed. */
function printed(s: BatchStatus, json: boolean): number {
  if (json) console.log(JSON.stringify(s));
  else for (const l of describe(s)) console.log(l);
  return s.failures.length ? EXIT_SOME_FAILED : EXIT_OK;
}

/** `imgpu retry <batch>`: its failed jobs back on the queue. */
export async function retryCommand(argv: string[]): Promise<number> {
  const a = batchArgs('retry', argv, ['json'], []);
  if (!a) return EXIT_OK;
  const r = await retry(a.target);
  if (a.flags.has('json')) console.log(JSON.stringify(r));
  else console.log(`batch ${r.batch}: ${r.retried} failed job${r.retried === 1 ? '' : 's'} re-queued`);
  return EXIT_OK;
}

export const SCALE_COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  submit: submitCommand,
  worker: workerCommand,
  status: statusCommand,
  retry: retryCommand,
};

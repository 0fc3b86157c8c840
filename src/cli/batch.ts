import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { access, mkdir, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Comparison } from '../core/compare.js';
import { FileAccessError, ImgpuError, InvalidArgumentError } from '../core/errors.js';
import type { Image, PixelArray } from '../core/image.js';
import { kernelTotal, now, type OpResult } from '../core/timings.js';
import { formatOf, READERS, WRITERS, type ReadOptions, type WriteOptions } from '../io/index.js';
import { CodecPool, RecycledBuffers } from '../node/codec-pool.js';
import { PARENT_ENV } from '../node/runtime.js';
import { BatchRecords, recordKey, type OutputRecord, type RecordedJob } from './records.js';
import type { ImageCommand, RunOn } from './commands.js';
import { runGpuOrCpu, type Execution } from './context.js';
import { exitCodeOf } from './exit.js';
import { cliWording } from './flags.js';

export { EXIT_SOME_FAILED } from './exit.js';
/** Images a batch processes at once, on the GPU or the CPU (measured: see the loop in runBatch). */
export const IMAGES_IN_FLIGHT = 1;

export interface BatchOptions {
  recursive: boolean;
  overwrite: boolean;
  quiet: boolean;
  json: boolean;
  /** output format extension (e.g. '.png'); default: the input's own */
  format?: string;
  read: ReadOptions;
  write: WriteOptions;
  /**
   * What makes an output from an input besides the input itself — operation, parameters, read and write options —
   * as one string (batchRecipe): an output is up to date only if it was made by this recipe.
   */
  recipe: string;
}

/** One input of a batch and where its output goes: what the folder's records are kept and checked for. */
type Job = RecordedJob;

/**
 * The recipe of BatchOptions: operation, parameters (defaults included, so `--clip 2` and no --clip agree),
 * output format and read/write options, as canonical JSON (keys sorted, so the order of flags does not matter).
 */
export function batchRecipe(op: string, params: Record<string, unknown>, o: Pick<BatchOptions, 'format' | 'read' | 'write'>): string {
  return canonicalJson({ op, params, format: o.format ?? null, raw: o.read.raw ?? null, write: o.write });
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** The output extension of --format (e.g. 'png' → '.png'), checked before anything is started. */
export function batchFormat(fmt: string | undefined): string | undefined {
  if (fmt === undefined) return undefined;
  const ext = `.${fmt.replace(/^\./, '')}`;
  if (!(WRITERS as readonly string[]).includes(ext)) throw new InvalidArgumentError(`--format must be one of ${WRITERS.map((f) => f.slice(1)).join(', ')}, got ${ext}`);
  return ext;
}

/** Whether the arguments ask for batch mode: several inputs, a folder out, or a folder in with no file out. */
export async function isBatch(inputs: string[], out: string): Promise<boolean> {
  if (inputs.length > 1) return true;
  const o = await stat(out).catch(() => undefined);
  if (o?.isDirectory() || out.endsWith('/') || out.endsWith(sep)) return true;
  const i = await stat(inputs[0]).catch(() => undefined);
  // A folder in and an extension-less name out: a folder of images (a folder with a file out is a DICOM series).
  return Boolean(i?.isDirectory()) && formatOf(out) === '';
}

/**
 * The image files of a folder in name order (hidden files skipped), with `recursive` those of its sub-folders
 * too, except the folder `skip` (the real path of an output folder inside the input).
 */
export async function walk(dir: string, recursive: boolean, skip = ''): Promise<string[]> {
  const found: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue; // hidden files, and our own temporary outputs
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      // The output folder may lie inside the input folder: never read our own outputs back.
      if (recursive && (await realpath(p)) !== skip) found.push(...(await walk(p, true, skip)));
    } else if ((READERS as readonly string[]).includes(formatOf(e.name))) {
      found.push(p);
    }
  }
  return found;
}

/** A path's real path, or its absolute path while it does not exist (an output folder not made yet). */
async function realOrAbsolute(p: string): Promise<string> {
  return realpath(p).catch(() => resolve(p));
}

/** File names compare as the file system does: without case where it ignores case (macOS, Windows). */
const sameName = process.platform === 'darwin' || process.platform === 'win32' ? (p: string) => p.toLowerCase() : (p: string) => p;

/**
 * Input files and where each one's output goes (the sub-folder layout kept under --recursive). Checked here,
 * before any output is made: the output folder is not a folder the inputs are read from (outputs would replace
 * their inputs, or be read as inputs by the next run), and no two inputs write one output (x.png and x.jpg with
 * --format png, or d1/y.png and d2/y.png) — either would lose outputs while reporting them processed.
 */
async function plan(inputs: string[], outDir: string, o: BatchOptions): Promise<Job[]> {
  const outReal = await realOrAbsolute(outDir);
  const jobs: Job[] = [];
  for (const arg of inputs) {
    const info = await stat(arg).catch(() => undefined);
    if (!info) throw new FileAccessError(`no such file or folder: ${arg}`);
    const root = info.isDirectory() ? arg : dirname(arg);
    if ((await realOrAbsolute(root)) === outReal) {
      throw new InvalidArgumentError(`the output folder ${outDir} is the folder of the inputs (${arg}): outputs would replace their inputs or be read as inputs next time; give another folder, e.g. ${join(root, 'out')}`);
    }
    const files = info.isDirectory() ? await walk(arg, o.recursive, outReal) : [arg];
    for (const f of files) {
      const rel = relative(root, f);
      const ext = formatOf(rel);
      const stem = rel.slice(0, rel.length - ext.length);
      const { size, mtimeMs } = await stat(f);
      const output = join(outDir, stem + (o.format ?? ext));
      jobs.push({ input: f, output, key: recordKey(outDir, output), bytes: size, mtimeMs });
    }
  }
  assertDistinctOutputs(jobs);
  return jobs;
}

/** Two inputs that would write one output are an error before any work (InvalidArgumentError, exit 2). */
function assertDistinctOutputs(jobs: Job[]): void {
  const writer = new Map<string, Job>();
  const clashes: string[] = [];
  for (const j of jobs) {
    const first = writer.get(sameName(j.key));
    if (first) clashes.push(`${first.input} and ${j.input} both write ${j.output}`);
    else writer.set(sameName(j.key), j);
  }
  if (clashes.length) {
    const more = clashes.length > 1 ? ` (and ${clashes.length - 1} more)` : '';
    throw new InvalidArgumentError(`outputs would overwrite each other: ${clashes[0]}${more}; rename the inputs, keep their formats (no --format), or run them into separate folders`);
  }
}

/**
 * Progress on stderr: one updating line on a terminal, a plain line every ~2 s otherwise. A process running one
 * shard of a --jobs batch instead reports {"progress": written, "failed": n, "bytes": n} lines on stdout to its parent.
 */
class Progress {
  private last = 0;
  private readonly shard = shardOf() !== undefined;
  constructor(private readonly total: number, private readonly quiet: boolean, private readonly t0 = now()) {}

  /** `written` images written and `failed` failed so far, of `total`; `bytes` of input read. */
  update(written: number, failed: number, bytes: number, final = false): void {
    if (this.shard) {
      const t = now();
      if (final || t - this.last >= 200) {
        this.last = t;
        console.log(JSON.stringify({ progress: written, failed, bytes }));
      }
      return;
    }
    const done = written + failed;
    if (this.quiet) return;
    const t = now();
    const tty = process.stderr.isTTY;
    if (!final && t - this.last < (tty ? 100 : 2000)) return;
    this.last = t;
    const s = (t - this.t0) / 1000;
    const rate = done / Math.max(s, 1e-3);
    const eta = rate > 0 ? (this.total - done) / rate : 0;
    // Written, not just done: a run in which images failed must not read as complete.
    const line = `${written}/${this.total} images written${failed ? `, ${failed} failed` : ''}, ${rate.toFixed(1)} images/s, ${(bytes / 1e6 / Math.max(s, 1e-3)).toFixed(1)} MB/s, ${final ? `${s.toFixed(1)} s` : `ETA ${eta.toFixed(0)} s`}`;
    if (tty) process.stderr.write(`\r${line}\x1b[K${final ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  }
}

function noImages(inputs: string[], o: BatchOptions): FileAccessError {
  return new FileAccessError(`no images found in ${inputs.join(', ')}${o.recursive ? '' : ' (sub-folders need --recursive)'}`);
}

/** The jobs whose output is not up to date by the folder's records (all of them with --overwrite). */
async function pending(jobs: Job[], records: BatchRecords, o: BatchOptions): Promise<Job[]> {
  const todo: Job[] = [];
  for (const j of jobs) if (o.overwrite || !(await records.upToDate(j, o.recipe))) todo.push(j);
  return todo;
}

/** Saves the records at the end of a run; a record that cannot be saved costs redoing its outputs, not the run. */
async function saveRecords(records: BatchRecords): Promise<void> {
  try {
    await records.save();
  } catch (e) {
    process.stderr.write(`imgpu: warning: ${(e as Error).message}: the outputs are written, but a rerun will redo them\n`);
  }
}

/**
 * Why `mkdir -p dir` failed, in words: Node's recursive mkdir reports ENOENT where the nearest existing ancestor is
 * on a read-only file system (EROFS) or not writable, which read as "no such file" for a folder the user asked us to
 * create; name that ancestor instead.
 */
async function whyNoFolder(dir: string, e: Error): Promise<string> {
  let parent = dirname(dir);
  while (parent !== dirname(parent) && !(await stat(parent).then(() => true, () => false))) parent = dirname(parent);
  const code = await access(parent, constants.W_OK).then(() => undefined, (a: NodeJS.ErrnoException) => a.code);
  if (code === 'EROFS') return `${parent} is on a read-only file system`;
  if (code) return `the folder ${parent} is not writable`;
  return e.message;
}

/** Creates the output folder and checks, before any image is read, that it can be written. */
async function prepareOutputFolder(outDir: string): Promise<void> {
  try {
    await mkdir(outDir, { recursive: true });
  } catch (e) {
    throw new FileAccessError(`cannot create the output folder ${outDir}: ${await whyNoFolder(outDir, e as Error)}`);
  }
  // A probe of our own (concurrent runs into one folder must not remove each other's).
  const probe = join(outDir, `.imgpu-probe-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    await writeFile(probe, '');
    await rm(probe);
  } catch {
    throw new FileAccessError(`the output folder ${outDir} is not writable`);
  }
}

/** Environment variable that makes a process run shard k of n of a batch (set by runBatchInProcesses). */
const SHARD_ENV = 'IMGPU_BATCH_SHARD';

/** The shard this process runs of a --jobs batch (k of n), or undefined in a process of its own. */
export function shardOf(): { k: number; n: number } | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(process.env[SHARD_ENV] ?? '');
  return m ? { k: Number(m[1]), n: Number(m[2]) } : undefined;
}

/**
 * `--jobs N`: the batch split over N processes, each with its own GPU device, main thread, CPU pool and codec
 * threads (the cores divided between them), image i going to process i mod N. One process's main thread sets the
 * pace of a GPU batch (copies through mapped memory and Dawn's polling run there); several share the codec work
 * of one folder the way a process pool does. The children report progress and a summary on stdout; the parent
 * shows one progress line and one summary, and its exit code covers them all.
 */
export async function runBatchInProcesses(name: string, inputs: string[], outDir: string, o: BatchOptions, jobs: number, argv: string[], threads?: number): Promise<number> {
  const all = await plan(inputs, outDir, o);
  if (all.length === 0) throw noImages(inputs, o);
  await prepareOutputFolder(outDir);
  // The children report each output they write; this process keeps the folder's records.
  const records = await BatchRecords.open(outDir);
  const total = (await pending(all, records, o)).length;
  const cores = availableParallelism();
  const perThreads = threads ?? Math.max(1, Math.floor(Math.min(16, cores) / jobs));
  const perCodecs = Math.max(1, Math.floor((cores - jobs) / jobs));
  const t0 = now();
  const progress = new Progress(total, o.quiet || o.json);
  const done = new Array<number>(jobs).fill(0), failed = new Array<number>(jobs).fill(0), bytes = new Array<number>(jobs).fill(0);
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
  const children = Array.from({ length: jobs }, (_, k) => new Promise<{ code: number; summary?: BatchSummary }>((resolve) => {
    const child = spawn(process.execPath, [process.argv[1], ...argv, '--json', '--quiet', ...(threads ? [] : ['--threads', String(perThreads)])], {
      // With an IPC channel and PARENT_ENV the child ends when this process does, even by SIGKILL (endWithParent).
      env: { ...process.env, [SHARD_ENV]: `${k}/${jobs}`, IMGPU_CODEC_THREADS: String(perCodecs), [PARENT_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let summary: BatchSummary | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { progress?: number; failed?: number; bytes?: number; record?: OutputRecord & { key: string } } & Partial<BatchSummary>;
        if (msg.record) {
          const { key, ...record } = msg.record;
          records.add(key, record);
        } else if (msg.progress !== undefined) {
          done[k] = msg.progress;
          failed[k] = msg.failed ?? 0;
          bytes[k] = msg.bytes ?? 0;
          progress.update(sum(done), sum(failed), sum(bytes));
        } else if (msg.processed !== undefined) summary = msg as BatchSummary;
      } catch {
        process.stdout.write(`${line}\n`);
      }
    });
    child.on('close', (code) => resolve({ code: code ?? 70, summary }));
  }));
  const results = await Promise.all(children);
  progress.update(sum(done), sum(failed), sum(bytes), true);
  await saveRecords(records);
  const broken = results.map((r, k) => ({ ...r, k })).filter((r) => !r.summary);
  for (const b of broken) process.stderr.write(`imgpu: batch process ${b.k + 1} of ${jobs} ended with exit code ${b.code} before finishing its share; rerun to complete it\n`);
  const parts = results.flatMap((r) => (r.summary ? [r.summary] : []));
  const seconds = (now() - t0) / 1000;
  // Phase times add up over the processes; busy fractions are averaged.
  const addUp = (pick: (s: BatchSummary) => Record<string, number>, divisor = 1) => {
    const out: Record<string, number> = {};
    for (const p of parts) for (const [key, v] of Object.entries(pick(p))) out[key] = (out[key] ?? 0) + v / divisor;
    return out;
  };
  const processed = parts.reduce((a, p) => a + p.processed, 0);
  const disagreed = parts.some((p) => p.disagreed !== undefined) ? parts.reduce((a, p) => a + (p.disagreed ?? 0), 0) : undefined;
  const summary: BatchSummary = {
    op: name, processed, skipped: parts.reduce((a, p) => a + p.skipped, 0), failed: parts.flatMap((p) => p.failed), seconds,
    images_per_s: processed / Math.max(seconds, 1e-9), phases_ms: addUp((p) => p.phases_ms), busy: addUp((p) => p.busy, parts.length), processes: jobs,
    ...(disagreed !== undefined ? { disagreed } : {}),
  };
  if (!o.json) for (const f of summary.failed) process.stderr.write(`imgpu: skipped ${f.file}: ${f.message}\n`);
  const code = report(summary, o.json);
  return broken.length ? broken[0].code || 70 : code;
}

/**
 * One operation over many images: every input file (a folder's images, --recursive keeps the layout) into the
 * output folder. A file that fails is reported and skipped; outputs up to date by the folder's records (the same
 * input made them with the same recipe: records.ts) are skipped unless --overwrite; every output is written
 * atomically (io writeImage), so an interrupted run leaves only whole files and a rerun completes the rest. Reading runs ahead of the processing and writing behind it, several images
 * at a time. The read/write phase totals add up the time of overlapping work: they may exceed the wall clock.
 * Returns the exit code: EXIT_OK, EXIT_SOME_FAILED, or EXIT_DISAGREE when CPU and GPU disagreed on some image.
 */
export async function runBatch(name: string, cmd: ImageCommand, inputs: string[], outDir: string, params: Record<string, unknown>, exec: Execution, o: BatchOptions): Promise<number> {
  const shard = shardOf();
  const jobs = (await plan(inputs, outDir, o)).filter((_, i) => !shard || i % shard.n === shard.k);
  if (jobs.length === 0 && !shard) throw noImages(inputs, o);
  await prepareOutputFolder(outDir);
  const records = await BatchRecords.open(outDir);
  // A process running a shard of --jobs reports its outputs to the parent, which keeps the records.
  const record = shard
    ? (key: string, r: OutputRecord) => console.log(JSON.stringify({ record: { key, ...r } }))
    : (key: string, r: OutputRecord) => records.add(key, r);
  const t0 = now();
  const failed: { file: string; message: string }[] = [];
  const phases = { host: 0, upload: 0, kernels: 0, download: 0, read: 0, write: 0 };
  let processed = 0, skipped = 0, disagreed = 0, bytes = 0;
  const todo = await pending(jobs, records, o);
  skipped = jobs.length - todo.length;
  const codecs = new CodecPool();
  try {
    return await batchLoop();
  } finally {
    await codecs.close();
    if (!shard) await saveRecords(records);
  }
  // The loop itself, so that the codec workers are closed whatever happens in it.
  async function batchLoop(): Promise<number> {
    const progress = new Progress(todo.length, o.quiet || o.json);
    const read = async (j: Job): Promise<Image> => {
      const tr = now();
      const img = await codecs.read(j.input, { ...o.read, gray: !cmd.colour });
      phases.read += now() - tr;
      return img;
    };
    // GPU outputs land in shared buffers reused once written: a fresh one per image cost page faults, zero-filling
    // and garbage collection on the main thread (a profile of a batch showed them beside the copy itself).
    const outputs = new RecycledBuffers(32); // enough for the images being written behind
    // Output folders made so far (one mkdir per folder, not per image: each is a trip through the libuv pool).
    const made = new Set<string>();
    const ensureDir = async (d: string) => {
      if (made.has(d)) return;
      try {
        await mkdir(d, { recursive: true });
      } catch (e) {
        throw new FileAccessError(`cannot create the folder ${d}: ${(e as Error).message}`); // a file failure, not a bug
      }
      made.add(d);
    };
    const recycled = (r: OpResult<Image>): OpResult<Image> => {
      const out = r.output;
      if (!r.release) return r;
      const Ctor = out.data.constructor as new (b: SharedArrayBuffer, offset: number, length: number) => PixelArray;
      const data = new Ctor(outputs.alloc(out.data.byteLength), 0, out.data.length);
      exec.gpu!.hostCopy(new Uint8Array(data.buffer, 0, data.byteLength), new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength));
      r.release();
      return { ...r, output: { ...out, data }, release: undefined };
    };
    async function processOne(job: Job, img: Image): Promise<void> {
      try {
        const results: Record<string, OpResult<Image>> = {};
        const on: RunOn = { pool: exec.pool };
        if (exec.cpu) results.cpu = await cmd.run(img, params, on, {});
        // Unprofiled: the phases overlap as in production (and with the other images in flight). The output comes
        // as a view of mapped readback memory and is copied once into recycled shared memory for the encoder.
        if (exec.gpu) {
          const r = await runGpuOrCpu(exec, async () => recycled(await cmd.run(img, params, { ...on, gpu: exec.gpu, profile: false, view: true }, {})), () => cmd.run(img, params, on, {}));
          results[r.on] = r.result;
        }
        if (results.cpu && results.gpu) {
          const c: Comparison = cmd.compare(results.cpu.output, results.gpu.output);
          if (!c.identical) disagreed++;
        }
        const r = results.gpu ?? results.cpu!;
        // The input has been consumed (uploaded, or read by the CPU passes): its buffer goes back to the decoders.
        if (Object.values(results).every((x) => x.output.data.buffer !== img.data.buffer)) codecs.recycle(img.data.buffer);
        phases.host += r.timings.host;
        phases.upload += r.timings.upload;
        phases.kernels += kernelTotal(r.timings);
        phases.download += r.timings.download;
        await ensureDir(dirname(job.output));
        while (writes.size >= window) await Promise.race(writes);
        const w: Promise<void> = (async () => {
          const tw = now();
          try {
            // Images go to the codec workers (batch runs image commands only: ImageCommand).
            const out = r.output;
            await codecs.write(job.output, out, o.write);
            if (results.gpu) outputs.give(out.data.buffer);
            record(job.key, await BatchRecords.describe(job, o.recipe));
            processed++;
            bytes += job.bytes;
          } catch (e) {
            fail(job, e);
          }
          phases.write += now() - tw;
          progress.update(processed, failed.length, bytes);
        })().finally(() => writes.delete(w));
        writes.add(w);
      } catch (e) {
        fail(job, e);
      }
    }
    const fail = (j: Job, e: unknown) => {
      // A bad file (a typed error), or a bug met on one file: either way the batch goes on and reports it.
      const message = e instanceof ImgpuError ? cliWording(e.message) : `internal error: ${(e as Error)?.message ?? e}`;
      failed.push({ file: j.input, message });
      if (!o.json) process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}imgpu: skipped ${j.input}: ${message}\n`);
    };
    // Several images in flight on both sides of the processing: decoding and encoding run on the codec
    // workers, so `window` images are read ahead and `window` written behind.
    const window = Math.max(2, Math.min(16, exec.pool.size));
    const reads: Promise<Image | Error>[] = [];
    let nextRead = 0;
    const fill = () => {
      while (reads.length < window && nextRead < todo.length) reads.push(read(todo[nextRead++]).catch((e: Error) => e));
    };
    const writes = new Set<Promise<void>>();
    // Images processed at once (the codec workers read ahead and write behind regardless). Measured on the H100
    // (equalize, 210 photos): 1 → 62, 2 → 57, 4 → 50, 6 → 45 images/s on the GPU — Dawn's completion polling
    // on the main thread grows with the work in flight, so overlapping images' GPU phases lost; on the CPU, 1, 2
    // and 3 gave 84, 84 and 85 images/s. IMGPU_BATCH_DEPTH overrides both (benchmarks).
    const depth = Number(process.env.IMGPU_BATCH_DEPTH) || IMAGES_IN_FLIGHT;
    const running = new Set<Promise<void>>();
    const elu0 = performance.eventLoopUtilization();
    fill();
    for (let k = 0; k < todo.length; k++) {
      const job = todo[k];
      const got = await reads.shift()!;
      fill();
      if (got instanceof Error) {
        fail(job, got);
        continue;
      }
      while (running.size >= depth) await Promise.race(running);
      const p: Promise<void> = processOne(job, got).finally(() => running.delete(p));
      running.add(p);
    }
    await Promise.all(running);
    await Promise.all(writes);
    progress.update(processed, failed.length, bytes, true);
    const seconds = (now() - t0) / 1000;
    // Busy fraction of each phase: the main thread's event-loop utilisation (it runs the operations and feeds the
    // GPU), codec phases against the codec workers' capacity — the phase nearest 1 is the one that sets the pace.
    const wall = seconds * 1000;
    const busy = {
      main: performance.eventLoopUtilization(elu0).utilization,
      read: phases.read / (wall * codecs.size),
      write: phases.write / (wall * codecs.size),
    };
    const summary: BatchSummary = { op: name, processed, skipped, failed, seconds, images_per_s: processed / Math.max(seconds, 1e-9), phases_ms: phases, busy, ...(exec.cpu && exec.gpu ? { disagreed } : {}) };
    return report(summary, o.json);
  }
}

export interface BatchSummary {
  op: string;
  processed: number;
  skipped: number;
  failed: { file: string; message: string }[];
  seconds: number;
  images_per_s: number;
  phases_ms: Record<string, number>;
  busy: Record<string, number>;
  /** --device both: images on which CPU and GPU differed */
  disagreed?: number;
  /** --jobs: the processes that shared the batch */
  processes?: number;
}

/** Prints a batch's summary (one JSON object, or a line) and returns its exit code. */
function report(summary: BatchSummary, json: boolean): number {
  const { op, processed, skipped, failed, seconds, disagreed } = summary;
  if (json) console.log(JSON.stringify(summary));
  else console.log(`${op}: ${processed} processed, ${skipped} skipped (up to date), ${failed.length} failed, ${seconds.toFixed(1)} s (${summary.images_per_s.toFixed(1)} images/s)${summary.processes ? ` in ${summary.processes} processes` : ''}${disagreed !== undefined ? `, CPU and GPU ${disagreed ? `DIFFER on ${disagreed}` : 'agree on all'}` : ''}`);
  return exitCodeOf(disagreed ?? 0, failed.length);
}

import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import type { CpuPool } from '../../core/cpu/pool.js';
import { FileAccessError, ImgpuError, InvalidArgumentError, shownValue, UnsupportedFormatError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { checkWriteOptions, formatOf, READERS, type FailOn, type RawLayout, type WriteOptions } from '../../io/index.js';
import { checkFailOn } from '../../io/jpeg.js';
import type { JpegPathOption } from '../../node/jpeg-gpu.js';
import { NodeWorkerPool } from '../../node/worker-pool.js';
import { commandOfSteps, type StepsSpec } from '../commands.js';
import { recordKey } from '../records.js';
import { DEVICE_CHOICES, type DeviceChoice, type Execution } from '../context.js';
import { onceEach } from '../notes.js';
import { asImgpuError, type BatchEvent, type BatchResult } from './events.js';
import { batchFormat, batchRecipe, type BatchOptions as PlanOptions, type Job } from './plan.js';
import { mergeSummaries, type BatchSummary } from './report.js';
import { runBatch, type BatchHooks, type BatchTuning, type ImagePath } from './run.js';
import { runInProcesses, type ProcessesRun } from './shard.js';

// imgpu/batch: the batch engine from code. `batch(steps, options)` runs what `imgpu <op> <folder> <out>` runs — the
// same planning, records, read-ahead, GPU decode/encode, CPU lane and atomic writes — and tells the caller what
// happens as events instead of printing. The CLI's batch mode is this plus argument parsing and printing.

export type { BatchTuning, ImagePath } from './run.js';
export type { BatchSummary } from './report.js';
export type { StepsSpec } from '../commands.js';
export type { DeviceChoice } from '../context.js';
export type { Note, NoteCode } from '../notes.js';
export type { BatchEvent, BatchResult } from './events.js';

/** An input given as bytes: `id` names it (a relative path whose extension says its format, e.g. 'day1/a.jpg'). */
export interface BatchInput {
  id: string;
  bytes: Uint8Array;
}

/** What a sink is told of an output besides its bytes. */
export interface SinkMeta {
  /** the input's id (a path given in `inputs`, or a BatchInput's id) */
  input: string;
  /** the output's format, as an extension ('.png') */
  format: string;
  path: ImagePath;
}

/** Where outputs go when not to a local folder: called once per output, its name relative (the input's, format applied). */
export type BatchSink = (id: string, bytes: Uint8Array, meta: SinkMeta) => Promise<void>;

export interface BatchOptions extends BatchTuning {
  /** Paths of images and folders (their images, name order), or images as bytes (staged: see docs/batch.md). */
  inputs: readonly string[] | AsyncIterable<BatchInput>;
  /** An output folder (kept layout, records in .imgpu-batch.json), or a sink. */
  out: string | BatchSink;
  /** Run on this GPU (the caller's; the batch does not destroy it). Absent: the CPU path. */
  gpu?: GpuContext;
  /** CPU worker pool (the caller's). Absent: one of `threads` threads for the batch, closed at its end. */
  pool?: CpuPool;
  /** threads of the batch's own CPU pool (no `pool`) @default cores, at most 16 */
  threads?: number;
  /** With `gpu`: run the CPU path too and count the images whose results differ (summary.disagreed). @default false */
  compare?: boolean;
  /** With `gpu`: work the GPU cannot hold even split (GpuLimitError) runs on the CPU instead of failing. @default true */
  cpuFallback?: boolean;
  /** where a GPU batch's JPEG arithmetic runs (the same bytes either way) @default 'auto' */
  jpeg?: JpegPathOption;
  /** images processed whole on the CPU beside the GPU (run.ts laneSize) @default 'auto' */
  cpuLane?: number | 'auto';
  /** redo outputs the folder's records show up to date @default false */
  overwrite?: boolean;
  /** folders' sub-folders too, their layout kept @default false */
  recursive?: boolean;
  /** output format, 'png' or '.png' @default the input's */
  format?: string;
  /** a damaged JPEG: 'none' | 'truncated' | 'error' | 'warning' (refused on any libjpeg warning) @default 'warning' */
  failOn?: FailOn;
  /** layout of headerless .raw inputs */
  raw?: RawLayout;
  /**
   * A gray JPEG stays one channel under the operations that take colour (filters, morphology, gamma, CLAHE); by
   * default it is read as three equal channels, as cv2.imread gives it, and the output is OpenCV's (ReadOptions.colour).
   * @default false
   */
  keepGray?: boolean;
  /** PNG zlib level 0–9, as cv2.imwrite's IMWRITE_PNG_COMPRESSION. @default cv2.imwrite's own (level 1, Sub filter, Z_RLE) */
  compression?: number;
  /** JPEG quality 1–100 @default 95 */
  quality?: number;
  /** Stop at the first failed image (no image started after it; those in flight finish). @default false */
  failFast?: boolean;
  /** Stops the batch: no image is started after it, those in flight are written whole; `done` resolves with `aborted: true`. */
  signal?: AbortSignal;
  /** Iterable inputs: images staged on local disk at once (written, processed, removed, then the next ones). @default 64 */
  stageSize?: number;
  /**
   * Split the batch over this many child processes, image i to process i mod N, each with its own devices (chosen
   * by `device`), CPU pool and codec threads (the cores divided between them); their events arrive here, their
   * summaries merged. Needs `inputs` as paths and `out` as a folder. @default 1
   */
  processes?: number;
  /**
   * With `processes`: what each child runs on, as the CLI's --device ('auto': the GPU unless none or a software
   * one). @default 'both' with `gpu` and `compare`, 'gpu' with `gpu`, else 'cpu'
   */
  device?: DeviceChoice;
  /** With `processes`: the GPU adapter each child takes (createNodeGpuContext's `adapter`), and the backend */
  adapter?: string;
  backend?: string;
  /** Run only shard `index` of `count`: image i of the plan when i mod count = index (several hosts over one folder). */
  shard?: { index: number; count: number };
  /** @internal a batch's child process (shard.ts): its outputs' records go to its parent */
  record?: BatchHooks['record'];
}

/** A running batch: its events as an async iterable (one consumer; kept until read), and its summary. */
export interface BatchRun extends AsyncIterable<BatchEvent> {
  /** The summary once the batch has ended; rejects with a typed error for what stops a batch before any image (bad options, no inputs). */
  readonly done: Promise<BatchResult>;
}

/**
 * Runs `steps` over `options.inputs` into `options.out`. Options are checked first: an InvalidArgumentError
 * (or FileAccessError: no such input) rejects `done`, and the iteration throws it, before any image is read.
 */
export function batch(steps: StepsSpec, options: BatchOptions): BatchRun {
  const events = new EventQueue<BatchEvent>();
  const done = runEngine(steps, options, (e) => events.push(e));
  void done.then(() => events.end(), (e: unknown) => events.end(e));
  done.catch(() => undefined); // read through `done` or the iteration; never an unhandled rejection
  return { done, [Symbol.asyncIterator]: () => events.iterator() };
}

/** Events pushed by the engine, pulled by one async iterator; ended with the run (its error thrown at the end). */
class EventQueue<T> {
  private readonly items: T[] = [];
  private ended = false;
  private error?: Error;
  private wake?: () => void;

  push(e: T): void {
    this.items.push(e);
    this.wake?.();
  }

  end(error?: unknown): void {
    this.ended = true;
    this.error = error === undefined || error instanceof Error ? error : new Error(shownValue(error));
    this.wake?.();
  }

  async *iterator(): AsyncGenerator<T, void, undefined> {
    for (;;) {
      while (this.items.length) yield this.items.shift()!;
      if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

/** Options checked before any work (InvalidArgumentError), as the CLI checks its flags. */
function checkOptions(o: BatchOptions): WriteOptions {
  if (!o || (typeof o.out !== 'string' && typeof o.out !== 'function')) throw new InvalidArgumentError('batch: option `out` must be a folder or a sink function');
  if (!o.inputs || (typeof o.inputs === 'string' || (!Array.isArray(o.inputs) && typeof (o.inputs as AsyncIterable<BatchInput>)[Symbol.asyncIterator] !== 'function'))) {
    throw new InvalidArgumentError('batch: option `inputs` must be a list of paths or an AsyncIterable of { id, bytes }');
  }
  for (const [k, lo, hi] of [['window', 1, 256], ['depth', 1, 64], ['codecThreads', 1, 256], ['threads', 1, 256], ['stageSize', 1, 1 << 20], ['laneNice', -20, 19]] as const) {
    const v = o[k];
    if (v !== undefined && (!Number.isInteger(v) || v < lo || v > hi)) throw new InvalidArgumentError(`batch: option \`${k}\` must be an integer ${lo}–${hi}, got ${v}`);
  }
  if (o.cpuLane !== undefined && o.cpuLane !== 'auto' && (!Number.isInteger(o.cpuLane) || o.cpuLane < 0 || o.cpuLane > 256)) throw new InvalidArgumentError(`batch: option \`cpuLane\` must be 'auto' or an integer 0–256, got ${o.cpuLane}`);
  if (o.failOn !== undefined) checkFailOn(o.failOn);
  checkSharding(o);
  const write: WriteOptions = { compression: o.compression, quality: o.quality };
  checkWriteOptions(write);
  return write;
}

/** `processes`, `device` and `shard` checked (InvalidArgumentError). */
function checkSharding(o: BatchOptions): void {
  const { processes, shard } = o;
  if (processes !== undefined && (!Number.isInteger(processes) || processes < 1 || processes > 64)) throw new InvalidArgumentError(`batch: option \`processes\` must be an integer 1–64, got ${processes}`);
  if (processes !== undefined && processes > 1 && (typeof o.out !== 'string' || !Array.isArray(o.inputs))) {
    throw new InvalidArgumentError('batch: option `processes` needs `inputs` as paths and `out` as a folder (the child processes read and write them)');
  }
  if (processes !== undefined && processes > 1 && shard) throw new InvalidArgumentError('batch: options `processes` and `shard` do not go together (each process runs a shard of its own)');
  if (o.device !== undefined && !(DEVICE_CHOICES as readonly string[]).includes(o.device)) throw new InvalidArgumentError(`batch: option \`device\` must be one of ${DEVICE_CHOICES.join(', ')}, got ${shownValue(o.device)}`);
  if (shard && (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count)) {
    throw new InvalidArgumentError(`batch: option \`shard\` must be { index, count } with 0 ≤ index < count, got ${shownValue(shard)}`);
  }
}

/** The devices of a batch: the caller's GPU and pool, or a pool of its own (closed with the batch). */
function executionOf(o: BatchOptions, emit: (e: BatchEvent) => void): Execution {
  const pool = o.pool ?? new NodeWorkerPool(o.threads);
  return {
    cpu: !o.gpu || o.compare === true, gpu: o.gpu, pool, warnings: [], auto: o.cpuFallback !== false, note: onceEach((n) => emit({ type: 'note', ...n })),
    async close() {
      if (!o.pool) await pool.close();
    },
  };
}

async function runEngine(steps: StepsSpec, o: BatchOptions, emit: (e: BatchEvent) => void): Promise<BatchResult> {
  const write = checkOptions(o);
  const { name, cmd, params, prepared } = await commandOfSteps(steps);
  const failOn = o.failOn ?? 'warning';
  // The default adds nothing to the read options (nor to the recipe: outputs made before stay up to date).
  const codec = { format: batchFormat(o.format), read: { raw: o.raw, ...(failOn === 'warning' ? {} : { failOn }), ...(o.keepGray ? { colour: false } : {}) }, write };
  const plan: PlanOptions = {
    // Staged inputs keep their ids' folders: all of them are walked.
    recursive: Array.isArray(o.inputs) ? (o.recursive ?? false) : true, overwrite: o.overwrite ?? false, quiet: true, json: true, ...codec,
    recipe: batchRecipe(name, params, codec), jpeg: o.jpeg, cpuLane: o.cpuLane,
  };
  if ((o.processes ?? 1) > 1) return runInProcesses(processesRun(name, steps, o, plan), emit);
  let failures = 0;
  const stop = () => o.signal?.aborted === true || (o.failFast === true && failures > 0);
  const exec = executionOf(o, emit);
  try {
    const staged = new Staging(o);
    const summary = await staged.run(async (inputs, outDir, ids) => {
      const hooks: BatchHooks = {
        tuning: o, stop, shard: o.shard, record: o.record,
        skipped: (j) => emit({ type: 'skipped', id: ids.idOf(j), output: ids.outputOf(j) }),
        failed: (j, e) => {
          failures++;
          emit({ type: 'failed', id: ids.idOf(j), error: asImgpuError(e) });
        },
        done: async (j, how) => {
          const output = await ids.deliver(j, how.path);
          emit({ type: 'done', id: ids.idOf(j), output, path: how.path, ms: how.ms });
        },
        progress: (processed, failed, total, bytes) => emit({ type: 'progress', processed: ids.counted.processed + processed, failed: ids.counted.failed + failed, ...(ids.total ? { total } : {}), bytes: ids.counted.bytes + bytes }),
      };
      return runBatch(name, cmd, inputs, outDir, prepared, exec, plan, hooks);
    }, emit);
    const { stopped, ...rest } = summary;
    return o.signal?.aborted && stopped ? { ...rest, aborted: true } : rest;
  } finally {
    await exec.close();
  }
}

/** Options that stay in this process (its inputs and output reach the children as plain data): devices, signal, records. */
const NOT_FOR_CHILDREN = ['inputs', 'out', 'gpu', 'pool', 'compare', 'signal', 'processes', 'device', 'adapter', 'backend', 'threads', 'record'] as const;

/**
 * A batch over `processes` (shard.ts): the options every child takes (plain data: not the caller's devices, signal
 * or sink), and the devices each acquires — by default what the caller's `gpu` and `compare` ask for.
 */
function processesRun(name: string, steps: StepsSpec, o: BatchOptions, plan: PlanOptions): ProcessesRun {
  const { inputs, out, gpu, compare, signal, processes, device, adapter, backend, threads } = o;
  const options: Record<string, unknown> = { ...o };
  for (const k of NOT_FOR_CHILDREN) delete options[k];
  return {
    name, steps, inputs: [...(inputs as readonly string[])], out: out as string, plan, signal, failFast: o.failFast === true, count: processes!,
    // The caller's GPU context set cpuFallback's default (true); a device chosen as the CLI's --device sets it by its own rule.
    options: { ...options, cpuFallback: o.cpuFallback ?? (device === undefined ? true : undefined) },
    devices: { device: device ?? (gpu ? (compare ? 'both' : 'gpu') : 'cpu'), adapter, backend, threads },
  };
}

/** How a run's jobs are named to the caller, and where their outputs go (a folder, or a sink). */
interface Naming {
  idOf(j: Job): string;
  outputOf(j: Job): string;
  /** Hands a written output on (to the sink, removing the staged file); resolves to the name the done event gives. */
  deliver(j: Job, path: ImagePath): Promise<string>;
  /** earlier groups' counts (iterable inputs: progress over all groups) */
  counted: { processed: number; failed: number; bytes: number };
  /** whether the total is known ahead (paths) */
  total: boolean;
}

type GroupRun = (inputs: string[], outDir: string, naming: Naming) => Promise<BatchSummary & { stopped: boolean }>;

/**
 * Inputs and outputs other than local files, through the file engine: images given as bytes are staged in a
 * private temporary folder, `stageSize` at a time (under their ids, so outputs keep their names), and outputs
 * for a sink are written there and handed on once whole. Paths into a folder go straight through.
 */
class Staging {
  constructor(private readonly o: BatchOptions) {}

  async run(group: GroupRun, emit: (e: BatchEvent) => void): Promise<BatchSummary & { stopped: boolean }> {
    const { o } = this;
    const iterable = !Array.isArray(o.inputs);
    if (!iterable && typeof o.out === 'string') {
      const outDir = o.out;
      return group([...(o.inputs as readonly string[])], outDir, this.naming((j) => j.input, outDir, true));
    }
    const stage = await mkdtemp(join(tmpdir(), 'imgpu-stage-'));
    try {
      const outDir = typeof o.out === 'string' ? o.out : join(stage, 'out');
      if (!iterable) return await group([...(o.inputs as readonly string[])], outDir, this.naming((j) => j.input, outDir, true));
      return await this.groups(stage, outDir, group, emit);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  /** Iterable inputs, `stageSize` at a time: each group staged, run, removed; the summaries merged. */
  private async groups(stage: string, outDir: string, group: GroupRun, emit: (e: BatchEvent) => void): Promise<BatchSummary & { stopped: boolean }> {
    const inDir = join(stage, 'in');
    const parts: BatchSummary[] = [];
    const counted = { processed: 0, failed: 0, bytes: 0 };
    const refused: BatchSummary['failed'] = [];
    let stopped = false;
    const it = (this.o.inputs as AsyncIterable<BatchInput>)[Symbol.asyncIterator]();
    for (let more = true; more && !stopped; ) {
      await rm(inDir, { recursive: true, force: true });
      let staged = 0;
      while (staged < (this.o.stageSize ?? 64)) {
        const next = await it.next();
        if (next.done) {
          more = false;
          break;
        }
        const why = badId(next.value?.id);
        if (why) {
          const error = asImgpuError(why);
          refused.push({ file: String(next.value?.id), message: error.message });
          emit({ type: 'failed', id: String(next.value?.id), error });
          continue;
        }
        const file = join(inDir, normalize(next.value.id));
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, next.value.bytes);
        staged++;
      }
      if (staged === 0) continue;
      const naming = this.naming((j) => relative(inDir, j.input).split(sep).join('/'), outDir, false);
      naming.counted = { ...counted };
      const r = await group([inDir], outDir, naming);
      parts.push(r);
      counted.processed += r.processed;
      counted.failed += r.failed.length;
      stopped = r.stopped || (this.o.signal?.aborted ?? false);
    }
    await it.return?.();
    if (parts.length === 0) throw new FileAccessError('batch: the inputs gave no image');
    const merged = mergeSummaries(parts[0].op, parts);
    return { ...merged, failed: [...refused, ...merged.failed], stopped };
  }

  private naming(idOf: (j: Job) => string, outDir: string, total: boolean): Naming {
    const sink = typeof this.o.out === 'function' ? this.o.out : undefined;
    const outputOf = (j: Job) => (sink ? recordKey(outDir, j.output) : j.output);
    return {
      idOf, outputOf, total, counted: { processed: 0, failed: 0, bytes: 0 },
      deliver: async (j, path) => {
        if (!sink) return j.output;
        const id = recordKey(outDir, j.output);
        const bytes = await readFile(j.output);
        try {
          await sink(id, bytes, { input: idOf(j), format: formatOf(j.output), path });
        } catch (e) {
          throw e instanceof ImgpuError ? e : new FileAccessError(`the sink refused ${id}: ${(e as Error)?.message ?? e}`, { cause: e });
        } finally {
          await rm(j.output, { force: true });
        }
        return id;
      },
    };
  }
}

/** Why an input's id cannot name a staged file (absolute, leaving its folder, hidden, no image extension), or undefined. */
function badId(id: unknown): ImgpuError | undefined {
  if (typeof id !== 'string' || !id) return new InvalidArgumentError(`batch: an input's id must be a non-empty string, got ${String(id)}`);
  const n = normalize(id);
  if (isAbsolute(id) || n.startsWith('..') || n.split(sep).some((p) => p.startsWith('.'))) return new InvalidArgumentError(`batch: input id '${id}' must be a relative path inside its folder, no part hidden`);
  if (!(READERS as readonly string[]).includes(formatOf(id))) return new UnsupportedFormatError(`batch: input id '${id}' has no image extension (${READERS.join(' ')})`);
  return undefined;
}

import { access, mkdir, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FileAccessError, InvalidArgumentError } from '../../core/errors.js';
import type { JpegPathOption } from '../../node/jpeg-gpu.js';
import { formatOf, READERS, WRITERS, type ReadOptions, type WriteOptions } from '../../io/index.js';
import { BatchRecords, recordKey, type RecordedJob } from '../records.js';
import type { LoopJob } from './loop.js';
import { stderrNotes, type NoteSink } from '../notes.js';

// Planning a batch, before any image is read: its options, the input files (walk), where each output goes and
// the checks on them (no output over an input, no two inputs onto one output), the output folder made and probed,
// and which outputs the folder's records show up to date.

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
  /**
   * --jpeg: where a GPU batch's JPEG arithmetic runs. 'gpu': JPEG inputs are decoded on the GPU (entropy decoding on
   * CPU threads) and JPEG outputs kept resident and encoded with the arithmetic on the GPU (encodeJpegGpu); 'cpu':
   * libjpeg-turbo whole on the codec workers; 'auto': 'gpu' on a hardware adapter, else 'cpu' (resolveJpegPath). The pixels and
   * bytes are the same either way, so it is not part of the recipe. @default 'auto'
   */
  jpeg?: JpegPathOption;
  /**
   * --cpu-lane: images processed whole on the CPU at once beside the GPU, the smallest first (batch/lane.ts); 'auto':
   * none (measured faster without, laneSize); 0: none. Not part of the recipe: either side gives the same bytes. @default 'auto'
   */
  cpuLane?: number | 'auto';
}

/** One input of a batch and where its output goes: what the folder's records are kept and checked for. */
export type Job = RecordedJob;

/**
 * The recipe of BatchOptions: operation, parameters (defaults included, so `--clip 2` and no --clip agree),
 * output format and read/write options, as canonical JSON (keys sorted, so the order of flags does not matter).
 */
export function batchRecipe(op: string, params: Record<string, unknown>, o: Pick<BatchOptions, 'format' | 'read' | 'write'>): string {
  // A gray input kept gray (--keep-gray) makes another output than the default's three channels.
  return canonicalJson({ op, params, format: o.format ?? null, raw: o.read.raw ?? null, write: o.write, ...(o.read.colour === false ? { keepGray: true } : {}) });
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

/**
 * The images of a folder that `accept` takes, as inputs of a loop (eachImage) that writes no files (detection):
 * walk's files (name order, hidden ones skipped, sub-folders with `recursive`) with their sizes. None is a
 * FileAccessError (exit 3), as for a batch.
 */
export async function folderJobs(dir: string, recursive: boolean, accept: (file: string) => boolean): Promise<LoopJob[]> {
  const files = (await walk(dir, recursive)).filter(accept);
  if (files.length === 0) throw noImages([dir], { recursive });
  return Promise.all(files.map(async (input) => ({ input, bytes: (await stat(input)).size })));
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
export async function plan(inputs: string[], outDir: string, o: BatchOptions): Promise<Job[]> {
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


export function noImages(inputs: string[], o: Pick<BatchOptions, 'recursive'>): FileAccessError {
  return new FileAccessError(`no images found in ${inputs.join(', ')}${o.recursive ? '' : ' (sub-folders need --recursive)'}`);
}

/** The jobs whose output is not up to date by the folder's records (all of them with --overwrite). */
export async function pending(jobs: Job[], records: BatchRecords, o: BatchOptions): Promise<Job[]> {
  const todo: Job[] = [];
  for (const j of jobs) if (o.overwrite || !(await records.upToDate(j, o.recipe))) todo.push(j);
  return todo;
}

/** Saves the records at the end of a run; a record that cannot be saved costs redoing its outputs, not the run. */
export async function saveRecords(records: BatchRecords, say: NoteSink = stderrNotes): Promise<void> {
  try {
    await records.save();
  } catch (e) {
    const text = `imgpu: warning: ${(e as Error).message}: the outputs are written, but a rerun will redo them`;
    say({ code: 'IMGPU_RECORDS_NOT_SAVED', key: text, text });
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
export async function prepareOutputFolder(outDir: string): Promise<void> {
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


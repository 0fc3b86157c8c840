import { createHash } from 'node:crypto';
import { isAbsolute, normalize } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { FAIL_ON, isVolumeFile, type FailOn, type WriteOptions } from '../../io/index.js';
import type { Job as Image } from '../batch/plan.js';

// The job model of scale-out: a job is a shard of a batch's images (or one volume), with everything a worker needs
// to run it as local batch mode would; its id derives from what it makes, so the same work is never queued twice.

/**
 * Images per job when --shard is not given. A job costs a few Redis round trips (well under 10 ms) and a worker
 * killed mid-job costs redoing what the job had left: 32 photos are ~0.5 s of work at local batch mode's 62
 * images/s on the H100 (run.ts), so the queue adds under 2 % while a batch of a few hundred photos still spreads
 * over several workers, and the loop's read-ahead window (at most 16) stays full within a job.
 */
export const DEFAULT_SHARD = 32;


/** What a job carries: its images (absolute paths every worker sees) and how to make their outputs. */
export interface ScaleJobData {
  batch: string;
  /** the pipeline, as given to submit ("clahe --clip 2 | threshold --method otsu") */
  pipeline: string;
  /** codec options (the output format is in each image's output path) */
  write: WriteOptions;
  outDir: string;
  images: Image[];
  /** how damaged a JPEG may be and still be read (io ReadOptions.failOn); absent: 'warning', the default */
  failOn?: FailOn;
  /** a job of an OME-Zarr volume's chunk rows (then `images` is empty and the pipeline is one volume operation) */
  chunks?: ChunkJob;
}

/**
 * Chunk rows of a volume's output (volume-jobs.ts): rows [first, end) along z of one level of the output OME-Zarr,
 * which the submitter made. Level 0: the operation over the input, each slab read with its halo; level i > 0: the
 * pyramid's level i from level i − 1 (a job that runs after every job of level i − 1: BullMQ flows).
 */
export interface ChunkJob {
  input: string;
  output: string;
  level: number;
  rows: [number, number];
  /** the chunk files these rows hold (status counts them) */
  chunks: number;
}

/** What a worker returns for a job: each of its images done or failed, once. */
export interface ScaleJobResult {
  /** inputs whose outputs this run of the job wrote */
  written: string[];
  /** inputs whose outputs an earlier run of the job (a worker killed since) had written: not redone */
  earlier: string[];
  failed: { file: string; message: string }[];
  seconds: number;
  /** host:pid of the worker */
  worker: string;
  /** a chunk job: the chunk rows this run wrote, and those an earlier run of it (killed since) had written */
  rows?: { written: number[]; earlier: number[] };
}

/** What a worker reports while a job runs (job.updateProgress). */
export interface ScaleJobProgress {
  /** record keys of the outputs written so far (an earlier run's included) */
  done: string[];
  failed: number;
  total: number;
}

/** The images of a batch split into jobs: `shard` images each, a volume alone, in the order given. */
export function shardImages(images: Image[], shard: number): Image[][] {
  const jobs: Image[][] = [];
  let current: Image[] = [];
  for (const img of images) {
    // A volume format's file (the registry's rule) is a job alone: seconds of work, and a shard of them would balance badly.
    if (isVolumeFile(img.input)) {
      jobs.push([img]);
      continue;
    }
    current.push(img);
    if (current.length === shard) {
      jobs.push(current);
      current = [];
    }
  }
  if (current.length) jobs.push(current);
  return jobs;
}

const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');

/**
 * A job's id: a digest of its images (input path, size, modification time, output path) and the recipe (pipeline,
 * parameters, format and codec options: batchRecipe). The same work submitted again has the same id, which BullMQ
 * keeps once (done, queued or failed); a changed input or parameter is new work. BullMQ ids hold no ':'.
 */
export function jobId(images: readonly Image[], recipe: string): string {
  return `j${digest([recipe, images.map((i) => [i.input, i.bytes, i.mtimeMs, i.output])]).slice(0, 32)}`;
}

/** A batch's id: a digest of its jobs' ids, so submitting the same batch again names the same batch. */
export function batchId(jobIds: readonly string[]): string {
  return `b${digest(jobIds).slice(0, 16)}`;
}

/** The most images one job may carry (submit's --shard is at most 100,000). */
const MAX_JOB_IMAGES = 100_000;
/** The longest pipeline a job may carry (a chain of tens of steps is a few hundred characters). */
const MAX_PIPELINE = 10_000;

/**
 * A job's payload checked against ScaleJobData's schema before a worker acts on it: anyone who can write to the
 * queue can put anything there. Every field of the right type, nothing else; paths absolute and normalized (no '.',
 * '..' or '//': what is checked against a worker's roots is then the path the files are opened by). An
 * InvalidArgumentError naming the first field that is wrong.
 */
export function checkJobData(data: unknown): ScaleJobData {
  const d = record(data, 'the job');
  onlyKeys(d, 'the job', ['batch', 'pipeline', 'write', 'outDir', 'images', 'failOn', 'chunks']);
  if (typeof d.batch !== 'string' || !/^b[0-9a-f]{16}$/.test(d.batch)) bad('batch must be a batch id (b and 16 hex digits)');
  if (typeof d.pipeline !== 'string' || d.pipeline.length === 0 || d.pipeline.length > MAX_PIPELINE) bad(`pipeline must be a string of 1–${MAX_PIPELINE} characters`);
  const w = record(d.write, 'write');
  onlyKeys(w, 'write', ['compression', 'quality']);
  for (const k of ['compression', 'quality']) if (w[k] !== undefined && !Number.isInteger(w[k])) bad(`write.${k} must be an integer`);
  absolutePath(d.outDir, 'outDir');
  if (d.failOn !== undefined && !(FAIL_ON as readonly unknown[]).includes(d.failOn)) bad(`failOn must be one of ${FAIL_ON.join('|')}`);
  if (d.chunks !== undefined) {
    checkChunkJob(d.chunks);
    if (!Array.isArray(d.images) || d.images.length !== 0) bad('images must be empty in a chunk job');
  } else if (!Array.isArray(d.images) || d.images.length === 0 || d.images.length > MAX_JOB_IMAGES) bad(`images must be a list of 1–${MAX_JOB_IMAGES} images`);
  (d.images as unknown[]).forEach((v, i) => {
    const img = record(v, `images[${i}]`);
    onlyKeys(img, `images[${i}]`, ['input', 'output', 'key', 'bytes', 'mtimeMs']);
    absolutePath(img.input, `images[${i}].input`);
    absolutePath(img.output, `images[${i}].output`);
    if (typeof img.key !== 'string' || img.key.length === 0) bad(`images[${i}].key must be a non-empty string`);
    if (!Number.isSafeInteger(img.bytes) || (img.bytes as number) < 0) bad(`images[${i}].bytes must be a size in bytes`);
    if (typeof img.mtimeMs !== 'number' || !Number.isFinite(img.mtimeMs)) bad(`images[${i}].mtimeMs must be a time in ms`);
  });
  return d as unknown as ScaleJobData;
}

/** The most pyramid levels (io ZarrWriteOptions.levels) and chunk rows along z a chunk job may name. */
const MAX_LEVEL = 15, MAX_ROWS = 1 << 24;

function checkChunkJob(v: unknown): void {
  const c = record(v, 'chunks');
  onlyKeys(c, 'chunks', ['input', 'output', 'level', 'rows', 'chunks']);
  for (const k of ['input', 'output']) {
    absolutePath(c[k], `chunks.${k}`);
    if (!/\.zarr$/i.test(c[k] as string)) bad(`chunks.${k} must be a .zarr path`);
  }
  if (!Number.isInteger(c.level) || (c.level as number) < 0 || (c.level as number) > MAX_LEVEL) bad(`chunks.level must be an integer 0–${MAX_LEVEL}`);
  const r = c.rows;
  if (!Array.isArray(r) || r.length !== 2 || !r.every((x) => Number.isInteger(x)) || r[0] < 0 || r[1] <= r[0] || r[1] > MAX_ROWS) bad(`chunks.rows must be [first, end) with 0 ≤ first < end ≤ ${MAX_ROWS}`);
  if (!Number.isSafeInteger(c.chunks) || (c.chunks as number) < 1) bad('chunks.chunks must be a positive integer');
}

function bad(what: string): never {
  throw new InvalidArgumentError(`malformed job: ${what}`);
}

function record(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(`${what} must be an object`);
  return v as Record<string, unknown>;
}

function onlyKeys(o: Record<string, unknown>, what: string, keys: readonly string[]): void {
  const extra = Object.keys(o).find((k) => !keys.includes(k));
  if (extra !== undefined) bad(`${what} has an unknown field '${extra}'`);
}

function absolutePath(v: unknown, what: string): void {
  if (typeof v !== 'string' || !isAbsolute(v) || normalize(v) !== v || v.includes('\0') || (v.length > 1 && v.endsWith('/'))) bad(`${what} must be an absolute, normalized path`);
}

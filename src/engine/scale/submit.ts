import { resolve } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { checkFailOn, checkWriteOptions, type FailOn, type WriteOptions, type ZarrWriteOptions } from '../../io/index.js';
import { parsePipeline } from '../../ops/pipeline.js';
import { paramsAsRun } from '../commands.js';
import { PIPELINE } from '../../ops/pipeline.js';
import { batchFormat, batchRecipe, noImages, plan, prepareOutputFolder, type BatchOptions } from '../batch/plan.js';
import { batchKey, checkServer, parseRedisUrl, queueName, redisConnection, type QueueTarget } from './connection.js';
import { batchId, DEFAULT_SHARD, jobId, shardImages, type ScaleJobData } from './jobs.js';
import { queueModules } from './modules.js';
import { DEFAULT_VOLUME_SHARD, isVolumeSubmit, submitVolume, volumePaths } from './volume-jobs.js';

/** Jobs added to the queue per transaction. */
const ADD_SLICE = 500;

/**
 * What submit() takes: a batch as local batch mode takes it (`imgpu pipeline <inputs…> <out> "<pipeline>"`), or
 * one OME-Zarr volume as `imgpu <op> in.zarr out.zarr` takes it (a .zarr input: chunk jobs, volume-jobs.ts).
 */
export interface SubmitOptions extends QueueTarget {
  /** image files and folders, or one .zarr (made absolute: every worker must see them at the same paths) */
  inputs: readonly string[];
  /** the output folder (made if missing), or the output .zarr of a .zarr input (made by submit) */
  out: string;
  /** the operations, as `imgpu pipeline` takes them: "clahe --clip 2 | threshold --method otsu" */
  pipeline: string;
  /** images per job (default 32; a volume is a job alone); of a .zarr: output chunk rows along z per job (default 1) */
  shard?: number;
  /** a .zarr output's layout: chunks (default the input's), compressor, OME version, pyramid levels */
  zarr?: ZarrWriteOptions;
  /** include sub-folders (their layout kept under `out`) */
  recursive?: boolean;
  /** the output format's extension (default: each input's) */
  format?: string;
  compression?: number;
  quality?: number;
  /**
   * How damaged a JPEG may be and still be read (as --fail-on: none, truncated, error; default warning, any
   * libjpeg warning refuses the file): carried in each job, the workers read with it.
   */
  failOn?: FailOn;
}

/** What submit() enqueued. */
export interface Submitted {
  batch: string;
  queue: string;
  /** jobs and images enqueued now */
  jobs: number;
  images: number;
  /** the batch's jobs and images, those already on the queue (queued, done or failed) included */
  totalJobs: number;
  totalImages: number;
  /** a .zarr: the output chunk files of the jobs enqueued now, and of all the batch's jobs (every level's) */
  chunks?: number;
  totalChunks?: number;
}

/**
 * A batch on the queue: planned as local batch mode plans it (the same walk, output names and checks; the
 * pipeline and the files it names checked here, not by the first worker), split into jobs, those not on the
 * queue yet enqueued. Returns at once; status() follows it.
 */
export async function submit(o: SubmitOptions): Promise<Submitted> {
  const m = await queueModules();
  const inputs = o.inputs.map((p) => resolve(p));
  const outDir = resolve(o.out);
  const server = parseRedisUrl(o.redis, o.tls);
  const queue = queueName(o.queue);
  const shard = o.shard ?? DEFAULT_SHARD;
  if (!Number.isInteger(shard) || shard < 1 || shard > 100_000) throw new InvalidArgumentError(`option \`shard\` must be an integer 1–100000, got ${o.shard}`);
  if (isVolumeSubmit(o.inputs, o.out)) {
    await checkServer(m, server);
    const v = await submitVolume(m, server, queue, { ...volumePaths(o.inputs[0], o.out), pipeline: o.pipeline, shard: o.shard ?? DEFAULT_VOLUME_SHARD, zarr: o.zarr ?? {} });
    return { batch: v.batch, queue, jobs: v.jobs, images: 0, totalJobs: v.totalJobs, totalImages: 0, chunks: v.chunks, totalChunks: v.totalChunks };
  }
  const steps = parsePipeline(o.pipeline);
  await paramsAsRun(PIPELINE, { chain: o.pipeline });
  const write: WriteOptions = { compression: o.compression, quality: o.quality };
  checkWriteOptions(write);
  // The default adds nothing to the payload nor to the jobs' ids (jobs submitted before stay the same work).
  const failOn = o.failOn === undefined || checkFailOn(o.failOn) === 'warning' ? undefined : o.failOn;
  const codec = { format: batchFormat(o.format), read: failOn ? { failOn } : {}, write };
  // The recipe of the resolved steps (defaults included): "clahe|otsu" and "clahe --clip 2 | otsu" are one recipe.
  const b: BatchOptions = { recursive: o.recursive ?? false, overwrite: false, quiet: true, json: false, ...codec, recipe: batchRecipe('pipeline', { steps }, codec) };
  // A file refused by default and read with --fail-on none is other work: another job id.
  const recipe = failOn ? JSON.stringify([b.recipe, { failOn }]) : b.recipe;
  await checkServer(m, server);
  const images = await plan(inputs, outDir, b);
  if (images.length === 0) throw noImages(inputs, b);
  await prepareOutputFolder(outDir);
  const shards = shardImages(images, shard);
  const ids = shards.map((s) => jobId(s, recipe));
  const batch = batchId(ids);
  const connection = redisConnection(m, server);
  const q = new m.bullmq.Queue<ScaleJobData>(queue, { connection });
  try {
    // Work already on the queue — waiting, running, done or failed — is not enqueued again.
    const states = await Promise.all(ids.map((id) => q.getJobState(id)));
    const fresh = shards.map((s, i) => ({ images: s, id: ids[i] })).filter((_, i) => states[i] === 'unknown');
    // In slices: addBulk is one transaction, and a million photos are ~250 MB of job data.
    for (let i = 0; i < fresh.length; i += ADD_SLICE) {
      await q.addBulk(fresh.slice(i, i + ADD_SLICE).map((f) => ({
        name: 'pipeline', data: { batch, pipeline: o.pipeline, write, outDir, images: f.images, ...(failOn ? { failOn } : {}) },
        // Results stay (status counts from them; a job id kept is what makes a second submit enqueue nothing).
        opts: { jobId: f.id, removeOnComplete: false, removeOnFail: false },
      })));
    }
    await connection.hset(batchKey(queue, batch), { jobs: JSON.stringify(ids), images: images.length, pipeline: o.pipeline, outDir, submitted: Date.now() });
    return { batch, queue, jobs: fresh.length, images: fresh.reduce((a, f) => a + f.images.length, 0), totalJobs: ids.length, totalImages: images.length };
  } finally {
    await q.close();
    await connection.quit();
  }
}

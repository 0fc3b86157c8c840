import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { FlowJob, Job } from 'bullmq';
import { InvalidArgumentError } from '../../core/errors.js';
import type { Operation } from '../../core/op.js';
import { createChunkedOutput, defaultMemory, runChunkRows } from '../../io/chunked.js';
import { isZarrPath, openOmeZarr, removeStrayTemps, type ZarrWriteOptions } from '../../io/zarr.js';
import type { PipelineStep } from '../../ops/pipeline.js';
import { parsePipeline } from '../../ops/pipeline.js';
import { ALL_OPERATIONS } from '../../ops/registry.js';
import { paramsAsRun } from '../commands.js';
import { PIPELINE } from '../../ops/pipeline.js';
import type { Execution } from '../context.js';
import { slabRunner, volumePlan } from '../volume.js';
import { batchKey, redisConnection, type RedisServer } from './connection.js';
import { batchId, type ChunkJob, type ScaleJobData, type ScaleJobProgress } from './jobs.js';
import type { QueueModules } from './modules.js';

// An OME-Zarr volume on the queue (issue 38 item 3): the submitter makes the output OME-Zarr once, then enqueues
// jobs of output chunk rows along z — whole rows of the output's chunks, so no two jobs write one chunk file — each
// run by a worker as `imgpu <op> in.zarr out.zarr` runs its slabs (io/chunked.ts runChunkRows: the halo read, chunk
// files written atomically). The pyramid's level i is one job that BullMQ runs only after every job of level
// i − 1 has completed (a flow: the coarser level is the parent, the finer level's jobs its children).

/** Output chunk rows per job of level 0 when `shard` is not given: one row (a 64-plane row of a 512² volume is ~1 s of work). */
export const DEFAULT_VOLUME_SHARD = 1;

/** What submitVolume takes (submit()'s options, resolved). */
export interface VolumeSubmit {
  input: string;
  output: string;
  pipeline: string;
  /** output chunk rows per level-0 job */
  shard: number;
  zarr: ZarrWriteOptions;
}

/** The volume operation of a chunk job's pipeline (one step), with its parameters (`steps`: as prepared, files read). */
export function volumeStep(pipeline: string, steps: PipelineStep[] = parsePipeline(pipeline)): { op: Operation; params: Record<string, unknown> } {
  if (steps.length !== 1) throw new InvalidArgumentError(`a .zarr volume on the queue runs one volume operation, got ${steps.length} steps in '${pipeline}'`);
  return { op: ALL_OPERATIONS[steps[0].op], params: steps[0].params };
}

/** Whether submit() was given a volume: one .zarr input (and then a .zarr output). */
export function isVolumeSubmit(inputs: readonly string[], out: string): boolean {
  if (inputs.length !== 1 || !isZarrPath(inputs[0])) return false;
  if (!isZarrPath(out)) throw new InvalidArgumentError(`a .zarr input is written as a .zarr: the output ${out} must end in .zarr`);
  return true;
}

const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');

/** One job of the tree: its id and payload, and the jobs it waits for (the finer level's). */
interface Planned {
  id: string;
  chunks: ChunkJob;
  children: Planned[];
}

/**
 * The jobs of a volume: level 0 in runs of `shard` chunk rows (one job of every row where the operation needs the
 * whole volume), each coarser level one job whose children are the level above's jobs. Returns the roots of the
 * tree: level 0's jobs where there is no pyramid, else the coarsest level's one job.
 */
function planJobs(v: VolumeSubmit, recipe: string, levels: { shape: number[]; chunks: number[] }[], whole: boolean): Planned[] {
  const rowsOf = (l: { shape: number[]; chunks: number[] }) => Math.ceil(l.shape[0] / l.chunks[0]);
  const perRow = (l: { shape: number[]; chunks: number[] }) => Math.ceil(l.shape[1] / l.chunks[1]) * Math.ceil(l.shape[2] / l.chunks[2]);
  const job = (level: number, rows: [number, number], children: Planned[]): Planned => ({
    id: `v${digest([recipe, level, rows]).slice(0, 32)}`,
    chunks: { input: v.input, output: v.output, level, rows, chunks: (rows[1] - rows[0]) * perRow(levels[level]) },
    children,
  });
  const rows0 = rowsOf(levels[0]), step = whole ? rows0 : v.shard;
  let tier: Planned[] = [];
  for (let r = 0; r < rows0; r += step) tier.push(job(0, [r, Math.min(rows0, r + step)], []));
  for (let i = 1; i < levels.length; i++) tier = [job(i, [0, rowsOf(levels[i])], tier)];
  return tier;
}

/** Every job of a tree, finer levels first. */
const allJobs = (roots: Planned[]): Planned[] => roots.flatMap((p) => [...allJobs(p.children), p]);

/**
 * A volume on the queue: its operation checked, the output OME-Zarr made (kept where an earlier submit of the same
 * recipe made it), the jobs not on the queue yet enqueued as one flow.
 */
export async function submitVolume(m: QueueModules, server: RedisServer, queue: string, v: VolumeSubmit): Promise<{ batch: string; jobs: number; totalJobs: number; chunks: number; totalChunks: number }> {
  const { op, params } = volumeStep(v.pipeline);
  if (!op) throw new InvalidArgumentError(`${parsePipeline(v.pipeline)[0].op} does not take volumes: a .zarr input is for filter, gamma and the other volume operations`);
  await paramsAsRun(PIPELINE, { chain: v.pipeline }); // the files it names, read here rather than by the first worker
  const src = await openOmeZarr(v.input);
  const { reach, outDtype } = volumePlan(op, params, src);
  const write = { ...v.zarr, chunks: v.zarr.chunks ?? src.levels[0].chunks };
  const recipe = JSON.stringify({ queue: true, op: op.name, params, input: v.input });
  const out = await createChunkedOutput(v.input, v.output, outDtype, { recipe, write });
  const roots = planJobs(v, JSON.stringify([recipe, write, v.output]), out.levels, reach === undefined);
  const all = allJobs(roots);
  const batch = batchId(all.map((j) => j.id));
  const connection = redisConnection(m, server);
  const flows = new m.bullmq.FlowProducer({ connection });
  const q = new m.bullmq.Queue<ScaleJobData>(queue, { connection });
  try {
    // A tree already on the queue (its root known: waiting, running, done or failed) is not enqueued again.
    const states = await Promise.all(roots.map((r) => q.getJobState(r.id)));
    const fresh = roots.filter((_, i) => states[i] === 'unknown');
    const flow = (p: Planned): FlowJob => ({
      name: 'volume', queueName: queue, data: { batch, pipeline: v.pipeline, write: {}, outDir: v.output, images: [], chunks: p.chunks } satisfies ScaleJobData,
      opts: { jobId: p.id, removeOnComplete: false, removeOnFail: false }, children: p.children.map(flow),
    });
    if (fresh.length) await flows.addBulk(fresh.map(flow));
    const total = all.reduce((a, j) => a + j.chunks.chunks, 0);
    await connection.hset(batchKey(queue, batch), { jobs: JSON.stringify(all.map((j) => j.id)), images: 0, chunks: total, pipeline: v.pipeline, outDir: v.output, submitted: Date.now() });
    const enqueued = allJobs(fresh);
    return { batch, jobs: enqueued.length, totalJobs: all.length, chunks: enqueued.reduce((a, j) => a + j.chunks.chunks, 0), totalChunks: total };
  } finally {
    await flows.close();
    await q.close();
    await connection.quit();
  }
}

/** The paths of a volume submit made absolute (every worker must see them at the same paths). */
export function volumePaths(input: string, out: string): { input: string; output: string } {
  return { input: resolve(input).replace(/\/$/, ''), output: resolve(out).replace(/\/$/, '') };
}

/** What a worker runs a chunk job with. */
export interface ChunkJobContext {
  exec: Execution;
  /** the pipeline's steps as prepared (files read) */
  steps: PipelineStep[];
  memory?: number;
  /** after each slab is written and reported (the test hook's hang) */
  afterSlab?: (rowsDone: number) => Promise<void>;
}

/**
 * A chunk job on a worker: the rows an earlier run of it reported written (a worker killed since) skipped, the
 * temporary files such a run left under the job's rows removed, the others computed slab by slab, each slab's rows
 * reported (awaited) once their chunk files are in place.
 */
export async function runChunkJob(job: Job<ScaleJobData>, d: ScaleJobData & { chunks: ChunkJob }, ctx: ChunkJobContext): Promise<{ written: number[]; earlier: number[] }> {
  const c = d.chunks;
  const inRows = (r: number) => r >= c.rows[0] && r < c.rows[1];
  const earlier = ((job.progress as ScaleJobProgress | undefined)?.done ?? []).map(Number).filter(inRows);
  if (job.attemptsStarted > 1 || job.stalledCounter > 0) await removeStrayTemps(c.output, c.level, c.rows);
  const done = earlier.map(String);
  const total = c.rows[1] - c.rows[0];
  let run = async () => {
    throw new Error('a pyramid level runs no operation');
  };
  let reach;
  if (c.level === 0) {
    const { op, params } = volumeStep(d.pipeline, ctx.steps);
    reach = volumePlan(op, params, await openOmeZarr(c.input)).reach;
    run = slabRunner(op, params, ctx.exec) as never;
  }
  const written = await runChunkRows(c.input, c.output, c.level, c.rows, run, reach, {
    memory: ctx.memory ?? defaultMemory(), done: earlier, collect: () => ctx.exec.pool.collect?.() ?? Promise.resolve(),
    written: async (rows) => {
      done.push(...rows.map(String));
      const p: ScaleJobProgress = { done: [...done], failed: 0, total };
      await job.updateProgress(p);
      await ctx.afterSlab?.(done.length - earlier.length);
    },
  });
  return { written, earlier };
}

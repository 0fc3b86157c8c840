// The CLI's batch mode: its flags as imgpu/batch's options, the engine's events printed as lines (or, in a process
// running a shard of --jobs, as JSON lines for its parent), the summary and the exit code.
import { batch, type BatchOptions, type BatchTuning, type StepsSpec } from '../engine/batch/api.js';
import { Progress, report } from '../engine/batch/report.js';
import { shardOf } from '../engine/batch/shard.js';
import type { Execution } from '../engine/context.js';
import { cliWording } from '../engine/flags.js';

/** The batch options a command line gives besides the devices and steps. */
export type BatchFlags = Omit<BatchOptions, 'gpu' | 'pool' | 'compare' | 'cpuFallback' | keyof BatchTuning> & { json: boolean; quiet: boolean };

/**
 * Measurement knobs kept from before they were options (docs/throughput.md, bench/batch.ts): IMGPU_BATCH_WINDOW,
 * IMGPU_BATCH_DEPTH, IMGPU_READ_RAMP=0, IMGPU_LANE_NICE, IMGPU_CODEC_THREADS — read here, at the edge, only.
 */
function tuningFromEnv(env = process.env): BatchTuning {
  const int = (v: string | undefined) => (v !== undefined && v !== '' && Number.isInteger(Number(v)) ? Number(v) : undefined);
  return {
    window: int(env.IMGPU_BATCH_WINDOW) || undefined, depth: int(env.IMGPU_BATCH_DEPTH) || undefined, readRamp: env.IMGPU_READ_RAMP !== '0',
    laneNice: int(env.IMGPU_LANE_NICE), codecThreads: int(env.IMGPU_CODEC_THREADS) || undefined,
  };
}

/** Runs a batch over imgpu/batch and prints it as the CLI does; returns the exit code (0, 8 CPU and GPU differ, 9 some failed). */
export async function runBatchCommand(steps: StepsSpec, exec: Execution, flags: BatchFlags): Promise<number> {
  const shard = shardOf();
  const { json, quiet, ...options } = flags;
  const run = batch(steps, {
    ...options, ...tuningFromEnv(), gpu: exec.gpu, pool: exec.pool, compare: exec.cpu && exec.gpu !== undefined, cpuFallback: exec.auto,
    ...(shard ? { shard: { ...shard, record: (key, r) => console.log(JSON.stringify({ record: { key, ...r } })) } } : {}),
  });
  let progress: Progress | undefined;
  let last = { processed: 0, failed: 0, bytes: 0 };
  for await (const e of run) {
    if (e.type === 'progress') {
      progress ??= new Progress(e.total, { quiet: quiet || json, shard: shard !== undefined });
      progress.update(e.processed, e.failed, e.bytes);
      last = e;
    } else if (e.type === 'failed' && !json) {
      process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}imgpu: skipped ${e.id}: ${cliWording(e.error.message)}\n`);
    }
  }
  const summary = await run.done;
  progress?.update(last.processed, last.failed, last.bytes, true);
  return report(summary, json);
}

// The CLI's batch mode: its flags as imgpu/batch's options (--jobs N its `processes`), the engine's events printed
// as lines (notes as the engine words them, each once), the summary and the exit code.
import { batch, type BatchOptions, type BatchTuning, type StepsSpec } from '../engine/batch/api.js';
import { Progress, report } from '../engine/batch/report.js';
import type { Execution } from '../engine/context.js';
import { cliWording } from '../engine/flags.js';

/** The batch options a command line gives besides the devices and steps. */
export type BatchFlags = Omit<BatchOptions, 'gpu' | 'pool' | 'compare' | 'cpuFallback' | 'device' | 'adapter' | 'backend' | 'threads' | keyof BatchTuning> & { json: boolean; quiet: boolean };

/** --jobs N: the devices each of the N processes acquires, as the flags name them (this process acquires none). */
export type JobsDevices = Pick<BatchOptions, 'device' | 'adapter' | 'backend' | 'threads'>;

/** The devices' options: this process's (acquired), or those of --jobs processes. */
function devicesOf(devices: Execution | JobsDevices): Partial<BatchOptions> {
  if (!('pool' in devices)) return devices;
  return { gpu: devices.gpu, pool: devices.pool, compare: devices.cpu && devices.gpu !== undefined, cpuFallback: devices.auto };
}

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
export async function runBatchCommand(steps: StepsSpec, devices: Execution | JobsDevices, flags: BatchFlags): Promise<number> {
  const { json, quiet, ...options } = flags;
  const run = batch(steps, { ...options, ...tuningFromEnv(), ...devicesOf(devices) });
  let progress: Progress | undefined;
  let last = { processed: 0, failed: 0, bytes: 0 };
  for await (const e of run) {
    if (e.type === 'progress') {
      progress ??= new Progress(e.total, { quiet: quiet || json });
      progress.update(e.processed, e.failed, e.bytes);
      last = e;
    } else if (e.type === 'note') {
      process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${e.text}\n`);
    } else if (e.type === 'failed' && !json) {
      process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}imgpu: skipped ${e.id}: ${cliWording(e.error.message)}\n`);
    }
  }
  const summary = await run.done;
  progress?.update(last.processed, last.failed, last.bytes, true);
  return report(summary, json);
}

import type { CpuPool } from '../core/cpu/pool.js';
import { CPU_PATH, GpuLimitError, InvalidArgumentError, NoGpuAdapterError } from '../core/errors.js';
import { cliWording } from './flags.js';
import { stderrNotes, type NoteSink } from './notes.js';
import type { AdapterDescription, GpuContext } from '../core/gpu/context.js';
import { createNodeGpuContext } from '../node/gpu.js';
import { NodeWorkerPool } from '../node/worker-pool.js';

export type DeviceChoice = 'auto' | 'cpu' | 'gpu' | 'both';
export const DEVICE_CHOICES: readonly DeviceChoice[] = ['auto', 'cpu', 'gpu', 'both'];

/** What a command runs on, acquired once from the common flags and released at exit. */
export interface Execution {
  cpu: boolean;
  gpu?: GpuContext;
  pool: CpuPool;
  /** Lines for stderr: why `--device auto` runs on the CPU. */
  warnings: string[];
  /** --device auto: work the GPU refuses before starting it (GpuLimitError) runs on the CPU (runGpuOrCpu). */
  auto: boolean;
  /** Where the engine's one-time notes go (a batch's events); absent: stderr, once per key in the process. */
  note?: NoteSink;
  close(): Promise<void>;
}

/**
 * Runs `gpuRun`; where the GPU refuses the work before starting it because even split it cannot hold it
 * (GpuLimitError) and the device was left to --device auto, runs `cpuRun` instead — the same result, since the
 * paths agree — and says so once per reason (exec.note). Otherwise the error stands (--device gpu|both asked for the GPU).
 */
export async function runGpuOrCpu<R>(exec: Execution, gpuRun: () => Promise<R>, cpuRun: () => Promise<R>): Promise<{ on: 'gpu' | 'cpu'; result: R }> {
  try {
    return { on: 'gpu', result: await gpuRun() };
  } catch (e) {
    if (!(e instanceof GpuLimitError) || !exec.auto) throw e;
    const why = e.message.split('; ')[0];
    (exec.note ?? stderrNotes)({ code: 'IMGPU_GPU_LIMIT_FALLBACK', key: why, text: `warning: ${cliWording(why)}; running on the CPU` });
    return { on: 'cpu', result: await cpuRun() };
  }
}

/** An adapter's name as the CLI prints it. */
export function adapterName(a: AdapterDescription): string {
  return a.description || [a.vendor, a.device].filter(Boolean).join(' ') || 'unnamed adapter';
}

/** A NoGpuAdapterError's reason without its advice (the CLI says what it does instead), in the CLI's words. */
function reason(e: NoGpuAdapterError): string {
  const advice = e.message.indexOf(`Use ${CPU_PATH}`);
  return cliWording((advice < 0 ? e.message : e.message.slice(0, advice)).replace(/\.?\s*$/, ''));
}

/** The adapter asked for by name (--adapter, else env IMGPU_ADAPTER): used as it is, software or not. */
export function namedAdapter(flags: Map<string, string>): string | undefined {
  return flags.get('adapter') ?? process.env.IMGPU_ADAPTER;
}

/**
 * The CPU pool and, unless --device cpu, a GPU context. `--device auto` takes the GPU only where it is the faster
 * path: with no adapter, or when the adapter is a software rasterizer (lavapipe, llvmpipe, SwiftShader: the GPU
 * emulated on the CPU, measured several times slower than imgpu's CPU path — detect 2.6 s against 1.1 s), it
 * runs on the CPU and says so in one line. An adapter asked for by name (--adapter, IMGPU_ADAPTER) is used as it
 * is, and one that does not exist is an error (NoGpuAdapterError, exit 4) on every --device but cpu.
 */
export async function acquire(device: string, flags: Map<string, string>): Promise<Execution> {
  if (!(DEVICE_CHOICES as readonly string[]).includes(device)) throw new InvalidArgumentError(`--device must be one of ${DEVICE_CHOICES.join('|')}, got '${device}'`);
  const warnings: string[] = [];
  const threads = flags.has('threads') ? Number(flags.get('threads')) : undefined;
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) throw new InvalidArgumentError('--threads must be a positive integer');
  const named = namedAdapter(flags);
  let gpu: GpuContext | undefined;
  if (device !== 'cpu') {
    try {
      gpu = await createNodeGpuContext({ adapter: flags.get('adapter'), backend: flags.get('backend') });
    } catch (e) {
      if (device !== 'auto' || named || !(e instanceof NoGpuAdapterError)) throw e;
      warnings.push(`warning: --device auto: ${reason(e)}; running on the CPU`);
    }
  }
  if (device === 'auto' && gpu?.adapter.software && !named) {
    warnings.push(`note: --device auto runs on the CPU: the GPU adapter (${adapterName(gpu.adapter)}) is a software rasterizer, slower than the CPU path; --device gpu uses it anyway`);
    gpu.destroy();
    gpu = undefined;
  }
  const cpu = device === 'cpu' || device === 'both' || !gpu;
  const pool = new NodeWorkerPool(threads);
  return {
    cpu, gpu, pool, warnings, auto: device === 'auto',
    async close() {
      await pool.close();
      gpu?.destroy();
    },
  };
}

import type { CpuPool } from '../core/cpu/pool.js';
import { ImgpuError, InvalidArgumentError, NoGpuAdapterError } from '../core/errors.js';
import type { GpuContext } from '../core/gpu/context.js';
import { createNodeGpuContext } from '../node/gpu.js';
import { NodeWorkerPool } from '../node/worker-pool.js';

export type DeviceChoice = 'auto' | 'cpu' | 'gpu' | 'both';
export const DEVICE_CHOICES: readonly DeviceChoice[] = ['auto', 'cpu', 'gpu', 'both'];

/** What a command runs on, acquired once from the common flags and released at exit. */
export interface Execution {
  cpu: boolean;
  gpu?: GpuContext;
  pool: CpuPool;
  warnings: string[];
  close(): Promise<void>;
}

export async function acquire(device: string, flags: Map<string, string>): Promise<Execution> {
  if (!(DEVICE_CHOICES as readonly string[]).includes(device)) throw new InvalidArgumentError(`--device must be one of ${DEVICE_CHOICES.join('|')}, got '${device}'`);
  const warnings: string[] = [];
  const threads = flags.has('threads') ? Number(flags.get('threads')) : undefined;
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) throw new InvalidArgumentError('--threads must be a positive integer');
  let gpu: GpuContext | undefined;
  if (device !== 'cpu') {
    try {
      gpu = await createNodeGpuContext({ adapter: flags.get('adapter'), backend: flags.get('backend') });
    } catch (e) {
      if (device !== 'auto' || !(e instanceof NoGpuAdapterError)) throw e;
      warnings.push(`warning: no GPU adapter (${(e as ImgpuError).message.split('.')[0]}); running on the CPU`);
    }
  }
  const cpu = device === 'cpu' || device === 'both' || !gpu;
  const pool = new NodeWorkerPool(threads);
  return {
    cpu, gpu, pool, warnings,
    async close() {
      await pool.close();
      gpu?.destroy();
    },
  };
}

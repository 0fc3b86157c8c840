// One operation run on the page's GPU and in the CPU worker at once: what the pages show of it (timings, verdict).
import { compareImages, describeComparison } from '../src/core/compare.js';
import type { GpuContext } from '../src/core/gpu/context.js';
import type { Image } from '../src/core/image.js';
import { formatTimings, type OpResult } from '../src/core/timings.js';
import { OPERATIONS } from '../src/ops/registry.js';
import type { cpuRunner } from './cpu-client.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';

export interface BothRun {
  gpu?: OpResult<Image>;
  cpu?: OpResult<Image>;
  gpuError: string | null;
  cpuError: string | null;
  /** The result shown: the GPU's, else the CPU's. */
  shown?: Image;
  /** Whether the two paths agree by the operation's comparison (null unless both ran). */
  identical: boolean | null;
  /** The timings block: one line per path, or why it did not run. */
  lines: string[];
  verdict: { text: string; className: '' | 'same' | 'differ' };
}

/**
 * Runs `name` on both paths. No size check first: past the adapter's binding limit the operations split the work
 * (ranges, slabs; the timings say how many), and what cannot be split fails with its own message on the GPU line.
 */
export async function runBoth(name: string, img: Image, params: Record<string, unknown>, files: Record<string, ChosenFile>, gpu: GpuContext | undefined, cpu: ReturnType<typeof cpuRunner>): Promise<BothRun> {
  const op = OPERATIONS[name];
  const settle = <T>(p: Promise<T>) => p.then((v) => ({ v }), (e: unknown) => ({ e: e instanceof Error ? e.message : String(e) }));
  const [g, c] = await Promise.all([
    gpu ? settle(op.run(img, withChosenFiles(name, params, files), { gpu })) : Promise.resolve(undefined),
    settle(cpu(name, params, files, img)),
  ]);
  const gpuRes = g && 'v' in g ? g.v : undefined, cpuRes = 'v' in c ? c.v : undefined;
  const gpuError = g && 'e' in g ? g.e : null, cpuError = 'e' in c ? c.e : null;
  const lines = [
    cpuRes ? `${formatTimings('cpu', cpuRes.timings)} [web worker, 1 thread]` : `  cpu  failed: ${cpuError}`,
    gpuRes ? `${formatTimings('gpu', gpuRes.timings)} [${gpu?.adapter.description || gpu?.adapter.vendor}]` : gpuError !== null ? `  gpu  failed: ${gpuError}` : '  gpu  not available',
  ];
  const shown = gpuRes?.output ?? cpuRes?.output;
  if (gpuRes && cpuRes) {
    const cmp = (op.compare ?? compareImages)(cpuRes.output, gpuRes.output);
    return { gpu: gpuRes, cpu: cpuRes, gpuError, cpuError, shown, identical: cmp.identical, lines, verdict: { text: describeComparison(cmp), className: cmp.identical ? 'same' : 'differ' } };
  }
  const text = shown ? 'one path only (see the timings)' : 'the operation failed (see the timings)';
  return { gpu: gpuRes, cpu: cpuRes, gpuError, cpuError, shown, identical: null, lines, verdict: { text, className: '' } };
}

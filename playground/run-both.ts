// One operation (or pipeline) run on the page's GPU and in the CPU worker at once: what the pages show of it
// (timings, verdict). Shared by the main page and the volume page.
import { compareImages, describeComparison, type Comparison } from '../src/browser.js';
import type { GpuContext } from '../src/browser.js';
import type { Image } from '../src/browser.js';
import { formatTimings, type OpResult } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';
import type { cpuRunner } from './cpu-client.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';

/** A path's outcome: its value, or its error's message (shown on that path's line, never thrown at the page). */
export type Settled<T> = { v: T } | { e: string };
export const settle = <T>(p: Promise<T>): Promise<Settled<T>> => p.then((v) => ({ v }), (e: unknown) => ({ e: e instanceof Error ? e.message : String(e) }));
export const valueOf = <T>(s: Settled<T> | undefined): T | undefined => (s && 'v' in s ? s.v : undefined);
export const errorOf = <T>(s: Settled<T> | undefined): string | null => (s && 'e' in s ? s.e : null);

/** The timings block: one line per path (CPU worker, then GPU), or why it did not run; `gpuNote` follows the GPU's. */
export function timingLines(g: Settled<OpResult<Image>> | undefined, c: Settled<OpResult<Image>>, gpu: GpuContext | undefined, gpuNote = ''): string[] {
  const gpuRes = valueOf(g), cpuRes = valueOf(c);
  return [
    cpuRes ? `${formatTimings('cpu', cpuRes.timings)} [web worker, 1 thread]` : `  cpu  failed: ${errorOf(c)}`,
    gpuRes ? `${formatTimings('gpu', gpuRes.timings)} [${gpu?.adapter.description || gpu?.adapter.vendor}]${gpuNote}` : g ? `  gpu  failed: ${errorOf(g)}` : '  gpu  not available',
  ];
}

export interface Verdict { identical: boolean | null; text: string; className: '' | 'same' | 'differ' }

/** GPU against CPU where both ran (by the operation's own comparison), else why not. */
export function verdictOf(gpuOut: Image | undefined, cpuOut: Image | undefined, compare: (cpu: Image, gpu: Image) => Comparison = compareImages): Verdict {
  if (gpuOut && cpuOut) {
    const cmp = compare(cpuOut, gpuOut);
    return { identical: cmp.identical, text: describeComparison(cmp), className: cmp.identical ? 'same' : 'differ' };
  }
  return { identical: null, text: gpuOut ?? cpuOut ? 'one path only (see the timings)' : 'the operation failed (see the timings)', className: '' };
}

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
  verdict: Omit<Verdict, 'identical'>;
}

/**
 * Runs `name` on both paths. No size check first: past the adapter's binding limit the operations split the work
 * (ranges, slabs; the timings say how many), and what cannot be split fails with its own message on the GPU line.
 */
export async function runBoth(name: string, img: Image, params: Record<string, unknown>, files: Record<string, ChosenFile>, gpu: GpuContext | undefined, cpu: ReturnType<typeof cpuRunner>): Promise<BothRun> {
  const op = OPERATIONS[name];
  const [g, c] = await Promise.all([
    gpu ? settle(op.run(img, withChosenFiles(name, params, files), { gpu, profile: true })) : Promise.resolve(undefined),
    settle(cpu(name, params, files, img)),
  ]);
  const gpuRes = valueOf(g), cpuRes = valueOf(c);
  const { identical, text, className } = verdictOf(gpuRes?.output, cpuRes?.output, (a, b) => op.compare(a, b));
  return {
    gpu: gpuRes, cpu: cpuRes, gpuError: errorOf(g), cpuError: errorOf(c), shown: gpuRes?.output ?? cpuRes?.output,
    identical, lines: timingLines(g, c, gpu), verdict: { text, className },
  };
}

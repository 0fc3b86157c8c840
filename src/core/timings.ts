/** Where one kernel's time came from. */
export type KernelTimeSource = 'timestamp' | 'wallclock' | 'cpu';

export interface KernelTime {
  name: string;
  ms: number;
}

/**
 * The time an operation took, split so that the cost of moving data is never hidden in "GPU time".
 * host: argument checking, planning, encoding and JS work; upload/download: host↔device transfers
 * (0 on the CPU path and for data already resident); kernels: per dispatch (GPU timestamp queries where
 * the adapter has them, else one wall-clock entry for all kernels); total: wall clock of the whole call.
 */
export interface Timings {
  backend: 'cpu' | 'gpu';
  host: number;
  upload: number;
  kernels: KernelTime[];
  kernelSource: KernelTimeSource;
  download: number;
  total: number;
  /** Number of slabs a volume was split into to fit the device's limits (1 when it fitted whole). */
  slabs?: number;
}

export const now: () => number = () => performance.now();

/** Sum of kernel times. */
export function kernelTotal(t: Timings): number {
  return t.kernels.reduce((a, k) => a + k.ms, 0);
}

/**
 * Builds Timings from phase durations so that total = host + upload + kernels + download: host is what the
 * wall clock leaves once transfers and kernel times are removed (JS work, encoding, submission and waiting).
 */
export function makeTimings(parts: Omit<Timings, 'host'>): Timings {
  const host = Math.max(0, parts.total - parts.upload - parts.download - kernelTotal(parts as Timings));
  return { ...parts, host };
}

/**
 * Sets total to the wall clock since `t0` and host to what the measured phases leave of it — for operations
 * that wrap other timed work (validation, gray conversion, composed steps count as host time).
 */
export function closeTimings(t: Timings, t0: number): Timings {
  const total = now() - t0;
  return { ...t, total, host: Math.max(0, total - t.upload - t.download - kernelTotal(t)) };
}

/**
 * Several runs' timings as one (each channel of a colour image filtered alone): phases summed, kernels of the same
 * name summed; `total` (and host) closed by the caller around the whole.
 */
export function sumTimings(ts: Timings[]): Timings {
  const kernels: KernelTime[] = [];
  for (const k of ts.flatMap((t) => t.kernels)) {
    const e = kernels.find((x) => x.name === k.name);
    if (e) e.ms += k.ms;
    else kernels.push({ ...k });
  }
  const sum = (f: 'host' | 'upload' | 'download' | 'total') => ts.reduce((a, t) => a + t[f], 0);
  return { ...ts[0], host: sum('host'), upload: sum('upload'), download: sum('download'), total: sum('total'), kernels };
}

/** The result of every operation: its output and the time it took. */
export interface OpResult<T> {
  output: T;
  timings: Timings;
  /** Set when the output is a view of mapped GPU memory (`view: true`): call it when done with the pixels. */
  release?: () => void;
}

const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 0.1 ? x.toFixed(2) : x.toFixed(4));

/** One line per path (the CLI's and the playground's timing report): total and its split, then the kernels. */
export function formatTimings(label: string, t: Timings): string {
  const parts = [`host ${ms(t.host)}`];
  if (t.backend === 'gpu') parts.push(`upload ${ms(t.upload)}`);
  parts.push(`kernels ${ms(kernelTotal(t))}${t.kernelSource === 'wallclock' ? ' (wall clock)' : ''}`);
  if (t.backend === 'gpu') parts.push(`download ${ms(t.download)}`);
  const kernels = t.kernels.length > 1 || t.backend === 'gpu' ? `\n      ${t.kernels.map((k) => `${k.name} ${ms(k.ms)}`).join(', ')}` : '';
  const slabs = t.slabs && t.slabs > 1 ? `, ${t.slabs} slabs` : '';
  return `  ${label.padEnd(4)} total ${ms(t.total)} ms = ${parts.join(' + ')}${slabs}${kernels}`;
}

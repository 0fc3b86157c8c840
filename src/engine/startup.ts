/**
 * Where a command's first milliseconds go (issue 40 item 5): points of the process's life, each in milliseconds
 * since the process started (`performance.now()` counts from Node's time origin, the process start), so what a user
 * waits for before any pixel is processed can be read off `--json` (`startup_ms` and `startup`) without a profiler.
 */

/** The points a command marks; those it never reaches are left out of the report. */
export type StartupPoint =
  /** Node's own bootstrap finished (from Node; not marked). */
  | 'node'
  /** The CLI's modules are loaded and its main function runs. */
  | 'modules'
  /** The input is read and decoded (it is read while the device is created). */
  | 'read'
  /** The GPU device (or, with --device cpu, the CPU pool) is ready. */
  | 'device'
  /** The operation has run (its shaders compiled on first use). */
  | 'op'
  /** The output is written. */
  | 'written';

const points = new Map<StartupPoint, number>();

/** Records that the process reached `point` now (the first time only: a --repeat or a batch marks once). */
export function markStartup(point: StartupPoint): void {
  if (!points.has(point)) points.set(point, performance.now());
}

/** Node's bootstrap time, where the runtime reports it (Node's performance.nodeTiming; absent in browsers). */
function nodeBootstrap(): number | undefined {
  const timing = (performance as Performance & { nodeTiming?: { bootstrapComplete?: number } }).nodeTiming;
  return timing?.bootstrapComplete;
}

/** Rounded to 0.1 ms: the figures are wall-clock points, not profiles. */
const tenth = (ms: number) => Math.round(ms * 10) / 10;

/**
 * `startup_ms`: from the process's start until the first operation could start, the device ready and the input read
 * (the later of the two; a batch marks only its device); and `startup`: every point reached, in ms since the process
 * started, in the order reached.
 */
export function startupReport(): { startup_ms: number | null; startup: Record<string, number> } {
  const all: [string, number][] = [...points.entries()];
  const boot = nodeBootstrap();
  if (boot !== undefined) all.push(['node', boot]);
  all.sort((a, b) => a[1] - b[1]);
  const device = points.get('device');
  const ready = device === undefined ? undefined : Math.max(device, points.get('read') ?? 0);
  return { startup_ms: ready === undefined ? null : tenth(ready), startup: Object.fromEntries(all.map(([k, v]) => [k, tenth(v)])) };
}

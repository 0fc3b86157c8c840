/**
 * What the long fuzz runs (bench/fuzz-jpeg.ts, bench/fuzz-formats.ts) share: their flags, their loop over the cases in
 * chunks, and their report (printed as one JSON object; exit 1 if there was any violation).
 */
import { addReport, type FuzzReport } from '../test/fuzz/jpeg-differential.js';

/** `--name VALUE` on the command line, or `fallback` where the flag is not given. */
export function flagValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/** Whether `--name` is on the command line. */
export function hasFlag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/** The flags every long fuzz run takes. */
export interface FuzzRun {
  /** --seed: the mutations' seed. @default 39 */
  seed: number;
  /** --count: how many cases (each run says of what). */
  count: number;
  /** --first: the first case's index, to rerun a stretch of a long run. @default 0 */
  first: number;
  /** --verbose: each case named on stderr before it runs (a crash or hang then shows as the last named). */
  verbose: boolean;
}

export function fuzzRunFlags(defaultCount: number): FuzzRun {
  return {
    seed: Number(flagValue('seed', '39')),
    count: Number(flagValue('count', String(defaultCount))),
    first: Number(flagValue('first', '0')),
    verbose: hasFlag('verbose'),
  };
}

/** With --verbose, the line each case gets on stderr before it runs; otherwise none. */
export function caseLogger(run: FuzzRun): ((c: { name: string; applied: readonly string[]; source: string }) => void) | undefined {
  return run.verbose ? (c) => console.error(`${c.name}: ${c.applied.join('+')} of ${c.source}`) : undefined;
}

export type RunReport = FuzzReport & { seed: number; first: number; seconds: number };

/** An empty report of the run, to which each chunk's report is added. */
export function emptyReport(run: FuzzRun): RunReport {
  return { seed: run.seed, first: run.first, cases: 0, cv2Decoded: 0, counts: {}, violations: [], seconds: 0 };
}

/**
 * Cases `run.first` to `run.first + run.count - 1` in chunks of `size` (a chunk's corpus is on disk with its
 * references at a time): `runChunk(at, n)` runs n cases from index `at`; each chunk's counts are added to `report`.
 */
export async function addChunks(report: RunReport, run: FuzzRun, size: number, runChunk: (at: number, n: number) => Promise<FuzzReport>): Promise<void> {
  for (let at = run.first; at < run.first + run.count; at += size) addReport(report, await runChunk(at, Math.min(size, run.first + run.count - at)));
}

/** Prints the report with the seconds since `t0` as one JSON object and exits: 1 if there was any violation, else 0. */
export function printAndExit(report: RunReport, t0: number): never {
  report.seconds = Math.round((performance.now() - t0) / 100) / 10;
  console.log(JSON.stringify(report, null, 1));
  process.exit(report.violations.length ? 1 : 0);
}

/**
 * The CLI's exit codes besides those of the typed errors (core/errors.ts: 2 bad arguments, 3 files, 4 no GPU
 * adapter, 5 GPU memory or device, 6 runtime, 7 the job queue's Redis server unreachable, 70 internal): what a run that went through reports.
 */
/** Done. */
export const EXIT_OK = 0;
/** --device both: the CPU and GPU results differ (on some image or frame). */
export const EXIT_DISAGREE = 8;
/** Several inputs (a batch, a folder): some failed and are reported; the others were processed. */
export const EXIT_SOME_FAILED = 9;

/** The exit code of a run over many inputs: disagreement first, then failures. */
export function exitCodeOf(disagreed: number, failed: number): number {
  return disagreed ? EXIT_DISAGREE : failed ? EXIT_SOME_FAILED : EXIT_OK;
}

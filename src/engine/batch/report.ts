import { now } from '../../core/timings.js';
import { exitCodeOf } from '../exit.js';

// What a batch tells the user (the CLI over imgpu/batch, detection over a folder): the progress line while it runs
// and the summary at the end, with its exit code; and the merging of several runs' summaries (--jobs, staged groups).

export interface ProgressOptions {
  /** nothing on stderr (--quiet, --json) */
  quiet: boolean;
  /** what is counted: 'images' (default), 'frames' */
  unit?: string;
  /** what was done to them: 'written' (default), 'detected' */
  verb?: string;
}

/** Where a loop reports its progress: a Progress line, or a queue job's progress (scale/worker.ts). */
export interface ProgressSink {
  /** `written` images done and `failed` failed so far; `bytes` of input read; `final` once at the end. */
  update(written: number, failed: number, bytes: number, final?: boolean): void;
}

/** Progress on stderr: one updating line on a terminal, a plain line every ~2 s otherwise. */
export class Progress implements ProgressSink {
  private last = 0;
  private readonly quiet: boolean;
  private readonly unit: string;
  private readonly verb: string;

  /** `total`: undefined where it is not known ahead (a video's frames). */
  constructor(private readonly total: number | undefined, o: ProgressOptions, private readonly t0 = now()) {
    this.quiet = o.quiet;
    this.unit = o.unit ?? 'images';
    this.verb = o.verb ?? 'written';
  }

  /** `written` images done (written, or `verb`) and `failed` failed so far, of `total`; `bytes` of input read. */
  update(written: number, failed: number, bytes: number, final = false): void {
    const done = written + failed;
    if (this.quiet) return;
    const t = now();
    const tty = process.stderr.isTTY;
    if (!final && t - this.last < (tty ? 100 : 2000)) return;
    this.last = t;
    const s = (t - this.t0) / 1000;
    const rate = done / Math.max(s, 1e-3);
    const of = this.total === undefined ? '' : `/${this.total}`;
    const eta = this.total === undefined ? '' : `, ETA ${(rate > 0 ? (this.total - done) / rate : 0).toFixed(0)} s`;
    // Written, not just done: a run in which images failed must not read as complete.
    const line = `${written}${of} ${this.unit} ${this.verb}${failed ? `, ${failed} failed` : ''}, ${rate.toFixed(1)} ${this.unit}/s, ${(bytes / 1e6 / Math.max(s, 1e-3)).toFixed(1)} MB/s${final ? `, ${s.toFixed(1)} s` : eta}`;
    if (tty) process.stderr.write(`\r${line}\x1b[K${final ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  }
}


export interface BatchSummary {
  op: string;
  processed: number;
  skipped: number;
  failed: { file: string; message: string }[];
  seconds: number;
  images_per_s: number;
  phases_ms: Record<string, number>;
  busy: Record<string, number>;
  /** --device both: images on which CPU and GPU differed */
  disagreed?: number;
  /** --jobs: the processes that shared the batch */
  processes?: number;
  /** JPEG inputs read, by the path that decoded them (--jpeg): absent without JPEG inputs */
  jpeg?: Record<string, number>;
  /** Of those decoded on the GPU path, where their Huffman decoding ran ('gpu'; 'cpu' for progressive files, restart markers…) */
  huffman?: Record<string, number>;
  /** With a CPU lane (--cpu-lane): the images the GPU processed and those the lane processed whole on the CPU */
  lanes?: { gpu: number; cpu: number };
  /** --fail-on below warning: the damaged inputs decoded anyway, and what libjpeg warned of in each */
  warnings?: { file: string; warnings: readonly string[] }[];
  /** Milliseconds from the process's start until its device was ready (engine/startup.ts), where the CLI marked it */
  startup_ms?: number | null;
}

/**
 * One summary of several runs' (the processes of --jobs, the groups of a batch's staged inputs): counts and phase
 * times added up, busy fractions averaged; `seconds` the wall clock over all (default: theirs added up).
 */
export function mergeSummaries(op: string, parts: readonly BatchSummary[], seconds = parts.reduce((a, p) => a + p.seconds, 0)): BatchSummary {
  const addUp = (pick: (s: BatchSummary) => Record<string, number>, divisor = 1) => {
    const out: Record<string, number> = {};
    for (const p of parts) for (const [key, v] of Object.entries(pick(p))) out[key] = (out[key] ?? 0) + v / divisor;
    return out;
  };
  const processed = parts.reduce((a, p) => a + p.processed, 0);
  const disagreed = parts.some((p) => p.disagreed !== undefined) ? parts.reduce((a, p) => a + (p.disagreed ?? 0), 0) : undefined;
  return {
    op, processed, skipped: parts.reduce((a, p) => a + p.skipped, 0), failed: parts.flatMap((p) => p.failed), seconds,
    images_per_s: processed / Math.max(seconds, 1e-9), phases_ms: addUp((p) => p.phases_ms), busy: addUp((p) => p.busy, parts.length),
    ...(disagreed !== undefined ? { disagreed } : {}),
    ...(parts.some((p) => p.jpeg) ? { jpeg: addUp((p) => p.jpeg ?? {}) } : {}),
    ...(parts.some((p) => p.huffman) ? { huffman: addUp((p) => p.huffman ?? {}) } : {}),
    ...(parts.some((p) => p.lanes) ? { lanes: addUp((p) => p.lanes ?? {}) as BatchSummary['lanes'] } : {}),
    ...(parts.some((p) => p.warnings) ? { warnings: parts.flatMap((p) => p.warnings ?? []) } : {}),
  };
}

/** Prints a batch's summary (one JSON object, or a line) and returns its exit code. */
export function report(summary: BatchSummary, json: boolean): number {
  const { op, processed, skipped, failed, seconds, disagreed } = summary;
  if (json) console.log(JSON.stringify(summary));
  else for (const w of summary.warnings ?? []) console.error(`warning: ${w.file}: ${w.warnings.join('; ')}`);
  if (!json) console.log(`${op}: ${processed} processed, ${skipped} skipped (up to date), ${failed.length} failed, ${seconds.toFixed(1)} s (${summary.images_per_s.toFixed(1)} images/s)${summary.processes ? ` in ${summary.processes} processes` : ''}${summary.lanes ? `, ${summary.lanes.cpu} of them on the CPU beside the GPU` : ''}${disagreed !== undefined ? `, CPU and GPU ${disagreed ? `DIFFER on ${disagreed}` : 'agree on all'}` : ''}`);
  return exitCodeOf(disagreed ?? 0, failed.length);
}

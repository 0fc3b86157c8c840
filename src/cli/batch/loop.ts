import { ImgpuError } from '../../core/errors.js';
import type { Image } from '../../core/image.js';
import { now } from '../../core/timings.js';
import type { ReadOptions } from '../../io/index.js';
import type { CodecPool } from '../../node/codec-pool.js';
import { cliWording } from '../flags.js';
import type { Progress } from './report.js';

// The loop every run over many images goes through — a batch of an image command (run.ts) and detection over a
// folder (detect.ts): images come from a source, each is computed and its result kept (written, reported) behind
// the next ones, a file that fails is reported and skipped, progress is shown, a deadline stops it.

/** One input of a loop: a file (its size counts towards the bytes read). */
export interface LoopJob {
  input: string;
  bytes: number;
}

/** The next image of a source, or the error that kept it from being read (the loop reports it and goes on). */
export type Next<J> = { job: J; img: Image } | { job: J; error: Error };

/** Where a loop's images come from, in order. */
export interface ImageSource<J> {
  /** The next image; undefined at the end. */
  next(): Promise<Next<J> | undefined>;
}

/**
 * The files of `jobs` decoded by the codec workers, `window` of them read ahead of the one being processed.
 * `readMs` adds up the time of the reads (overlapping ones each counted: it may exceed the wall clock).
 */
export class FileImages<J extends LoopJob> implements ImageSource<J> {
  readMs = 0;
  private readonly reads: Promise<Image | Error>[] = [];
  private nextRead = 0;
  private taken = 0;

  constructor(private readonly codecs: CodecPool, private readonly jobs: readonly J[], private readonly opts: ReadOptions, private readonly window: number) {}

  async next(): Promise<Next<J> | undefined> {
    if (this.taken >= this.jobs.length) return undefined;
    this.fill();
    const job = this.jobs[this.taken++];
    const got = await this.reads.shift()!;
    this.fill();
    return got instanceof Error ? { job, error: got } : { job, img: got };
  }

  private fill(): void {
    while (this.reads.length < this.window && this.nextRead < this.jobs.length) this.reads.push(this.read(this.jobs[this.nextRead++]).catch((e: Error) => e));
  }

  private async read(j: J): Promise<Image> {
    const t = now();
    const img = await this.codecs.read(j.input, this.opts);
    this.readMs += now() - t;
    return img;
  }
}

/**
 * What the loop does with one image: computes (the images in flight are at most `depth`), and returns what keeps
 * the result — writes or reports it — which runs behind the next images, `window` at once. The image counts as
 * done once that has finished; an error thrown by either counts it failed.
 */
export type ImageStep<J> = (job: J, img: Image) => Promise<() => Promise<void>>;

export interface LoopOptions {
  /** images computed at once */
  depth: number;
  /** results kept (written) behind at once */
  window: number;
  progress: Progress;
  /** say each failure on stderr as it happens (false: the summary lists them, as a batch's --json does) */
  sayFailures: boolean;
  /** no image is started after this time (now()), e.g. --timeout */
  deadline?: number;
}

/** What a loop did. */
export interface LoopTally {
  processed: number;
  failed: { file: string; message: string }[];
  /** bytes of the inputs processed */
  bytes: number;
  /** time spent keeping results (overlapping ones each counted) */
  keepMs: number;
  /** the deadline stopped it before the source's end */
  stopped: boolean;
}

/** Runs `step` on every image of `source`; see ImageStep and LoopOptions. */
export async function eachImage<J extends LoopJob>(source: ImageSource<J>, step: ImageStep<J>, o: LoopOptions): Promise<LoopTally> {
  const tally: LoopTally = { processed: 0, failed: [], bytes: 0, keepMs: 0, stopped: false };
  const fail = (j: J, e: unknown) => {
    // A bad file (a typed error), or a bug met on one file: either way the run goes on and reports it.
    const message = e instanceof ImgpuError ? cliWording(e.message) : `internal error: ${(e as Error)?.message ?? e}`;
    tally.failed.push({ file: j.input, message });
    if (o.sayFailures) process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}imgpu: skipped ${j.input}: ${message}\n`);
  };
  const writes = new Set<Promise<void>>();
  async function processOne(job: J, img: Image): Promise<void> {
    try {
      const keep = await step(job, img);
      while (writes.size >= o.window) await Promise.race(writes);
      const w: Promise<void> = (async () => {
        const t = now();
        try {
          await keep();
          tally.processed++;
          tally.bytes += job.bytes;
        } catch (e) {
          fail(job, e);
        }
        tally.keepMs += now() - t;
        o.progress.update(tally.processed, tally.failed.length, tally.bytes);
      })().finally(() => writes.delete(w));
      writes.add(w);
    } catch (e) {
      fail(job, e);
    }
  }
  const running = new Set<Promise<void>>();
  for (;;) {
    if (o.deadline !== undefined && now() > o.deadline) {
      tally.stopped = true;
      break;
    }
    const got = await source.next();
    if (!got) break;
    if ('error' in got) {
      fail(got.job, got.error);
      continue;
    }
    while (running.size >= o.depth) await Promise.race(running);
    const p: Promise<void> = processOne(got.job, got.img).finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
  await Promise.all(writes);
  o.progress.update(tally.processed, tally.failed.length, tally.bytes, true);
  return tally;
}

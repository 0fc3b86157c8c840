import { ImgpuError } from '../../core/errors.js';
import type { Image } from '../../core/image.js';
import { now } from '../../core/timings.js';
import type { ReadOptions } from '../../io/index.js';
import type { CodecPool } from '../../node/codec-pool.js';
import type { VideoReader } from '../../io/video.js';
import { cliWording } from '../flags.js';
import { traced } from '../../node/trace.js';
import type { ProgressSink } from './report.js';

// The loop every run over many images goes through — a batch of an image command (run.ts) and detection over a
// folder or a video (detect.ts): images come from a source (files, a video's frames), each is computed and its result kept (written, reported) behind
// the next ones, a file that fails is reported and skipped, progress is shown, a deadline stops it.

/** One input of a loop: a file, or a video's frame (its size counts towards the bytes read). */
export interface LoopJob {
  input: string;
  bytes: number;
}

/** The next image of a source, or the error that kept it from being read (the loop reports it and goes on). */
export type Next<J, I = Image> = { job: J; img: I } | { job: J; error: Error };

/** Where a loop's images come from, in order. */
export interface ImageSource<J, I = Image> {
  /** The next image; undefined at the end. */
  next(): Promise<Next<J, I> | undefined>;
}

/** Where a source's jobs come from, one at a time: a list in order, or a batch's queue shared with its CPU lane (lane.ts). */
export interface JobQueue<J> {
  /** The next job, or undefined when none is left. */
  take(): J | undefined;
}

const isQueue = <J>(jobs: readonly J[] | JobQueue<J>): jobs is JobQueue<J> => typeof (jobs as JobQueue<J>).take === 'function';

/** The jobs of a list, in order. */
function inOrder<J>(jobs: readonly J[]): JobQueue<J> {
  let i = 0;
  return { take: () => jobs[i++] };
}

/** A read FileImages started: `ready` once it has finished (decoded or failed). */
interface PendingRead<J, I> { job: J; img: Promise<I | Error>; ready: boolean }

/**
 * The files of `jobs` decoded by the codec workers — or by `reader` where given (a batch's JPEGs decoded on the GPU,
 * --jpeg gpu) — `window` of them read ahead of the one being processed. `readMs` adds up the time of the reads
 * (overlapping ones each counted: it may exceed the wall clock).
 */
export class FileImages<J extends LoopJob, I = Image> implements ImageSource<J, I> {
  readMs = 0;
  private readonly reads: PendingRead<J, I>[] = [];
  private readonly queue: JobQueue<J>;
  private taken = 0;

  constructor(
    private readonly codecs: CodecPool, jobs: readonly J[] | JobQueue<J>, private readonly opts: ReadOptions, private readonly window: number,
    private readonly reader?: (job: J) => Promise<I>,
    /** false: all `window` reads start at once (inFlight says why they do not by default; measurements) */
    private readonly ramp = true,
    /**
     * 'input': images are taken in the jobs' order (detection prints per image in order). 'ready': the first read
     * that has finished is taken — a batch writes each image to its own file, so order does not matter to its
     * outputs, and one slow read (a 24 MP progressive JPEG's entropy decoding: 450 ms on the H200) no longer holds up
     * the reads finished behind it, whose slots in the window stay taken until then.
     */
    private readonly order: 'input' | 'ready' = 'input',
  ) {
    this.queue = isQueue(jobs) ? jobs : inOrder(jobs);
  }

  async next(): Promise<Next<J, I> | undefined> {
    this.fill();
    if (!this.reads.length) return undefined;
    let r: PendingRead<J, I> | undefined;
    // The span belongs to the image taken, known once the wait ends.
    r = await traced('wait', () => r?.job.input ?? '', async () => (r = await this.takeRead()));
    this.taken++;
    const got = await r.img;
    this.fill();
    return got instanceof Error ? { job: r.job, error: got } : { job: r.job, img: got };
  }

  /**
   * The read next() hands out, once finished, removed from `reads`: the oldest, or by `order` 'ready' the oldest
   * finished one (the first to finish when none has yet).
   */
  private async takeRead(): Promise<PendingRead<J, I>> {
    if (this.order === 'ready' && !this.reads.some((x) => x.ready)) await Promise.race(this.reads.map((x) => x.img));
    const i = this.order === 'ready' ? Math.max(0, this.reads.findIndex((x) => x.ready)) : 0;
    const [r] = this.reads.splice(i, 1);
    await r.img;
    return r;
  }

  /** Reads started and not yet taken by next(): jobs this source holds besides its queue's. */
  get ahead(): number {
    return this.reads.length;
  }

  /**
   * Reads in flight: `window`, but at first 4, then 2 more for each image taken — the first image is waited for,
   * and 16 reads started at once shared the cores with it: a GPU batch of photos largest first (a CPU lane beside
   * it) began its first image 155 ms into the run, 90 ms after its kernels were compiled (H200 trace).
   * `ramp` false starts all `window` at once (measurements).
   */
  private get inFlight(): number {
    return this.ramp ? Math.min(this.window, 4 + 2 * this.taken) : this.window;
  }

  private fill(): void {
    for (let job: J | undefined; this.reads.length < this.inFlight && (job = this.queue.take()); ) {
      const r = { job, img: this.read(job).catch((e: Error) => e), ready: false };
      void r.img.then(() => (r.ready = true));
      this.reads.push(r);
    }
  }

  /**
   * Waits for the reads still in flight (a run that ended early: a fatal error) and hands their images to `dispose`:
   * a read may be copying into mapped GPU memory off the JavaScript thread, which must be done before the caller
   * destroys the GPU context.
   */
  async drain(dispose: (img: I) => void): Promise<void> {
    for (const r of this.reads.splice(0)) {
      const got = await r.img;
      if (!(got instanceof Error)) dispose(got);
    }
  }

  private async read(j: J): Promise<I> {
    const t = now();
    const img = await traced('read', j.input, async () => (this.reader ? this.reader(j) : ((await this.codecs.read(j.input, this.opts)) as I)));
    this.readMs += now() - t;
    return img;
  }
}

/** A frame of a video: its index in the video and how long the loop waited for ffmpeg to decode it. */
export interface FrameJob extends LoopJob {
  frame: number;
  decodeMs: number;
}

/**
 * The frames of a video, or of a numbered image sequence (frames/%04d.png), decoded by ffmpeg (io/video.ts: it
 * decodes ahead in its own process), from frame `start` (earlier ones are decoded and skipped), `max` at most.
 */
export class VideoFrames implements ImageSource<FrameJob> {
  private index = 0;
  private taken = 0;

  constructor(private readonly reader: VideoReader, private readonly start = 0, private readonly max = Infinity) {}

  async next(): Promise<Next<FrameJob> | undefined> {
    while (this.taken < this.max) {
      const t = now();
      const img = await this.reader.next();
      const decodeMs = now() - t;
      if (!img) return undefined;
      const frame = this.index++;
      if (frame < this.start) continue;
      this.taken++;
      return { job: { input: this.reader.path, bytes: img.data.byteLength, frame, decodeMs }, img };
    }
    return undefined;
  }
}

/**
 * What the loop does with one image: computes (the images in flight are at most `depth`), and returns what keeps
 * the result — writes or reports it — which runs behind the next images, `window` at once. The image counts as
 * done once that has finished; an error thrown by either counts it failed.
 */
export type ImageStep<J, I = Image> = (job: J, img: I) => Promise<() => Promise<void>>;

export interface LoopOptions<J = unknown> {
  /** images computed at once */
  depth: number;
  /** results kept (written) behind at once */
  window: number;
  /**
   * Each step only starts its image's work (submits it to the GPU), and its result is completed after the next
   * image's step, before the one after: the device has the next image queued while the host reads back, groups
   * and writes this one — two images in flight, completed in order (detection's video: Detector.submitGpu).
   * `window` does not apply; meant for depth 1.
   */
  pipelined?: boolean;
  progress: ProgressSink;
  /**
   * An image that fails: 'say' reports it on stderr at once and goes on; 'count' goes on, the failure listed only
   * in the tally (a batch's --json summary); 'stop' ends the run with its error once the images in flight are
   * done (a video's frame is not a file that can be skipped).
   */
  onFailure: 'say' | 'count' | 'stop';
  /**
   * Errors that end the run as with 'stop' whatever onFailure says: they are not the image's (a queue worker's
   * lost GPU device, after which every image would fail and the job must go to another worker).
   */
  fatal?: (e: unknown) => boolean;
  /** no image is started after this time (now()), e.g. --timeout */
  deadline?: number;
  /** no image is started once this says true (a batch's AbortSignal, failFast): those in flight finish, tally.stopped */
  stop?: () => boolean;
  /** Told of each image that fails, with its error as thrown (a batch's failed events), besides onFailure. */
  failed?: (job: J, e: unknown) => void;
  /** Jobs run whole beside the loop's images (a batch's CPU lane): counted, reported and failed as they are. */
  lane?: SideLane<J>;
}

/**
 * A second consumer of a loop's jobs that runs each whole — read, computed and kept in one call — `size` at once,
 * taking its jobs from the queue the loop's source shares with it (a batch's CPU lane: lane.ts).
 */
export interface SideLane<J> {
  readonly size: number;
  /** The lane's next job, or undefined when it takes no more (none left, or better left to the loop). */
  take(): J | undefined;
  /** Reads, computes and keeps one job. */
  run(job: J): Promise<void>;
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
export async function eachImage<J extends LoopJob, I = Image>(source: ImageSource<J, I>, step: ImageStep<J, I>, o: LoopOptions<J>): Promise<LoopTally> {
  const tally: LoopTally = { processed: 0, failed: [], bytes: 0, keepMs: 0, stopped: false };
  let fatal: { error: unknown } | undefined;
  const fail = (j: J, e: unknown) => {
    if (o.onFailure === 'stop' || o.fatal?.(e)) {
      fatal ??= { error: e };
      return;
    }
    // A bad file (a typed error), or a bug met on one file: either way the run goes on and reports it.
    const message = e instanceof ImgpuError ? cliWording(e.message) : `internal error: ${(e as Error)?.message ?? e}`;
    tally.failed.push({ file: j.input, message });
    o.failed?.(j, e);
    if (o.onFailure === 'say') process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}imgpu: skipped ${j.input}: ${message}\n`);
  };
  /** Keeps one image's result (writes or reports it): the image is then done, or failed. `timed`: counted in keepMs. */
  async function keepOne(job: J, keep: () => Promise<void>, timed = true): Promise<void> {
    const t = now();
    try {
      await traced('keep', job.input, keep);
      tally.processed++;
      tally.bytes += job.bytes;
    } catch (e) {
      fail(job, e);
    }
    if (timed) tally.keepMs += now() - t;
    o.progress.update(tally.processed, tally.failed.length, tally.bytes);
  }
  /** Whether no image may be started any more: the deadline passed, or `stop` says so. */
  const stopping = () => (o.deadline !== undefined && now() > o.deadline) || o.stop?.() === true;
  const writes = new Set<Promise<void>>();
  // pipelined: the image whose step has run and whose result waits for the next image's step.
  let deferred: { job: J; keep: () => Promise<void> } | undefined;
  async function processOne(job: J, img: I): Promise<void> {
    try {
      const keep = await traced('step', job.input, () => step(job, img));
      if (o.pipelined) {
        const previous = deferred;
        deferred = { job, keep };
        if (previous) await keepOne(previous.job, previous.keep);
        return;
      }
      while (writes.size >= o.window) await Promise.race(writes);
      const w: Promise<void> = keepOne(job, keep).finally(() => writes.delete(w));
      writes.add(w);
    } catch (e) {
      fail(job, e);
    }
  }
  /** The side lane's jobs, `size` at once, until it takes no more or the run ends. */
  async function runLane(lane: SideLane<J>): Promise<void> {
    const active = new Set<Promise<void>>();
    for (;;) {
      for (let job: J | undefined; !fatal && active.size < lane.size && !stopping() && (job = lane.take()); ) {
        const j = job;
        const p: Promise<void> = keepOne(j, () => lane.run(j), false).finally(() => active.delete(p));
        active.add(p);
      }
      if (!active.size) return;
      await Promise.race(active);
    }
  }
  const laneDone = o.lane ? runLane(o.lane) : undefined;
  const running = new Set<Promise<void>>();
  while (!fatal) {
    if (stopping()) {
      tally.stopped = true;
      break;
    }
    let got: Next<J, I> | undefined;
    try {
      got = await source.next();
    } catch (e) {
      fatal = { error: e }; // the source itself failed (a video that stops decoding): what is in flight ends first
      break;
    }
    if (!got) break;
    if ('error' in got) {
      fail(got.job, got.error);
      continue;
    }
    while (running.size >= o.depth) await Promise.race(running);
    if (fatal) break; // an image in flight failed while this one was read: nothing more is started
    const p: Promise<void> = processOne(got.job, got.img).finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
  await laneDone;
  // The last image's result (pipelined), unless the run is ending with an error.
  if (deferred && !fatal) await keepOne(deferred.job, deferred.keep);
  await Promise.all(writes);
  if (fatal) throw fatal.error;
  o.progress.update(tally.processed, tally.failed.length, tally.bytes, true);
  return tally;
}

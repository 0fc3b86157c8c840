import { now } from '../../core/timings.js';
import type { JobQueue, LoopJob, SideLane } from './loop.js';

// A batch's CPU lane. On a GPU with the JPEG arithmetic on it (--jpeg gpu), a batch is bound by its main thread —
// each image costs it the same few milliseconds of recording and submitting whatever its size — while the cores
// sit idle: its codec workers have nothing to decode. The lane gives those cores images to process whole (read,
// the operations on the CPU, write, all on a codec worker: CodecPool.process), the smallest first, while the GPU
// takes the largest first: a small image costs the CPU little and the main thread as much as a large one. The two
// paths give the same bytes (each equals OpenCV's), so which one ran an image changes nothing in the outputs.

/** A batch's jobs, largest file first: the GPU takes from the front, the CPU lane from the back. */
export class SplitQueue<J extends LoopJob> {
  private readonly jobs: J[];
  private head = 0;
  private tail: number;

  constructor(jobs: readonly J[]) {
    this.jobs = [...jobs].sort((a, b) => b.bytes - a.bytes);
    this.tail = this.jobs.length;
  }

  get remaining(): number {
    return this.tail - this.head;
  }

  /** The GPU's side. */
  readonly largest: JobQueue<J> = { take: () => (this.head < this.tail ? this.jobs[this.head++] : undefined) };

  /** The smallest job left, not taken. */
  peekSmallest(): J | undefined {
    return this.head < this.tail ? this.jobs[this.tail - 1] : undefined;
  }

  takeSmallest(): J | undefined {
    return this.head < this.tail ? this.jobs[--this.tail] : undefined;
  }
}

/** Before any image of the lane has finished: CPU milliseconds per byte of JPEG input (a guess on the slow side). */
const PRIOR_CPU_MS_PER_BYTE = 60e-6;
/** Before the GPU has finished a few images: its milliseconds per image. */
const PRIOR_GPU_MS_PER_IMAGE = 5;

/**
 * The CPU lane's choice of jobs: it takes the smallest job left only while the CPU would finish it before the GPU
 * finishes the rest — each estimated from what each side has done so far in this batch (CPU milliseconds per input
 * byte, the slowest seen; the GPU's images per second since its first) — so the lane never leaves the batch waiting
 * on a large image the GPU would have done sooner, and stops on its own near the end.
 */
export class CpuLane<J extends LoopJob> implements SideLane<J> {
  /** Jobs the lane ran, and the GPU. */
  cpuImages = 0;
  gpuImages = 0;
  /** The lane's busy time, summed over its images (for the busy fraction). */
  busyMs = 0;
  private cpuMsPerByte = PRIOR_CPU_MS_PER_BYTE;
  private cpuSeen = false;
  private gpuFirst = 0;
  private gpuLast = 0;

  constructor(
    readonly size: number,
    private readonly queue: SplitQueue<J>,
    /** jobs the GPU's side already took and has not finished (its reads ahead) */
    private readonly gpuAhead: () => number,
    /**
     * runs a job whole; resolves to the milliseconds its worker spent on it (not its wait for the worker), and
     * whether it was the worker's first
     */
    private readonly runJob: (job: J) => Promise<{ ms: number; first: boolean }>,
  ) {}

  /** The GPU's milliseconds per image so far (its first images include compiling its kernels: a guess until then). */
  private gpuMsPerImage(): number {
    return this.gpuImages >= 4 ? (this.gpuLast - this.gpuFirst) / (this.gpuImages - 1) : PRIOR_GPU_MS_PER_IMAGE;
  }

  take(): J | undefined {
    const job = this.queue.peekSmallest();
    if (!job) return undefined;
    const gpuLeftMs = this.gpuMsPerImage() * (this.queue.remaining - 1 + this.gpuAhead());
    return job.bytes * this.cpuMsPerByte <= gpuLeftMs ? this.queue.takeSmallest() : undefined;
  }

  async run(job: J): Promise<void> {
    const { ms, first } = await this.runJob(job);
    this.busyMs += ms;
    this.cpuImages++;
    // A moving average of the worker's own time per byte: files differ in detail per byte, and the rate grows with
    // the load on the cores. Not a worker's start (~160 ms) nor its first image (its code compiling then: 10× the
    // time of the next on small photos).
    if (first) return;
    const rate = ms / Math.max(job.bytes, 1);
    this.cpuMsPerByte = this.cpuSeen ? 0.75 * this.cpuMsPerByte + 0.25 * rate : rate;
    this.cpuSeen = true;
  }

  /** An image the GPU's side finished (its step done), at `t` (now()). */
  gpuDone(t = now()): void {
    if (this.gpuImages++ === 0) this.gpuFirst = t;
    this.gpuLast = t;
  }
}

import { startupReport } from '../startup.js';
import { performance } from 'node:perf_hooks';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Comparison } from '../../core/compare.js';
import { FileAccessError } from '../../core/errors.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { Recording } from '../../core/gpu/recording.js';
import { KernelTimer } from '../../core/gpu/timer.js';
import { writeAtomically, type ReadOptions, type WriteOptions } from '../../io/index.js';
import type { Image, PixelArray } from '../../core/image.js';
import { kernelTotal, now, type OpResult } from '../../core/timings.js';
import { CodecPool, COLLECT_BYTES, COLLECT_IMAGES, RecycledBuffers, SharedGarbage } from '../../node/codec-pool.js';
import { BatchRecords, type OutputRecord } from '../records.js';
import { runOperation, type EngineRunOptions, type ImageOperation } from '../../core/op.js';
import { runGpuOrCpu, type Execution } from '../context.js';
import { gpuJpegEncoderHere, jpegInputOnGpu, isJpegName } from '../jpeg.js';
import { channelsRead } from '../commands.js';
import { encodeJpegGpu } from '../../node/jpeg-encode-gpu.js';
import { prepareJpegGpu, resolveJpegPath } from '../../node/jpeg-gpu.js';
import { traced } from '../../node/trace.js';
import { eachImage, FileImages, type LoopTally } from './loop.js';
import { noImages, pending, plan, prepareOutputFolder, saveRecords, type BatchOptions, type Job } from './plan.js';
import type { BatchSummary, ProgressSink } from './report.js';
import { CpuLane, SplitQueue } from './lane.js';

/** Images a batch processes at once, on the GPU or the CPU (measured: see the loop in runImages). */
export const IMAGES_IN_FLIGHT = 1;

/** Where an image was processed: the GPU, the CPU (no GPU, or its fallback), or the CPU lane beside the GPU (lane.ts). */
export type ImagePath = 'gpu' | 'cpu' | 'cpu-lane';

/** How an image was done: its path and the milliseconds from the start of its read to its output written. */
export interface ImageDone {
  path: ImagePath;
  ms: number;
}

/** Tuning of the engine (measurement knobs; the defaults are the measured best: see where each is used). */
export interface BatchTuning {
  /** images read ahead and written behind at once @default the CPU pool's size, 2–16 */
  window?: number;
  /** images processed at once @default IMAGES_IN_FLIGHT (1) */
  depth?: number;
  /** false: the `window` reads start at once rather than 4, then 2 more per image taken (FileImages.inFlight) @default true */
  readRamp?: boolean;
  /** the CPU lane's workers' nice value (Linux) @default 19 */
  laneNice?: number;
  /** codec worker threads @default the cores less two, 2–16 */
  codecThreads?: number;
  /** bytes of CPU outputs written between garbage collections in every thread (SharedGarbage) @default COLLECT_BYTES */
  collectBytes?: number;
  /** images done or failed between garbage collections in every thread, whatever their size (SharedGarbage) @default COLLECT_IMAGES */
  collectImages?: number;
}

/** What a batch tells its caller as it runs (the library prints nothing): events, and where it stops. */
export interface BatchHooks {
  /** An input up to date by the folder's records, not redone. */
  skipped?: (job: Job) => void;
  /** An image written (and recorded). */
  done?: (job: Job, how: ImageDone) => Promise<void> | void;
  /** An image that failed, with its error as thrown. */
  failed?: (job: Job, e: unknown) => void;
  /** `processed` and `failed` so far of `total` to do; `bytes` of input read. */
  progress?: (processed: number, failed: number, total: number, bytes: number) => void;
  /** No image is started once this says true (AbortSignal, failFast). */
  stop?: () => boolean;
  tuning?: BatchTuning;
  /** This run does shard `index` of `count` of a batch: image i of the plan when i mod count = index (no images is not an error). */
  shard?: { index: number; count: number };
  /** Where its outputs' records go instead of the folder's file (a batch's child process: its parent keeps them). */
  record?: (key: string, r: OutputRecord) => void;
}

/**
 * One operation over many images: every input file (a folder's images, `recursive` keeps the layout) into the
 * output folder. A file that fails is reported (hooks.failed) and skipped; outputs up to date by the folder's records (the same
 * input made them with the same recipe: records.ts) are skipped unless `overwrite`; every output is written
 * atomically (io writeImage), so an interrupted run leaves only whole files and a rerun completes the rest. Reading runs ahead of the processing and writing behind it, several images
 * at a time (runImages). The read/write phase totals add up the time of overlapping work: they may exceed the wall clock.
 * Returns the summary; `stopped` when hooks.stop ended it before its last image.
 */
export async function runBatch(name: string, cmd: ImageOperation, inputs: string[], outDir: string, params: Record<string, unknown>, exec: Execution, o: BatchOptions, hooks: BatchHooks = {}): Promise<BatchSummary & { stopped: boolean }> {
  const shard = hooks.shard;
  const jobs = (await plan(inputs, outDir, o)).filter((_, i) => !shard || i % shard.count === shard.index);
  if (jobs.length === 0 && !shard) throw noImages(inputs, o);
  await prepareOutputFolder(outDir);
  const records = await BatchRecords.open(outDir);
  // A child process reports its outputs to the parent, which keeps the records.
  const record = hooks.record ?? ((key: string, r: OutputRecord) => records.add(key, r));
  const t0 = now();
  const todo = await pending(jobs, records, o);
  const skipped = jobs.length - todo.length;
  const due = new Set(todo); // not todo.includes per job: quadratic in a folder of thousands
  if (hooks.skipped) for (const j of jobs.filter((j) => !due.has(j))) hooks.skipped(j);
  const codecs = new CodecPool(hooks.tuning?.codecThreads);
  const lane = lanePool(o, exec, hooks);
  try {
    const progress: ProgressSink = { update: (written, failed, bytes) => hooks.progress?.(written, failed, todo.length, bytes) };
    progress.update(0, 0, 0); // the total known, before the first image
    const done = await runImages({ name, cmd, params, exec, codecs, lane }, todo, {
      read: o.read, write: o.write, jpeg: o.jpeg, progress, onFailure: 'count', failed: hooks.failed, stop: hooks.stop, tuning: hooks.tuning,
      written: async (job, how) => {
        record(job.key, await BatchRecords.describe(job, o.recipe));
        await hooks.done?.(job, how);
      },
    });
    const seconds = (now() - t0) / 1000;
    const { processed, failed, phases, busy, disagreed, jpeg, huffman, lanes, warnings, stopped } = done;
    return {
      op: name, processed, skipped, failed, seconds, images_per_s: processed / Math.max(seconds, 1e-9), phases_ms: phases, busy, ...(lanes ? { lanes } : {}),
      ...(exec.cpu && exec.gpu ? { disagreed } : {}), ...(Object.keys(jpeg).length ? { jpeg } : {}), ...(Object.keys(huffman).length ? { huffman } : {}),
      ...(warnings.length ? { warnings } : {}), stopped, startup_ms: startupReport().startup_ms,
    };
  } finally {
    // After the summary's clock: terminating the lane's workers (nice 19, while the last writes finish) took 76 ms.
    await Promise.all([codecs.close(), lane?.close()]);
    if (!hooks.record) await saveRecords(records, exec.note);
  }
}

/** What runs a batch's images: the command (and its name, for messages) and its parameters as run, the devices, and the codec workers. */
export interface ImageRunner {
  name: string;
  cmd: ImageOperation;
  /** the parameters as run (engine/commands.ts paramsAsRun) */
  params: Record<string, unknown>;
  exec: Execution;
  codecs: CodecPool;
  /** Codec workers of a CPU lane beside the GPU (lane.ts), as many as it processes images at once; absent: none. */
  lane?: CodecPool;
}

export interface RunImagesOptions {
  read: ReadOptions;
  write: WriteOptions;
  /** --jpeg (BatchOptions.jpeg) */
  jpeg?: BatchOptions['jpeg'];
  progress: ProgressSink;
  /** a failed image: said on stderr at once, or only counted (eachImage's LoopOptions.onFailure) */
  onFailure: 'say' | 'count';
  /** Called once an image's output is written (a batch records it), with how it was done. */
  written(job: Job, how: ImageDone): Promise<void> | void;
  /** Told of each image that fails (LoopOptions.failed). */
  failed?: (job: Job, e: unknown) => void;
  /** No image is started once this says true (LoopOptions.stop). */
  stop?: () => boolean;
  tuning?: BatchTuning;
  /** Errors that end the run instead of failing one image (a queue worker's lost GPU device: eachImage's fatal). */
  fatal?: (e: unknown) => boolean;
}

/** What runImages did. */
export interface ImagesDone {
  processed: number;
  failed: LoopTally['failed'];
  /** --device both: images on which CPU and GPU differed */
  disagreed: number;
  phases: Record<string, number>;
  busy: Record<string, number>;
  /** JPEG inputs per decoding path ('gpu', 'cpu') */
  jpeg: Record<string, number>;
  /** JPEG inputs decoded on the GPU path, by where their Huffman decoding ran ('gpu', 'cpu') */
  huffman: Record<string, number>;
  /** With a CPU lane: the images each side processed (the GPU's, and the lane's on the CPU) */
  lanes?: { gpu: number; cpu: number };
  /** Inputs decoded through damage (--fail-on below warning), with libjpeg's warnings (BatchSummary.warnings) */
  warnings: { file: string; warnings: readonly string[] }[];
  /** o.stop ended the run before its last image */
  stopped: boolean;
}

/**
 * The images of `todo` through the command, each output written atomically: the one code path of a local batch
 * (runBatch, --jobs processes) and of a queue worker's job (scale/worker.ts).
 */
export async function runImages(runner: ImageRunner, todo: Job[], o: RunImagesOptions): Promise<ImagesDone> {
  const { cmd, params, exec, codecs, lane: laneCodecs } = runner;
  const t0 = now();
  const phases = { host: 0, upload: 0, kernels: 0, download: 0, read: 0, write: 0 };
  let disagreed = 0;
  // GPU outputs land in shared buffers reused once written: a fresh one per image cost page faults, zero-filling
  // and garbage collection on the main thread (a profile of a batch showed them beside the copy itself).
  const outputs = new RecycledBuffers(32); // enough for the images being written behind
  // --jpeg gpu: the coefficients of the photos being decoded ahead and encoded behind, in recycled host memory
  // rather than one mapped GPU buffer each (node/jpeg-gpu-decode.ts HostBuffers).
  const coefficients = new RecycledBuffers(32);
  // The CPU path's outputs and intermediates are fresh shared buffers, and every image leaves garbage in the main
  // thread's old space: collected in every thread every so many bytes or images, whichever comes first.
  const garbage = new SharedGarbage(o.tuning?.collectBytes || COLLECT_BYTES, () => {
    void exec.pool.collect?.();
    codecs.collect();
  }, o.tuning?.collectImages || COLLECT_IMAGES);
  // --jpeg resolved once for the context ('auto': the GPU's on a hardware adapter), for the reads and the writes alike.
  const jpegPath = exec.gpu ? resolveJpegPath(o.jpeg ?? 'auto', exec.gpu) : 'cpu';
  // The JPEG kernels this batch will use compile while its first photos are read, all at once (prepareJpegGpu says why).
  if (jpegPath === 'gpu' && exec.gpu && !exec.cpu) {
    const gpu = exec.gpu;
    void traced('prepare', 'jpeg kernels', () => prepareJpegGpu(gpu, { decode: todo.some((j) => isJpegName(j.input)), encode: todo.some((j) => isJpegName(j.output)) }));
  }
  // When each image's read (or the lane's work on it) started, for its done event's time.
  const started = new Map<Job, number>();
  const doneHow = (job: Job, path: ImagePath): ImageDone => {
    const ms = now() - (started.get(job) ?? t0);
    started.delete(job);
    return { path, ms };
  };
  // Output folders made so far (one mkdir per folder, not per image: each is a trip through the libuv pool).
  const made = new Set<string>();
  const ensureDir = async (d: string) => {
    if (made.has(d)) return;
    try {
      await mkdir(d, { recursive: true });
    } catch (e) {
      throw new FileAccessError(`cannot create the folder ${d}: ${(e as Error).message}`); // a file failure, not a bug
    }
    made.add(d);
  };
  // A resident input gives a resident output: read back as a view, as a host input's output comes.
  const hostView = async (r: OpResult<Image | GpuImage>): Promise<OpResult<Image>> => {
    if (!(r.output instanceof GpuImage)) return r as OpResult<Image>;
    const v = await r.output.toHostView();
    r.output.release();
    return { ...r, output: v.image, release: v.release };
  };
  const recycled = (r: OpResult<Image>): OpResult<Image> => {
    const out = r.output;
    if (!r.release) return r;
    const Ctor = out.data.constructor as new (b: SharedArrayBuffer, offset: number, length: number) => PixelArray;
    const data = new Ctor(outputs.alloc(out.data.byteLength), 0, out.data.length);
    exec.gpu!.hostCopy(new Uint8Array(data.buffer, 0, data.byteLength), new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength));
    r.release();
    return { ...r, output: { ...out, data }, release: undefined };
  };
  /**
   * jpeg 'gpu' (GPU only, a JPEG output): the command runs on the resident input (decoded on the GPU, or uploaded
   * here) and its result stays resident; an 8-bit gray or RGB result is encoded with the arithmetic on the GPU when
   * written (entropy coding on libuv's threads), anything else is downloaded and written as usual. The same bytes
   * as the other path. `keep()` is called when this function takes over the caller's resident input (it gives it back).
   */
  async function processOneResident(job: Job, input: Image | GpuImage, keep: () => void): Promise<() => Promise<void>> {
    const gpu = exec.gpu!;
    const tu = now();
    const dev = input instanceof GpuImage ? input : await GpuImage.upload(gpu, input);
    phases.upload += now() - tu;
    // The operation is recorded here and its JPEG encode after it, in one submission (one fewer a photo; each is
    // ~0.15 ms of this thread on the H200).
    // Where the work stops short of the encode's submission, rec.flush() submits what is recorded (else nothing).
    const rec = new Recording(gpu, new KernelTimer(gpu, false), 'photo', true);
    let r: OpResult<Image>;
    try {
      // Not waited for: the output stays resident, and its encode's readback waits for the kernels anyway (a wait
      // here held the JavaScript thread for every photo decoded ahead, whose work the queue runs first).
      // extras false: nothing besides the image is read back (Otsu's threshold was a wait for the GPU per photo).
      // inPlace: the decoded (or uploaded) photo is not needed after the operation, which may write over it.
      r = await traced('op', job.input, () => runOperation(cmd, dev as unknown as Image, params, { pool: exec.pool, gpu, profile: false, wait: false, extras: false, recording: rec, inPlace: true }));
    } catch (e) {
      // Nothing of the failed operation runs: it may have written over the input, which a CPU fallback then reads.
      rec.discard();
      if (dev !== input) dev.release(); // a resident input stays the caller's (a CPU fallback may read it)
      throw e;
    }
    if (!(input instanceof GpuImage)) codecs.recycle(input.data.buffer);
    const out = r.output as unknown as GpuImage;
    // Until the recording is submitted the input is still to be read: from here this function owns it (keep) and
    // gives it back once it is — or, where it is the output, once the output is written.
    keep();
    if (out !== dev) rec.afterSubmit(() => dev.release());
    phases.host += r.timings.host;
    phases.kernels += kernelTotal(r.timings);
    try {
      await ensureDir(dirname(job.output));
    } catch (e) {
      rec.flush();
      out.release();
      throw e;
    }
    if (out.dtype !== 'uint8' || (out.channels !== 1 && out.channels !== 3) || out.shape.length !== 2) {
      rec.flush();
      const host = await out.toHost();
      out.release();
      return writer(job, host, false, 'gpu');
    }
    return async () => {
      try {
        const file = await traced('encode', job.input, () => encodeJpegGpu(out, { quality: o.write.quality, async: true, host: coefficients, recording: rec }));
        try {
          await traced('write-file', job.input, () => writeAtomically(job.output, file));
        } finally {
          coefficients.give(file.buffer); // GPU entropy coding assembles the file in this recycled memory
        }
      } finally {
        rec.flush(); // where the encode failed before submitting
        out.release();
        garbage.drop();
      }
      await o.written(job, doneHow(job, 'gpu'));
    };
  }
  /** The write of an output through the codec workers (its shared buffer recycled after, for a GPU result). */
  function writer(job: Job, out: Image, recycle: boolean, path: ImagePath): () => Promise<void> {
    return async () => {
      // Images go to the codec workers (batch runs image commands only: ImageOperation).
      await codecs.write(job.output, out, o.write);
      if (recycle) outputs.give(out.data.buffer);
      garbage.drop(recycle ? 0 : out.data.byteLength);
      await o.written(job, doneHow(job, path));
    };
  }
  /**
   * Runs the command on one image (both paths with --device both) and returns the write of its output. A JPEG
   * decoded on the GPU (--jpeg gpu) comes resident: the CPU path, where it runs, gets it downloaded.
   */
  async function processOne(job: Job, input: Image | GpuImage): Promise<() => Promise<void>> {
    let resident = input instanceof GpuImage ? input : undefined;
    let host = resident ? undefined : (input as Image);
    const onHost = async () => (host ??= await (input as GpuImage).toHost());
    try {
      // Colour too: the operations convert a resident colour photo on the device (core/gpu/colour.ts).
      if (jpegPath === 'gpu' && exec.gpu && !exec.cpu && isJpegName(job.output) && gpuJpegEncoderHere(exec.note)) {
        // Work the GPU refuses (GpuLimitError, --device auto) takes the path below, which runs it on the CPU.
        const r = await runGpuOrCpu(exec, () => processOneResident(job, input, () => { resident = undefined; }), () => Promise.resolve(undefined));
        if (r.result) return r.result;
      }
      return await processImage(job, input, onHost);
    } finally {
      resident?.release();
    }
  }
  async function processImage(job: Job, img: Image | GpuImage, onHost: () => Promise<Image>): Promise<() => Promise<void>> {
    const results: Record<string, OpResult<Image>> = {};
    const on: EngineRunOptions = { pool: exec.pool };
    if (exec.cpu) results.cpu = await runOperation(cmd, await onHost(), params, on);
    // Unprofiled: the phases overlap as in production (and with the other images in flight). The output comes
    // as a view of mapped readback memory and is copied once into recycled shared memory for the encoder.
    if (exec.gpu) {
      const gpuRun = async () => recycled(await hostView(await runOperation(cmd, img as Image, params, { ...on, gpu: exec.gpu, profile: false, view: true, extras: false })));
      const r = await runGpuOrCpu(exec, gpuRun, async () => runOperation(cmd, await onHost(), params, on));
      results[r.on] = r.result;
    }
    if (results.cpu && results.gpu) {
      const c: Comparison = cmd.compare(results.cpu.output, results.gpu.output);
      if (!c.identical) disagreed++;
    }
    const r = results.gpu ?? results.cpu!;
    // The input has been consumed (uploaded, or read by the CPU passes): its buffer goes back to the decoders.
    if (!(img instanceof GpuImage) && Object.values(results).every((x) => x.output.data.buffer !== img.data.buffer)) codecs.recycle(img.data.buffer);
    phases.host += r.timings.host;
    phases.upload += r.timings.upload;
    phases.kernels += kernelTotal(r.timings);
    phases.download += r.timings.download;
    await ensureDir(dirname(job.output));
    return writer(job, r.output, !!results.gpu, results.gpu ? 'gpu' : 'cpu');
  }
  // Several images in flight on both sides of the processing: decoding and encoding run on the codec
  // workers, so `window` images are read ahead and `window` written behind.
  const window = o.tuning?.window || Math.max(2, Math.min(16, exec.pool.size));
  const colour = cmd.readsColour(params);
  // The caller keeps a gray photo gray with read.colour false (--keep-gray, keepGray).
  const read = { ...o.read, ...channelsRead(colour, o.read.colour === false) };
  // --jpeg gpu: JPEGs decoded on the GPU by the main thread (the entropy stage on libuv's threads), others as before.
  const jpegPaths: Record<string, number> = {};
  const huffmanPaths: Record<string, number> = {};
  const warned: ImagesDone['warnings'] = [];
  const noteWarnings = (file: string, warnings?: readonly string[]) => warnings?.length && warned.push({ file, warnings });
  const reader = async (j: Job): Promise<Image | GpuImage> => {
    started.set(j, now());
    const onGpu = exec.gpu ? await jpegInputOnGpu(exec.gpu, j.input, read, jpegPath, coefficients, o.read.failOn, exec.note) : undefined;
    if (isJpegName(j.input)) jpegPaths[onGpu?.jpeg ?? 'cpu'] = (jpegPaths[onGpu?.jpeg ?? 'cpu'] ?? 0) + 1;
    if (onGpu?.huffman) huffmanPaths[onGpu.huffman] = (huffmanPaths[onGpu.huffman] ?? 0) + 1;
    if (onGpu) {
      noteWarnings(j.input, onGpu.warnings);
      return onGpu.image;
    }
    const img = await codecs.read(j.input, read);
    noteWarnings(j.input, img.warnings);
    return img;
  };
  // A CPU lane beside the GPU (lane.ts): the smallest images processed whole on codec workers of its own, the GPU
  // taking the largest first.
  const queue = laneCodecs ? new SplitQueue(todo) : undefined;
  // Reads are taken as they finish, and on the GPU start largest first: the slowest decodes (the largest, progressive
  // ones) run beside the small ones' instead of ending the run alone (H200, 200 photos: the main thread's wait for
  // reads went from 2.4 s of 3.8 s to 0.6 s of 1.8 s). A CPU batch keeps the input order: sorted by size, its codec
  // workers' recycled buffers changed size class group after group (+10–13 MiB over 8,000 small images, the memory
  // test), for no measured gain.
  const order = queue?.largest ?? (exec.gpu ? new SplitQueue(todo).largest : todo);
  const source = new FileImages<Job, Image | GpuImage>(codecs, order, read, window, reader, o.tuning?.readRamp ?? true, 'ready');
  const lane = queue && laneCodecs ? new CpuLane<Job>(laneCodecs.size, queue, () => source.ahead, async (job) => {
    started.set(job, now());
    await ensureDir(dirname(job.output));
    const done = await traced('lane', job.input, () => laneCodecs.process(job.input, job.output, cmd.steps(params), read, o.write));
    if (isJpegName(job.input)) jpegPaths.cpu = (jpegPaths.cpu ?? 0) + 1;
    noteWarnings(job.input, done.warnings);
    garbage.drop(); // its pixels were the lane worker's; its promises and messages are this thread's
    await o.written(job, doneHow(job, 'cpu-lane'));
    return done;
  }) : undefined;
  const step = lane ? async (job: Job, img: Image | GpuImage) => {
    const keep = await processOne(job, img);
    lane.gpuDone();
    return keep;
  } : processOne;
  // Images processed at once (the codec workers read ahead and write behind regardless). Measured on the H100
  // (equalize, 210 photos): 1 → 62, 2 → 57, 4 → 50, 6 → 45 images/s on the GPU — Dawn's completion polling
  // on the main thread grows with the work in flight, so overlapping images' GPU phases lost; on the CPU, 1, 2
  // and 3 gave 84, 84 and 85 images/s. tuning.depth overrides both (benchmarks).
  const depth = o.tuning?.depth || IMAGES_IN_FLIGHT;
  const elu0 = performance.eventLoopUtilization();
  let tally: LoopTally;
  try {
    // A failed image's start is forgotten too (only a done one's was: a folder of damaged files grew the map).
    const failed = (job: Job, e: unknown) => {
      started.delete(job);
      garbage.drop();
      o.failed?.(job, e);
    };
    tally = await eachImage(source, step, { depth, window, progress: o.progress, onFailure: o.onFailure, fatal: o.fatal, lane, stop: o.stop, failed });
  } finally {
    await source.drain((img) => { if (img instanceof GpuImage) img.release(); });
  }
  const { processed, failed, keepMs } = tally;
  phases.read = source.readMs;
  phases.write = keepMs;
  // Busy fraction of each phase: the main thread's event-loop utilisation (it runs the operations and feeds the
  // GPU), codec phases against the codec workers' capacity — the phase nearest 1 is the one that sets the pace.
  const wall = now() - t0;
  const busy = {
    main: performance.eventLoopUtilization(elu0).utilization,
    read: phases.read / (wall * codecs.size),
    write: phases.write / (wall * codecs.size),
    ...(lane ? { lane: lane.busyMs / (wall * lane.size) } : {}),
  };
  const lanes = lane ? { gpu: processed - lane.cpuImages, cpu: lane.cpuImages } : undefined;
  return { processed, failed, disagreed, phases, busy, jpeg: jpegPaths, huffman: huffmanPaths, ...(lanes ? { lanes } : {}), warnings: warned, stopped: tally.stopped };
}

/**
 * The codec workers of a batch's CPU lane (lane.ts), as many as it processes images at once: --cpu-lane N as asked
 * where the GPU runs the command alone (not --device cpu or both). 'auto' — the default — is none: since reads are
 * taken as they finish, the GPU side alone was faster on every light operation measured (H200, 200 photos, three
 * processes each: Otsu 1.90 s against 2.08 s with the lane, equalize 1.94/2.29, gamma 2.05/2.35, the pipeline
 * 2.17/2.31; docs/throughput.md), and a lane that takes a large photo late makes the GPU wait (Otsu once 3.5 s).
 * The workers run at the lowest priority (nice 19): they take the cores the GPU's side leaves idle, not its
 * main thread's or its file reads' and writes' (tuning.laneNice overrides, for measurements).
 */
function lanePool(o: BatchOptions, exec: Execution, hooks: BatchHooks): CodecPool | undefined {
  const size = laneSize(o, exec);
  return size > 0 ? new CodecPool(size, hooks.tuning?.laneNice ?? 19) : undefined;
}

/** The CPU lane's size for a batch (lanePool says when it has one). */
export function laneSize(o: Pick<BatchOptions, 'cpuLane'>, exec: Pick<Execution, 'gpu' | 'cpu'>): number {
  const asked = o.cpuLane ?? 'auto';
  if (asked === 'auto' || !asked || !exec.gpu || exec.cpu) return 0;
  return asked;
}

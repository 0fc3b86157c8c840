import type { Comparison } from '../../core/compare.js';
import { inlinePool, type CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { Recording } from '../../core/gpu/recording.js';
import { runGpu, type DeviceResult } from '../../core/gpu/run.js';
import { KernelTimer } from '../../core/gpu/timer.js';
import { requireDtype, toGray, validateImage, type Image } from '../../core/image.js';
import { defineOp, runSteps, type InputRule, type OpOptions, type Produced } from '../../core/op.js';
import { resolveParams, type ParamSpec, type ResolvedOf } from '../../core/params.js';
import { makeTimings, now, type KernelTime, type OpResult, type Timings } from '../../core/timings.js';
import type { Classifier } from './classifier.js';
import { parseClassifierXml } from './classifier-xml.js';
import { compileClassifier, type CompiledClassifier } from './compiled.js';
import { detectCpu, type RawHit } from './cpu.js';
import { DEFAULT_DIVISORS, DETECT_IMPLS, DetectGpu, reductionSchedule, type GpuPassInfo, type ReductionSchedule } from './gpu.js';
import { clipToImage, groupRectangles, nonMaxSuppression, type Detection } from './group.js';
import { roundHalfEven } from '../../core/rounding.js';
import { pyramidLevels, windowGrid, type Level } from './pyramid.js';
import { acceptedOf, type AcceptedWindows } from './accepted.js';

export { firstStage, validateClassifier, type Classifier, type LbpFeature, type WeakClassifier } from './classifier.js';
export { groupRectangles, iou, nonMaxSuppression, type Detection } from './group.js';
export { pyramidLevels, resizeLinearExact, type Level } from './pyramid.js';
export { DEFAULT_DIVISORS, DETECT_IMPLS, type DetectImpl, type GpuPassInfo, type ReductionSchedule } from './gpu.js';
export type { RawHit } from './cpu.js';
export { acceptedOf, selectAccepted, windowAt, type AcceptedWindows } from './accepted.js';

/** The classifier: its own argument of detect() and Detector, --classifier FILE.xml on the command line (read by io). */
const classifierParam = {
  name: 'classifier', kind: 'string', doc: 'classifier XML: an OpenCV LBP cascade (e.g. lbpcascade_frontalface.xml) or a WaldBoost classifier',
  file: { prefix: '', text: ['.xml'], what: 'classifier file', load: ({ path, text }) => parseClassifierXml(text ?? '', path) },
} as const satisfies ParamSpec;

/** The detector's options, declared once: the options type, the CLI flags (kebab case: `--min-neighbors`), help and validation. */
export const detectorParams = [
  // cv2's rule (CV_Assert(scaleFactor > 1)); no upper bound: a large factor gives few levels. Factors so near 1
  // that the pyramid would pass 4096 levels are refused by pyramidLevels.
  { name: 'scale', kind: 'float', exclusiveMin: 1, default: 1.1, doc: 'scale factor between pyramid levels (cv2 scaleFactor)' },
  { name: 'minNeighbors', kind: 'int', min: 0, default: 3, doc: 'windows a group needs to be kept (cv2 minNeighbors; 0: raw windows, ungrouped)' },
  { name: 'minSize', kind: 'size', doc: 'smallest object WxH (cv2 minSize)' },
  { name: 'maxSize', kind: 'size', doc: 'largest object WxH (cv2 maxSize; default the image)' },
  { name: 'threshold', kind: 'float', doc: 'keep windows whose final sum (last stage sum for a cascade) is ≥ T (default: every accepted window)' },
  { name: 'nms', kind: 'float', min: 0, max: 1, doc: 'after grouping, suppress boxes overlapping a higher-scoring one by more than this IoU' },
  { name: 'impl', kind: 'enum', choices: DETECT_IMPLS, default: 'staged', doc: 'GPU: staged reduction kernels with compaction, or naive (a thread per window, the whole classifier)' },
  { name: 'stages', kind: 'ints', min: 1, doc: 'GPU: weak classifiers per reduction kernel, e.g. 4,12,24,40 (default: calibrated from the divisors on the first image)' },
  { name: 'divisors', kind: 'ints', min: 2, default: DEFAULT_DIVISORS, doc: 'GPU: factor by which each reduction kernel cuts the surviving windows' },
] as const satisfies readonly ParamSpec[];

/** The detect operation's parameters: the classifier and the detector's options. */
export const detectParams = [classifierParam, ...detectorParams] as const satisfies readonly ParamSpec[];

/**
 * The options of `detect(img, classifier, opts)` and `new Detector(classifier, opts)`: derived from the declaration,
 * with `gpu`, `pool` and `profile` (true: time each kernel in its own pass and wait between phases; by default the
 * kernels share one pass, as in production — core/gpu/run.ts PROFILE_BY_DEFAULT, the same for every operation).
 */
export type DetectOptions = OpOptions<typeof detectorParams>;

/** The options as checked and defaulted (the declaration's ranges, the same for the API and the CLI). */
type DetectParams = ResolvedOf<typeof detectorParams>;

export interface DetectOutput {
  /** The final boxes in input pixels (grouped unless minNeighbors is 0). */
  detections: Detection[];
  /** Accepted windows before grouping, by level, row, x. */
  hits: RawHit[];
  levels: Level[];
  /** Window positions scanned over the pyramid. */
  windows: number;
  /** A Detector made for 'accepted' (mining) only: the accepted windows as bits (its GPU path then leaves `hits` and `detections` empty). */
  accepted?: AcceptedWindows;
  /** GPU only: the schedule used, survivors after each reduction kernel and drops for want of room. */
  gpu?: GpuPassInfo & { schedule?: ReductionSchedule; rerun: boolean; calibrationMs?: number };
}

/** The boxes of accepted windows in input pixels (OpenCV: Rect(cvRound(x·f), cvRound(y·f), cvRound(24·f), …)). */
export function hitBoxes(hits: RawHit[], levels: Level[]): Detection[] {
  return hits.map((h) => {
    const l = levels[h.level];
    return { x: roundHalfEven(Math.fround(h.x * l.factor)), y: roundHalfEven(Math.fround(h.y * l.factor)), width: l.winWidth, height: l.winHeight, neighbors: 1, score: h.score };
  });
}

/** Hits → boxes → threshold → groupRectangles → clip to the image (as detectMultiScale) → optional NMS. */
export function finishDetections(hits: RawHit[], levels: Level[], W: number, H: number, o: DetectOptions): Detection[] {
  let boxes = hitBoxes(hits, levels);
  if (o.threshold !== undefined) boxes = boxes.filter((b) => b.score >= o.threshold!);
  let out = clipToImage(groupRectangles(boxes, o.minNeighbors ?? 3), W, H);
  if (o.nms !== undefined) out = nonMaxSuppression(out, o.nms);
  return out;
}

/** Whether two results hold the same accepted windows with the same sums (CPU = GPU, exactly). */
export function sameHits(a: DetectOutput, b: DetectOutput): boolean {
  if (a.hits.length !== b.hits.length) return false;
  return a.hits.every((h, i) => { const g = b.hits[i]; return h.level === g.level && h.x === g.x && h.y === g.y && h.score === g.score; });
}

/** The rank and size detection takes (the dtype and colour are the declaration's input rule). */
function checkFrame(img: { shape: readonly number[] }): void {
  if (img.shape.length !== 2) throw new InvalidArgumentError(`detect works on 2D images, got shape ${img.shape.join('×')}`);
  const [H, W] = img.shape;
  if (W > 65535 || H > 65535) throw new InvalidArgumentError(`detect: images up to 65535 pixels a side, got ${W}×${H}`);
}

/** A host frame checked as the declaration checks it (Detector's own entry points: video frames, folders). */
function checkHostFrame(img: Image | GpuImage): void {
  if (img instanceof GpuImage) img.assertLive();
  else validateImage(img);
  requireDtype(img, DETECT_INPUT.dtypes, 'detect');
  checkFrame(img);
}

/** 8-bit input as cv2.CascadeClassifier; colour is taken as it is and converted as cv2 does (CPU: toGray; GPU: in the pyramid kernel). */
const DETECT_INPUT = { dtypes: ['uint8'], colour: 'channels' } as const satisfies InputRule;

/** One frame size's GPU plan: buffers and pipelines, its readback buffers, and the reduction schedule. */
interface Plan {
  gpu: DetectGpu;
  staging: GPUBuffer;
  /** Idle readback buffers of pipelined frames: one per frame in flight, made when none is idle. */
  idle: GPUBuffer[];
  /** Set by Detector.close(): a frame completed after it destroys its readback buffer instead of keeping it. */
  closed?: boolean;
  schedule?: ReductionSchedule;
}

/** One GPU pass's result read back: accepted windows and the pass's counters. */
interface Pass {
  hits: RawHit[];
  info: GpuPassInfo;
  accepted?: AcceptedWindows;
}

/**
 * A detector for one classifier and one set of options, reused across images and video frames: the CPU
 * reference and, with a GPU, plans per frame size (buffers, pipelines and the reduction schedule, calibrated
 * on the first frame unless `stages` is given). The `detect` operation runs a detector of its own per call; the
 * checks, the timings and the GPU path (upload once, steps, readback) are the operation skeleton's.
 */
export class Detector {
  readonly compiled: CompiledClassifier;
  /** The options checked against detectParams (the declaration's ranges) and defaulted. */
  readonly params: DetectParams;
  private readonly plans = new Map<string, Plan>();

  /**
   * `output` 'accepted' (negative mining) asks for the accepted windows as bits (DetectOutput.accepted): the GPU
   * counts and marks them on the device and reads back a bit per window instead of a record per accepted window.
   */
  constructor(readonly classifier: Classifier, readonly options: DetectOptions = {}, readonly output: 'hits' | 'accepted' = 'hits') {
    this.params = resolveParams<DetectParams>('detect', detectorParams, options);
    this.compiled = compileClassifier(classifier);
  }

  levelsFor(W: number, H: number): Level[] {
    const o = this.params;
    return pyramidLevels(W, H, this.classifier.window, { scale: o.scale, minSize: o.minSize, maxSize: o.maxSize, opencvStripes: this.classifier.staged });
  }

  /** Detects on the GPU if the options name a context, else on the CPU pool. */
  run(img: Image | GpuImage): Promise<OpResult<DetectOutput>> {
    return this.options.gpu ? this.runGpu(img, this.options.gpu) : this.runCpu(img);
  }

  /** The CPU reference on a host image: gray conversion, pyramid and scan on the worker pool. */
  async runCpu(img: Image | GpuImage): Promise<OpResult<DetectOutput>> {
    if (img instanceof GpuImage) throw new InvalidArgumentError('detect on the CPU takes a host image');
    const t0 = now();
    checkHostFrame(img);
    const r = await this.scanCpu(img, this.options.pool ?? inlinePool);
    return { output: r.output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: r.kernels, kernelSource: 'cpu', total: now() - t0 }) };
  }

  /** The CPU path of a checked image (the operation's `cpu`): pyramid and scan, each timed as a kernel. */
  async scanCpu(img: Image, pool: CpuPool): Promise<Produced<DetectOutput, object> & { kernels: KernelTime[] }> {
    const gray = toGray(img);
    const [H, W] = gray.shape;
    const levels = this.levelsFor(W, H);
    const { hits, pyramidMs, scanMs } = levels.length ? await detectCpu(gray.data as Uint8Array, W, H, this.compiled, levels, pool) : { hits: [], pyramidMs: 0, scanMs: 0 };
    const detections = finishDetections(hits, levels, W, H, this.params);
    const windows = levels.reduce((a, l) => { const g = windowGrid(l); return a + g.perRow * g.rows; }, 0);
    const accepted = this.output === 'accepted' ? acceptedOf(hits, levels) : undefined;
    return { output: { detections, hits, levels, windows, accepted }, kernels: [{ name: 'detect.pyramid (cpu)', ms: pyramidMs }, { name: 'detect.scan (cpu)', ms: scanMs }] };
  }

  private async plan(ctx: GpuContext, W: number, H: number, channels: number, levels: Level[]): Promise<Plan> {
    const key = `${W}x${H}x${channels}`;
    let p = this.plans.get(key);
    if (!p) {
      if (this.plans.size >= 4) this.close(); // a folder of many sizes: keep memory bounded
      const gpu = DetectGpu.create(ctx, this.compiled, levels, W, H, channels, this.output === 'accepted');
      p = { gpu, staging: gpu.staging(), idle: [] };
      this.plans.set(key, p);
    }
    return p;
  }

  /** The GPU path: upload (unless resident), then the steps; grouping on the host. The skeleton's step runner times it. */
  async runGpu(img: Image | GpuImage, ctx: GpuContext): Promise<OpResult<DetectOutput>> {
    const t0 = now();
    checkHostFrame(img);
    const r = await runSteps<null, object, DetectOutput, never>(ctx, img, null, { profile: this.options.profile }, t0, (input, _p, o) => this.stepsGpu(input, o.profile));
    return { output: r.output, timings: r.timings };
  }

  /**
   * The GPU steps on a resident frame (the operation's `gpuSteps`): calibration of the reduction schedule on the
   * first frame of a size (its time counts as host time), the pass (pyramid, reduction kernels, one readback),
   * and, if a list or the detection buffer overflowed, the pass again with room for everything.
   */
  async stepsGpu(input: GpuImage, profile: boolean): Promise<{ output: DetectOutput; steps: Timings[] }> {
    const ctx = input.ctx;
    const [H, W] = input.shape;
    const levels = this.levelsFor(W, H);
    if (!levels.length) return { output: { detections: [], hits: [], levels, windows: 0, accepted: this.output === 'accepted' ? acceptedOf([], levels) : undefined }, steps: [] };
    const p = await this.plan(ctx, W, H, input.channels, levels);
    let calibrationMs: number | undefined;
    const naive = this.params.impl === 'naive';
    if (!naive && !p.schedule) {
      const tc = now();
      const curve = this.params.stages ? undefined : await this.calibrate(ctx, p, input);
      p.schedule = reductionSchedule(this.compiled, p.gpu.windows, this.params.divisors, this.params.stages, curve);
      calibrationMs = now() - tc;
    }
    const schedule = naive ? undefined : p.schedule;
    const first = await this.gpuPass(ctx, input, p, schedule, 'detect', profile);
    const steps = [first.timings];
    let pass = first.output;
    let rerun = false;
    if (overflowed(pass.info)) {
      // A list or the detection buffer overflowed: the result would miss windows. Redo the frame with lists as
      // large as the windows and room for every detection (the first pass counted them all).
      rerun = true;
      if (pass.info.droppedDetections > 0) p.gpu.growDetections(pass.hits.length + pass.info.droppedDetections);
      const full = schedule && { bounds: schedule.bounds, capacities: schedule.capacities.map(() => p.gpu.windows) };
      const again = await this.gpuPass(ctx, input, p, full, 'detect (buffers enlarged)', false);
      pass = { hits: again.output.hits, accepted: again.output.accepted, info: { ...again.output.info, dropped: pass.info.dropped, droppedDetections: pass.info.droppedDetections } };
      steps.push({ ...again.timings, kernels: again.timings.kernels.map((k) => ({ ...k, name: `${k.name} (redone)` })) });
    }
    return { output: this.finish(pass, levels, W, H, p, schedule, rerun, calibrationMs), steps };
  }

  private finish(pass: Pass, levels: Level[], W: number, H: number, p: Plan, schedule: ReductionSchedule | undefined, rerun: boolean, calibrationMs?: number): DetectOutput {
    const detections = finishDetections(pass.hits, levels, W, H, this.params);
    return { detections, hits: pass.hits, levels, windows: p.gpu.windows, accepted: pass.accepted, gpu: { ...pass.info, schedule, rerun, calibrationMs } };
  }

  /** One pass of a resident frame through the plan (pyramid, detection, readback), timed by runGpu. */
  private async gpuPass(ctx: GpuContext, input: GpuImage, p: Plan, schedule: ReductionSchedule | undefined, name: string, profile: boolean): Promise<OpResult<Pass>> {
    const r = await runGpu<Pass, DeviceResult<Pass>>(ctx, input, name, { profile }, async (x, rec) => {
      await p.gpu.recordFrame(rec, x.buffer, schedule, p.staging);
      return { toHost: () => p.gpu.readDetect(p.staging, schedule), release: () => undefined };
    }, { alwaysDownload: true });
    return { output: await hostPass(r.output), timings: r.timings };
  }

  /**
   * Starts a frame on the GPU (upload, record, submit) and returns the function that completes it (readback,
   * grouping). A video loop submits the next frames before completing this one, so the GPU works on them while
   * the host waits for, groups and writes this one. Any number of frames may be in flight: each has a readback
   * buffer of its own (taken from the plan's idle ones, or made), the queue runs their kernels in order, and they
   * must be completed in the order they were submitted. A frame whose lists overflowed is redone whole when
   * completed. The frame's error scope is closed when it is submitted and checked when it is completed.
   */
  async submitGpu(img: Image, ctx: GpuContext): Promise<PendingDetection> {
    const t0 = now();
    checkHostFrame(img);
    const [H, W] = img.shape;
    const levels = this.levelsFor(W, H);
    if (!levels.length || this.params.impl === 'naive') {
      const done = this.runGpu(img, ctx);
      return () => done;
    }
    const p = await this.plan(ctx, W, H, img.channels, levels);
    if (!p.schedule) return this.submitAfterCalibration(img, ctx);
    const schedule = p.schedule;
    const staging = frameStaging(p);
    // Mining ('accepted') has no use for kernel times, and reading them is a second readback per frame.
    const timer = new KernelTimer(ctx, this.output === 'hits');
    const scope = ctx.openScope('detect');
    let thrown: unknown;
    let upload = 0;
    try {
      // One command buffer: the frame's bytes from mapped upload memory into the plan's input, the kernels, the
      // copy of the results into this frame's readback buffer.
      const rec = new Recording(ctx, timer, 'detect', true);
      const tu = now();
      const { input, submitted } = await p.gpu.uploadFrame(rec, new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength));
      upload = now() - tu;
      await p.gpu.recordFrame(rec, input, schedule, staging);
      rec.submit();
      submitted();
    } catch (e) {
      thrown = e;
    }
    const checked = scope.close(thrown);
    checked.catch(() => undefined); // awaited on completion
    return async () => {
      const tw = now();
      let pass: Pass;
      try {
        await checked;
        pass = await p.gpu.readDetect(staging, schedule);
      } catch (e) {
        staging.destroy();
        timer.destroy();
        throw e;
      }
      if (p.closed) staging.destroy();
      else p.idle.push(staging);
      const download = now() - tw;
      const kernels = await timer.read();
      timer.destroy();
      if (overflowed(pass.info)) return this.runGpu(img, ctx);
      return {
        output: this.finish(pass, levels, W, H, p, schedule, false),
        timings: makeTimings({ backend: 'gpu', upload, download, kernels: kernels.length ? kernels : [{ name: 'detect (all kernels)', ms: 0 }], kernelSource: kernels.length ? 'timestamp' : 'wallclock', total: now() - t0 }),
      };
    };
  }

  /** The first frame of a size calibrates the schedule: it runs whole, and completes at once. */
  private async submitAfterCalibration(img: Image, ctx: GpuContext): Promise<PendingDetection> {
    const r = await this.runGpu(img, ctx);
    return async () => r;
  }

  /** One calibration pass on this frame: survivors after each number of weak classifiers. */
  private async calibrate(ctx: GpuContext, p: { gpu: DetectGpu; staging: GPUBuffer }, img: Image | GpuImage): Promise<number[]> {
    return ctx.scoped('detect calibration', async () => {
      const input = img instanceof GpuImage ? img : await GpuImage.upload(ctx, img);
      try {
        const rec = new Recording(ctx, new KernelTimer(ctx, false), 'detect calibration', true);
        await p.gpu.recordPyramid(rec, input.buffer);
        await p.gpu.recordCalibration(rec, p.staging);
        rec.submit();
        return await p.gpu.readCalibration(p.staging);
      } finally {
        if (input !== img) input.release();
      }
    });
  }

  /** The survivor curve of a frame (for docs and benchmarks): fraction of windows left after w weak classifiers. */
  async survivorCurve(img: Image | GpuImage): Promise<number[]> {
    const ctx = this.options.gpu;
    if (!ctx) throw new InvalidArgumentError('survivorCurve needs a GPU context');
    checkHostFrame(img);
    const [H, W] = img.shape;
    const levels = this.levelsFor(W, H);
    const p = await this.plan(ctx, W, H, img.channels, levels);
    return (await this.calibrate(ctx, p, img)).map((s) => s / p.gpu.windows);
  }

  /** Frees the GPU plans (buffers); the detector stays usable. */
  close(): void {
    for (const p of this.plans.values()) {
      p.closed = true;
      p.gpu.destroy();
      for (const b of [p.staging, ...p.idle]) b.destroy();
    }
    this.plans.clear();
  }
}

/** runGpu's output of an alwaysDownload body is the host value (its type says either). */
async function hostPass(r: Pass | DeviceResult<Pass>): Promise<Pass> {
  return 'toHost' in r ? r.toHost() : r;
}

/**
 * A readback buffer for a frame in flight: later frames overwrite the plan's buffers before this one is read, so it
 * must hold every detection the plan can (an idle one made before the detection buffer grew is replaced).
 */
function frameStaging(p: Plan): GPUBuffer {
  const idle = p.idle.pop();
  if (idle && p.gpu.holdsAll(idle)) return idle;
  idle?.destroy();
  return p.gpu.staging(true);
}

/** Whether a pass dropped candidates or detections for want of room (its result is then incomplete). */
function overflowed(info: GpuPassInfo): boolean {
  return info.droppedDetections > 0 || info.dropped.some((d) => d > 0);
}

/** A frame submitted to the GPU whose results are not read yet (see Detector.submitGpu). */
export type PendingDetection = () => Promise<OpResult<DetectOutput>>;

/** The classifier the parameters name: a Classifier object (the command line reads a path into one first). */
function classifierOf(p: { classifier?: string | Classifier }): Classifier {
  const c = p.classifier;
  if (c === undefined) throw new InvalidArgumentError('detect needs a classifier (an OpenCV LBP cascade or WaldBoost XML; e.g. lbpcascade_frontalface.xml)');
  if (typeof c === 'string') throw new InvalidArgumentError(`detect: the classifier is a path (${c}): read it first (readClassifier, or parseClassifierXml of its text)`);
  return c;
}

/** Runs `f` with a detector of its own for one call (its GPU plans freed after). */
async function withDetector<T>(p: ResolvedOf<typeof detectParams>, f: (d: Detector) => Promise<T>): Promise<T> {
  const d = new Detector(classifierOf(p), p);
  try {
    return await f(d);
  } finally {
    d.close();
  }
}

function boxText(d: Detection): string {
  return `  box x=${d.x} y=${d.y} ${d.width}×${d.height}  neighbors ${d.neighbors}  score ${d.score.toFixed(4)}`;
}

/** A detection as the JSON outputs write it (the score to float32's 7 digits). */
export function detectionJson(d: Detection) {
  return { x: d.x, y: d.y, width: d.width, height: d.height, neighbors: d.neighbors, score: Number(d.score.toPrecision(7)) };
}

/**
 * Object detection, declared once: an OpenCV LBP cascade or a WaldBoost classifier on multi-block LBP features,
 * the windows of cv2.CascadeClassifier.detectMultiScale (bit-exact pyramid, OpenCV's scan), grouped as
 * groupRectangles. `detectObjects(img, { classifier, ...options })`; the output (detections, accepted windows,
 * levels) always comes back to the host. `detect(img, classifier, options)` is the same with the classifier apart.
 */
export const detectObjects = defineOp({
  name: 'detect',
  summary: 'objects (faces, …) by an OpenCV LBP cascade or WaldBoost classifier (= cv2.CascadeClassifier.detectMultiScale)',
  params: detectParams,
  input: DETECT_INPUT,
  check: (p, img) => {
    checkFrame(img);
    classifierOf(p);
  },
  cpu: (img, p, { pool }) => withDetector(p, (d) => d.scanCpu(img, pool)),
  gpuSteps: (input, p, o) => withDetector(p, (d) => d.stepsGpu(input, o.profile)),
  alwaysDownload: true,
  compare: (a: DetectOutput, b: DetectOutput): Comparison => {
    const identical = sameHits(a, b);
    return { identical, mismatches: identical ? 0 : Math.max(a.hits.length, b.hits.length), maxAbsDiff: identical ? 0 : Infinity, firstMismatch: identical ? -1 : 0 };
  },
  report: (r) => {
    const o = r.output;
    return {
      json: { detections: o.detections.map(detectionJson), windows: o.windows, accepted: o.hits.length },
      text: [`  ${o.detections.length} detection${o.detections.length === 1 ? '' : 's'} from ${o.hits.length} accepted of ${o.windows} windows`, ...o.detections.map(boxText)],
    };
  },
});

/**
 * Detects objects in one image (see Detector for many frames): detectObjects with the classifier as an argument of
 * its own. A plain function (the declaration is `detectObjects.op`): TypeScript narrows references to callables that
 * carry properties, which in loops with assertion calls can make a result's type circular.
 */
export function detect(img: Image | GpuImage, classifier: Classifier, opts: DetectOptions = {}): Promise<OpResult<DetectOutput>> {
  return detectObjects(img, { ...opts, classifier });
}

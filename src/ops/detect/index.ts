import type { CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError, UnsupportedDtypeError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { Recording } from '../../core/gpu/recording.js';
import { runGpu } from '../../core/gpu/run.js';
import { KernelTimer } from '../../core/gpu/timer.js';
import { toGray, validateImage, type Image } from '../../core/image.js';
import type { ParamSpec, Size } from '../../core/params.js';
import { makeTimings, now, type OpResult } from '../../core/timings.js';
import { inlinePool } from '../tasks.js';
import type { Classifier } from './classifier.js';
import { compileClassifier, type CompiledClassifier } from './compiled.js';
import { detectCpu, type RawHit } from './cpu.js';
import { DEFAULT_DIVISORS, DETECT_IMPLS, DetectGpu, reductionSchedule, type DetectImpl, type GpuPassInfo, type ReductionSchedule } from './gpu.js';
import { clipToImage, groupRectangles, nonMaxSuppression, type Detection } from './group.js';
import { roundHalfEven } from '../../core/rounding.js';
import { pyramidLevels, windowGrid, type Level } from './pyramid.js';

export { firstStage, validateClassifier, type Classifier, type LbpFeature, type WeakClassifier } from './classifier.js';
export { groupRectangles, iou, nonMaxSuppression, type Detection } from './group.js';
export { pyramidLevels, resizeLinearExact, type Level } from './pyramid.js';
export { DEFAULT_DIVISORS, DETECT_IMPLS, type DetectImpl, type GpuPassInfo, type ReductionSchedule } from './gpu.js';
export type { RawHit } from './cpu.js';

/** Declared once: CLI flags, help and validation come from here. */
export const detectParams: readonly ParamSpec[] = [
  { name: 'classifier', kind: 'string', doc: 'classifier XML: an OpenCV LBP cascade (e.g. lbpcascade_frontalface.xml) or a WaldBoost classifier' },
  { name: 'scale', kind: 'float', min: 1.0001, max: 10, default: 1.1, doc: 'scale factor between pyramid levels (cv2 scaleFactor)' },
  { name: 'min-neighbors', kind: 'int', min: 0, max: 10000, default: 3, doc: 'windows a group needs to be kept (cv2 minNeighbors; 0: raw windows, ungrouped)' },
  { name: 'min-size', kind: 'size', doc: 'smallest object WxH (cv2 minSize)' },
  { name: 'max-size', kind: 'size', doc: 'largest object WxH (cv2 maxSize; default the image)' },
  { name: 'threshold', kind: 'float', doc: 'keep windows whose final sum (last stage sum for a cascade) is ≥ T (default: every accepted window)' },
  { name: 'nms', kind: 'float', min: 0, max: 1, doc: 'after grouping, suppress boxes overlapping a higher-scoring one by more than this IoU' },
  { name: 'impl', kind: 'enum', choices: DETECT_IMPLS, default: 'staged', doc: 'GPU: staged reduction kernels with compaction, or naive (a thread per window, the whole classifier)' },
  { name: 'stages', kind: 'string', doc: 'GPU: weak classifiers per reduction kernel, e.g. 4,12,24,40 (default: calibrated from --divisors on the first image)' },
  { name: 'divisors', kind: 'string', default: DEFAULT_DIVISORS.join(','), doc: 'GPU: factor by which each reduction kernel cuts the surviving windows' },
];

export interface DetectOptions {
  /** @default 1.1 */
  scale?: number;
  /** @default 3 */
  minNeighbors?: number;
  minSize?: Size;
  maxSize?: Size;
  /** Windows need a final sum ≥ threshold. */
  threshold?: number;
  /** IoU above which non-maximum suppression removes the weaker box (after grouping). */
  nms?: number;
  /** @default 'staged' */
  impl?: DetectImpl;
  /** Weak classifiers per reduction kernel (default: calibrated from `divisors`). */
  stages?: number[];
  /** @default [8, 4, 4, 4] */
  divisors?: number[];
  /** Time each kernel in its own pass (default true); false lets the kernels share one pass, as in production. */
  profile?: boolean;
  gpu?: GpuContext;
  pool?: CpuPool;
}

export interface DetectOutput {
  /** The final boxes in input pixels (grouped unless minNeighbors is 0). */
  detections: Detection[];
  /** Accepted windows before grouping, by level, row, x. */
  hits: RawHit[];
  levels: Level[];
  /** Window positions scanned over the pyramid. */
  windows: number;
  /** GPU only: the schedule used, survivors after each reduction kernel and drops for want of room. */
  gpu?: GpuPassInfo & { schedule?: ReductionSchedule; rerun: boolean; calibrationMs?: number };
}

/** "4,12,24" → [4, 12, 24] of positive integers. */
export function parseIntList(text: string | undefined, what: string): number[] | undefined {
  if (text === undefined || text === '') return undefined;
  const v = text.split(',').map((s) => Number(s.trim()));
  if (!v.length || v.some((n) => !Number.isInteger(n) || n < 1)) throw new InvalidArgumentError(`detect: --${what} needs positive integers separated by commas, got '${text}'`);
  return v;
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

function checkFrame(img: Image | GpuImage): { W: number; H: number; channels: number } {
  if (!(img instanceof GpuImage)) validateImage(img);
  if (img.shape.length !== 2) throw new InvalidArgumentError(`detect works on 2D images, got shape ${img.shape.join('×')}`);
  if (img.dtype !== 'uint8') throw new UnsupportedDtypeError(`detect needs 8-bit images (as cv2.CascadeClassifier), got ${img.dtype}`);
  const [H, W] = img.shape;
  if (W > 65535 || H > 65535) throw new InvalidArgumentError(`detect: images up to 65535 pixels a side, got ${W}×${H}`);
  return { W, H, channels: img.channels };
}

/** One frame size's GPU plan: buffers and pipelines, its readback buffers, and the reduction schedule. */
interface Plan {
  gpu: DetectGpu;
  staging: GPUBuffer;
  /** Readback buffers of pipelined frames, used in turn (two frames in flight). */
  ring: GPUBuffer[];
  next: number;
  schedule?: ReductionSchedule;
}

/**
 * A detector for one classifier and one set of options, reused across images and video frames: the CPU
 * reference and, with a GPU, plans per frame size (buffers, pipelines and the reduction schedule, calibrated
 * on the first frame unless `stages` is given).
 */
export class Detector {
  readonly compiled: CompiledClassifier;
  private readonly plans = new Map<string, Plan>();

  constructor(readonly classifier: Classifier, readonly options: DetectOptions = {}) {
    this.compiled = compileClassifier(classifier);
    parseOptions(options);
  }

  levelsFor(W: number, H: number): Level[] {
    const o = this.options;
    return pyramidLevels(W, H, this.classifier.window, { scale: o.scale ?? 1.1, minSize: o.minSize, maxSize: o.maxSize, opencvStripes: this.classifier.staged });
  }

  /** Detects on the GPU if the options name a context, else on the CPU pool. */
  run(img: Image | GpuImage): Promise<OpResult<DetectOutput>> {
    return this.options.gpu ? this.runGpu(img, this.options.gpu) : this.runCpu(img as Image);
  }

  /** The CPU reference: gray conversion, pyramid and scan on the worker pool. */
  async runCpu(img: Image): Promise<OpResult<DetectOutput>> {
    if (img instanceof GpuImage) throw new InvalidArgumentError('detect on the CPU takes a host image');
    const t0 = now();
    const { W, H } = checkFrame(img);
    const gray = toGray(img);
    const levels = this.levelsFor(W, H);
    const { hits, pyramidMs, scanMs } = levels.length ? await detectCpu(gray.data as Uint8Array, W, H, this.compiled, levels, this.options.pool ?? inlinePool) : { hits: [], pyramidMs: 0, scanMs: 0 };
    const detections = finishDetections(hits, levels, W, H, this.options);
    const total = now() - t0;
    const windows = levels.reduce((a, l) => { const g = windowGrid(l); return a + g.perRow * g.rows; }, 0);
    return {
      output: { detections, hits, levels, windows },
      timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: 'detect.pyramid (cpu)', ms: pyramidMs }, { name: 'detect.scan (cpu)', ms: scanMs }], kernelSource: 'cpu', total }),
    };
  }

  private async plan(ctx: GpuContext, W: number, H: number, channels: number, levels: Level[]) {
    const key = `${W}x${H}x${channels}`;
    let p = this.plans.get(key);
    if (!p) {
      if (this.plans.size >= 4) this.close(); // a folder of many sizes: keep memory bounded
      const gpu = DetectGpu.create(ctx, this.compiled, levels, W, H, channels);
      p = { gpu, staging: gpu.staging(), ring: [gpu.staging(), gpu.staging()], next: 0 };
      this.plans.set(key, p);
    }
    return p;
  }

  /** The GPU path: upload (unless resident), pyramid, reduction kernels, one readback; grouping on the host. */
  async runGpu(img: Image | GpuImage, ctx: GpuContext): Promise<OpResult<DetectOutput>> {
    const t0 = now();
    const { W, H, channels } = checkFrame(img);
    const levels = this.levelsFor(W, H);
    const o = this.options;
    if (!levels.length) {
      return { output: { detections: [], hits: [], levels, windows: 0 }, timings: makeTimings({ backend: 'gpu', upload: 0, download: 0, kernels: [], kernelSource: 'wallclock', total: now() - t0 }) };
    }
    const p = await this.plan(ctx, W, H, channels, levels);
    let calibrationMs: number | undefined;
    const { stages, divisors } = parseOptions(o);
    const naive = o.impl === 'naive';
    if (!naive && !p.schedule) {
      const tc = now();
      const curve = stages ? undefined : await this.calibrate(ctx, p, img);
      p.schedule = reductionSchedule(this.compiled, p.gpu.windows, divisors, stages, curve);
      calibrationMs = now() - tc;
    }
    const schedule = naive ? undefined : p.schedule;
    const r = await this.gpuPass(ctx, img, p, schedule, 'detect', o.profile ?? true);
    let pass = r.output;
    let rerun = false;
    if (overflowed(pass.info)) {
      // A list or the detection buffer overflowed: the result would miss windows. Redo the frame with lists as
      // large as the windows and room for every detection (the first pass counted them all).
      rerun = true;
      if (pass.info.droppedDetections > 0) p.gpu.growDetections(pass.hits.length + pass.info.droppedDetections);
      const full = schedule && { bounds: schedule.bounds, capacities: schedule.capacities.map(() => p.gpu.windows) };
      const again = await this.gpuPass(ctx, img, p, full, 'detect (buffers enlarged)', false);
      pass = { hits: again.output.hits, info: { ...again.output.info, dropped: pass.info.dropped, droppedDetections: pass.info.droppedDetections } };
      r.timings.kernels.push(...again.timings.kernels.map((k) => ({ ...k, name: `${k.name} (redone)` })));
    }
    const detections = finishDetections(pass.hits, levels, W, H, o);
    const timings = { ...r.timings, total: now() - t0 };
    timings.host = Math.max(0, timings.total - timings.upload - timings.download - timings.kernels.reduce((a, k) => a + k.ms, 0));
    return { output: { detections, hits: pass.hits, levels, windows: p.gpu.windows, gpu: { ...pass.info, schedule, rerun, calibrationMs } }, timings };
  }

  /** One pass of a frame through the plan (pyramid, detection, readback), timed by runGpu. */
  private async gpuPass(ctx: GpuContext, img: Image | GpuImage, p: Plan, schedule: ReductionSchedule | undefined, name: string, profile: boolean) {
    const r = await runGpu(ctx, img, name, { profile }, async (input, rec) => {
      await p.gpu.recordPyramid(rec, input.buffer);
      await p.gpu.recordDetect(rec, schedule, p.staging);
      return { toHost: () => p.gpu.readDetect(p.staging, schedule), release: () => undefined };
    }, { alwaysDownload: true });
    return { output: r.output as { hits: RawHit[]; info: GpuPassInfo }, timings: r.timings };
  }

  /**
   * Starts a frame on the GPU (upload, record, submit) and returns the function that completes it (readback,
   * grouping). A video loop submits frame k+1 before completing frame k, so the GPU works on one frame while the
   * host waits for, groups and writes the other; two frames may be in flight (each has its own readback buffer,
   * and the queue runs their kernels in order). A frame whose lists overflowed is redone whole when completed.
   */
  async submitGpu(img: Image, ctx: GpuContext): Promise<PendingDetection> {
    const t0 = now();
    const { W, H, channels } = checkFrame(img);
    const levels = this.levelsFor(W, H);
    if (!levels.length || this.options.impl === 'naive') {
      const done = this.runGpu(img, ctx);
      return () => done;
    }
    const p = await this.plan(ctx, W, H, channels, levels);
    if (!p.schedule) return this.submitAfterCalibration(img, ctx);
    const schedule = p.schedule;
    const staging = p.ring[p.next++ % p.ring.length];
    const timer = new KernelTimer(ctx, true);
    const tu = now();
    const input = await GpuImage.upload(ctx, img);
    const upload = now() - tu;
    await ctx.scoped('detect', async () => {
      const rec = new Recording(ctx, timer, 'detect', true);
      await p.gpu.recordPyramid(rec, input.buffer);
      await p.gpu.recordDetect(rec, schedule, staging);
      rec.submit();
    });
    return async () => {
      const tw = now();
      let pass: { hits: RawHit[]; info: GpuPassInfo };
      try {
        pass = await p.gpu.readDetect(staging, schedule);
      } finally {
        input.release();
      }
      const download = now() - tw;
      const kernels = await timer.read();
      timer.destroy();
      if (overflowed(pass.info)) return this.runGpu(img, ctx);
      const detections = finishDetections(pass.hits, levels, W, H, this.options);
      return {
        output: { detections, hits: pass.hits, levels, windows: p.gpu.windows, gpu: { ...pass.info, schedule, rerun: false } },
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
    const { W, H, channels } = checkFrame(img);
    const levels = this.levelsFor(W, H);
    const p = await this.plan(ctx, W, H, channels, levels);
    return (await this.calibrate(ctx, p, img)).map((s) => s / p.gpu.windows);
  }

  /** Frees the GPU plans (buffers); the detector stays usable. */
  close(): void {
    for (const p of this.plans.values()) {
      p.gpu.destroy();
      for (const b of [p.staging, ...p.ring]) b.destroy();
    }
    this.plans.clear();
  }
}

/** Whether a pass dropped candidates or detections for want of room (its result is then incomplete). */
function overflowed(info: GpuPassInfo): boolean {
  return info.droppedDetections > 0 || info.dropped.some((d) => d > 0);
}

/** A frame submitted to the GPU whose results are not read yet (see Detector.submitGpu). */
export type PendingDetection = () => Promise<OpResult<DetectOutput>>;

function parseOptions(o: DetectOptions): { stages?: number[]; divisors: number[] } {
  if (o.scale !== undefined && !(o.scale > 1)) throw new InvalidArgumentError(`detect: the scale factor must be > 1, got ${o.scale}`);
  if (o.minNeighbors !== undefined && (!Number.isInteger(o.minNeighbors) || o.minNeighbors < 0)) throw new InvalidArgumentError('detect: minNeighbors must be an integer ≥ 0');
  for (const [k, v] of [['stages', o.stages], ['divisors', o.divisors]] as const) {
    if (v && (!v.length || v.some((n) => !Number.isInteger(n) || n < 1))) throw new InvalidArgumentError(`detect: ${k} must be positive integers`);
  }
  if (o.divisors?.some((d) => d < 2)) throw new InvalidArgumentError('detect: divisors must be ≥ 2');
  return { stages: o.stages, divisors: o.divisors ?? [...DEFAULT_DIVISORS] };
}

/** Detects objects in one image (see Detector for many frames). */
export async function detect(img: Image | GpuImage, classifier: Classifier, opts: DetectOptions = {}): Promise<OpResult<DetectOutput>> {
  const d = new Detector(classifier, opts);
  try {
    return await d.run(img);
  } finally {
    d.close();
  }
}

import { GpuDeviceLostError, InvalidArgumentError, optionRef } from '../../core/errors.js';
import { deviceBytes } from '../../core/gpu/transfer.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { grid1d } from '../../core/gpu/dispatch.js';
import { createBindGroup, type Bindings, type Recording } from '../../core/gpu/recording.js';
import { fixedWords, type CompiledClassifier } from './compiled.js';
import { bakedEvaluation, COUNTERS, detectWgsl, LEVEL_FIELDS, LEVEL_WORDS, MAX_LISTS, WEAK_WORDS } from './detect.wgsl.js';
import { linearCoefficients, windowGrid, type Level } from './pyramid.js';
import type { RawHit } from './cpu.js';
import { acceptedWords, type AcceptedWindows } from './accepted.js';

export const DETECT_IMPLS = ['staged', 'naive'] as const;
/** staged: the reduction kernels with compaction (Herout et al.); naive: one thread per window, all weak classifiers. */
export type DetectImpl = (typeof DETECT_IMPLS)[number];

/** The default survivor divisors of the reduction kernels (overall 1/512 of the windows reach the final kernel). */
export const DEFAULT_DIVISORS: readonly number[] = [8, 4, 4, 4];

export interface ReductionSchedule {
  /** Weak classifiers evaluated before each synchronization: kernel j evaluates [bounds[j−1], bounds[j]). */
  bounds: number[];
  /** Capacity of each compacted list (candidates that do not fit are counted as dropped). */
  capacities: number[];
}

/** What one GPU detection pass reports besides its hits. */
export interface GpuPassInfo {
  /** Candidates in each list after each reduction kernel. */
  survivors: number[];
  /** Candidates each reduction kernel dropped because its list was full (0 means exact). */
  dropped: number[];
  /** Detections dropped because the detection buffer was full. */
  droppedDetections: number;
}

/** Survivors after w weak classifiers, from a calibration's rejection counts (index: w = 0..count). */
export function survivorCurve(total: number, live: number, hist: Uint32Array, first: number, staged: boolean): number[] {
  const n = hist.length;
  const s = new Array<number>(n + 1);
  let left = total;
  s[0] = total;
  for (let w = 1; w <= n; w++) {
    if (staged && w === first) left = live; // after stage 0: the windows OpenCV's scan evaluates that passed it
    else left -= hist[w - 1];
    s[w] = left;
  }
  return s;
}

/**
 * The reduction schedule: explicit per-kernel weak classifier counts (`stages`), or the smallest counts that
 * bring the survivors down by each divisor in turn on the calibration curve. Capacities are twice the
 * divisors' target (and never below 4096 or above the number of windows).
 */
export function reductionSchedule(cc: CompiledClassifier, total: number, divisors: readonly number[], stages?: readonly number[], curve?: number[]): ReductionSchedule {
  if (divisors.length > MAX_LISTS) throw new InvalidArgumentError(`detect: at most ${MAX_LISTS} divisors`);
  // The first reduction kernel evaluates at least one weak classifier past stage 0 (its own kernel).
  const min0 = Math.min(cc.count, (cc.staged && cc.firstStage < cc.count ? cc.firstStage : 0) + 1);
  const bounds: number[] = [];
  if (stages) {
    if (stages.length > MAX_LISTS) throw new InvalidArgumentError(`detect: at most ${MAX_LISTS} stages`);
    let b = 0;
    for (const n of stages) {
      b = Math.min(cc.count, Math.max(b + n, bounds.length ? b + 1 : min0));
      bounds.push(b);
      if (b === cc.count) break;
    }
  } else {
    let target = total, w = min0;
    for (const d of divisors) {
      target /= d;
      while (w < cc.count && curve && curve[w] > target) w++;
      // The weak classifiers left after the reductions belong to the final kernel (a workgroup per candidate):
      // a reduction never runs to the end of the classifier unless the first one must.
      if (w === cc.count && bounds.length) break;
      bounds.push(w);
      if (w === cc.count) break;
      w++;
    }
  }
  let fraction = 1;
  const capacities = bounds.map((_, j) => {
    fraction /= divisors[Math.min(j, divisors.length - 1)] ?? 4;
    return Math.min(total, Math.max(4096, Math.ceil(2 * total * fraction)));
  });
  return { bounds, capacities };
}

interface PlanBuffers {
  levels: GPUBuffer;
  coefs: GPUBuffer;
  ii: GPUBuffer;
  weak: GPUBuffer;
  tables: GPUBuffer;
  mask: GPUBuffer;
  lists: GPUBuffer[];
  counters: GPUBuffer;
  dets: GPUBuffer;
  /** Bound as the unused candidate list of single-kernel passes (naive, calibration). */
  spare: GPUBuffer;
  /** Indices of the windows that pass stage 0 (staged cascades). */
  live: GPUBuffer;
  /** A plan made with marks (mining): a bit per window, set for the accepted ones. */
  accepted?: GPUBuffer;
}


/**
 * Workgroups of the final kernel, which loops over its list (H100: 132 SMs × 32 resident workgroups of 64 is
 * 4224): enough to keep the GPU full.
 */
const FINAL_GROUPS = 4096;

/** One dispatch of a frame, resolved: what recording it takes is a few encoder calls. */
interface Dispatch {
  name: string;
  pipeline: GPUComputePipeline;
  group: GPUBindGroup;
  size: [number, number];
}

/** Records dispatches in order. */
function record(rec: Recording, dispatches: Dispatch[]): void {
  for (const d of dispatches) rec.dispatch(d.name, d.pipeline, d.group, ...d.size);
}

/** A mapped upload buffer of a frame source and whether its background re-map has finished. */
interface Upload {
  buf: GPUBuffer;
  mapped: boolean;
  ready: Promise<unknown>;
}

/** Upload buffers a plan keeps at most: frames in flight plus those whose re-map Dawn has not reported yet. */
const MAX_UPLOADS = 8;

/** A readback buffer's contents, copied out of the mapping (the buffer is unmapped for its next use). */
async function mappedWords(b: GPUBuffer): Promise<Uint32Array> {
  await b.mapAsync(GPUMapMode.READ);
  const words = new Uint32Array(b.getMappedRange().slice(0));
  b.unmap();
  return words;
}

/**
 * Detections read straight after the counters in the same copy; more need a second round trip, from the plan's
 * detection buffer — which only a frame that has the plan to itself may do (a frame in flight behind it would have
 * overwritten it), so frames in flight read back into buffers that hold every detection (`staging(true)`).
 */
const DETS_PREVIEW = 4096;

/** How many detections a readback buffer has room for after the counters. */
function detectionsHeld(staging: GPUBuffer): number {
  return Math.floor((staging.size - 4 * COUNTERS.HIST) / 16);
}
const COUNTER_WORDS = COUNTERS.HIST + 4096 + 1;

/** A pass's counters: survivors and drops of each list, detections dropped. */
function passInfo(words: Uint32Array, schedule: ReductionSchedule | undefined): GpuPassInfo {
  const lists = schedule?.bounds.length ?? 0;
  return {
    survivors: Array.from(words.subarray(0, lists)),
    dropped: Array.from(words.subarray(COUNTERS.DROPPED, COUNTERS.DROPPED + lists)),
    droppedDetections: words[COUNTERS.DETS + 1],
  };
}

/** Host-side level table and sizes of the packed buffers. */
function layout(levels: Level[], W: number, H: number) {
  const table = new Uint32Array(levels.length * LEVEL_WORDS);
  const coefs: Uint32Array[] = [];
  let ii = 0, win = 0, coef = 0, mask = 0, rows = 0, blocks = 0;
  levels.forEach((l, i) => {
    const { perRow, rows: nrows } = windowGrid(l), maskStride = Math.ceil(perRow / 32);
    const colBlocks = Math.ceil(l.width / 8); // the column pass takes 8 columns per workgroup
    const f = LEVEL_FIELDS;
    const t = table.subarray(i * LEVEL_WORDS);
    t[f.iiOff] = ii; t[f.stride] = l.width + 1; t[f.width] = l.width; t[f.height] = l.height;
    t[f.step] = l.step; t[f.winStart] = win; t[f.perRow] = perRow; t[f.cxOff] = coef; t[f.cyOff] = coef + l.width;
    t[f.maskOff] = mask; t[f.maskStride] = maskStride; t[f.rowStart] = rows; t[f.blockStart] = blocks;
    coefs.push(linearCoefficients(W, l.width), linearCoefficients(H, l.height));
    ii += (l.width + 1) * (l.height + 1); win += perRow * nrows; coef += l.width + l.height; mask += nrows * maskStride; rows += l.height; blocks += colBlocks;
  });
  const coefAll = new Uint32Array(coef);
  let o = 0;
  for (const c of coefs) { coefAll.set(c, o); o += c.length; }
  return { table, coefs: coefAll, iiWords: ii, windows: win, maskWords: mask, rows, blocks };
}

/** The classifier's weak table (WEAK_WORDS per weak classifier) and responses as 64-bit fixed point. */
function classifierWords(cc: CompiledClassifier): { weak: Uint32Array; tables: Uint32Array } {
  const fixed = (v: number) => fixedWords(v, cc.fixed);
  const weak = new Uint32Array(cc.count * WEAK_WORDS), tables = new Uint32Array(cc.count * 512);
  for (let k = 0; k < cc.count; k++) {
    const [x, y, w, h] = cc.features.subarray(4 * k, 4 * k + 4);
    weak.set([x | (y << 8) | (w << 16) | (h << 24), ...fixed(cc.reject[k]), ...fixed(cc.accept[k]), cc.reset[k]], k * WEAK_WORDS);
    for (let c = 0; c < 256; c++) tables.set(fixed(cc.tables[256 * k + c]), 2 * (256 * k + c));
  }
  return { weak, tables };
}

/**
 * One detector on one device for one frame size and classifier: buffers and pipelines made once, then each
 * frame is recorded as pyramid (rows, columns) → stage 0 mask → reduction kernels with compaction, their lengths
 * read on the GPU by kernels that loop over their list → final kernel (a workgroup per candidate) → one readback.
 */
export class DetectGpu {
  private constructor(
    readonly ctx: GpuContext,
    readonly cc: CompiledClassifier,
    readonly levels: Level[],
    readonly W: number,
    readonly H: number,
    readonly channels: number,
    readonly windows: number,
    private readonly rows: number,
    private readonly blocks: number,
    private readonly buf: PlanBuffers,
    private capDets: number,
  ) {}

  private readonly pipes = new Map<string, Promise<{ pipeline: GPUComputePipeline; extra: Bindings<GPUBuffer> }>>();
  /**
   * A frame's dispatches resolved once (pipelines, bind groups, sizes), so that recording a frame is a few dozen
   * encoder calls: the pyramid's per input buffer (inputs come from a small pool and recur), the detection's per
   * schedule. Making them per frame (module keys, bind groups) was most of the host time of a video frame.
   */
  private readonly pyramids = new Map<GPUBuffer, Promise<Dispatch[]>>();
  private readonly detections = new Map<string, Promise<Dispatch[]>>();
  /** The frame's packed bytes (uploadFrame), and the mapped upload buffers they come through. */
  private input?: GPUBuffer;
  private readonly uploads: Upload[] = [];

  /** Makes room for at least `n` detections (after a pass that had more than the buffer held). */
  growDetections(n: number): void {
    if (n <= this.capDets) return;
    this.capDets = Math.min(this.windows, Math.max(n, 2 * this.capDets));
    this.buf.dets.destroy();
    this.buf.dets = this.ctx.createBuffer(16 * this.capDets, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC, 'detect detections');
    this.detections.clear(); // their bind groups hold the old buffer
  }

  /**
   * A plan for one frame size. With `marks` (mining), each pass also marks its accepted windows as bits and reads
   * back the device's count and the bits instead of the detections (readDetect's `accepted`); the detection buffer
   * then holds every window from the start, so that no frame is redone for want of room.
   */
  static create(ctx: GpuContext, cc: CompiledClassifier, levels: Level[], W: number, H: number, channels: number, marks = false): DetectGpu {
    if (cc.staged && cc.accept.subarray(0, cc.firstStage).some((a) => a !== Infinity)) {
      throw new InvalidArgumentError('detect: the GPU detector does not support early acceptance (posT) inside the first stage of a staged classifier');
    }
    if (cc.count > 4096) throw new InvalidArgumentError(`detect: ${cc.count} weak classifiers; the GPU detector takes at most 4096`);
    if (levels.length * LEVEL_WORDS * 4 > ctx.limits.maxUniformBufferBindingSize) {
      throw new InvalidArgumentError(`detect: ${levels.length} pyramid levels are more than the GPU detector's level table holds (${Math.floor(ctx.limits.maxUniformBufferBindingSize / (LEVEL_WORDS * 4))}): use a larger ${optionRef('scale')} or ${optionRef('minSize')}`);
    }
    const L = layout(levels, W, H);
    const { weak, tables } = classifierWords(cc);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const make = (bytes: number, label: string, usage = storage) => ctx.createBuffer(bytes, usage, `detect ${label}`);
    const iiBytes = 4 * L.iiWords;
    if (iiBytes > ctx.limits.maxStorageBufferBindingSize) {
      throw new InvalidArgumentError(`detect: the integral pyramid of a ${W}×${H} image needs ${(iiBytes / 2 ** 20).toFixed(0)} MiB, over this adapter's ${(ctx.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB per binding: use a larger ${optionRef('minSize')} or ${optionRef('scale')}`);
    }
    const capDets = marks ? L.windows : Math.min(L.windows, Math.max(DETS_PREVIEW, Math.ceil(L.windows / 64)));
    const put = (b: GPUBuffer, data: Uint32Array) => { ctx.device.queue.writeBuffer(b, 0, data as Uint32Array<ArrayBuffer>); return b; };
    const buf: PlanBuffers = {
      levels: put(make(L.table.byteLength, 'levels', GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST), L.table),
      coefs: put(make(L.coefs.byteLength, 'resize coefficients'), L.coefs),
      ii: make(iiBytes, 'integral pyramid'),
      weak: put(make(weak.byteLength, 'weak classifiers'), weak),
      tables: put(make(tables.byteLength, 'responses'), tables),
      mask: make(4 * L.maskWords, 'stage-0 mask'),
      lists: [],
      counters: make(4 * COUNTER_WORDS, 'counters'),
      dets: make(16 * capDets, 'detections'),
      spare: make(16, 'spare list'),
      live: make(cc.staged ? 4 * L.windows : 16, 'stage-0 survivors'),
      accepted: marks ? make(4 * acceptedWords(L.windows), 'accepted windows') : undefined,
    };
    return new DetectGpu(ctx, cc, levels, W, H, channels, L.windows, L.rows, L.blocks, buf, capDets);
  }

  /** Makes (or reuses) candidate lists of the schedule's capacities. */
  private listsFor(s: ReductionSchedule): GPUBuffer[] {
    s.capacities.forEach((cap, j) => {
      const have = this.buf.lists[j];
      if (!have || have.size < 16 * cap) {
        have?.destroy();
        this.buf.lists[j] = this.ctx.createBuffer(16 * cap, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, `detect list ${j}`);
        this.detections.clear(); // their bind groups hold the old list
      }
    });
    return this.buf.lists;
  }

  /**
   * A pipeline of the plan's module whose eval_range covers weak classifiers [range[0], range[1]), and the
   * bindings it needs beyond the caller's (the weak classifier records, when the range is evaluated by a loop).
   */
  private pipe(entry: string, constants: Record<string, number>, range: [number, number] = [0, 0]): Promise<{ pipeline: GPUComputePipeline; extra: Bindings<GPUBuffer> }> {
    // Cached per plan: generating and hashing the module text for every dispatch would cost milliseconds a frame.
    const key = `${entry}|${range}|${JSON.stringify(constants)}`;
    let p = this.pipes.get(key);
    if (!p) {
      p = this.makePipe(entry, constants, range);
      p.catch(() => this.pipes.delete(key));
      this.pipes.set(key, p);
    }
    return p;
  }

  private async makePipe(entry: string, constants: Record<string, number>, range: [number, number]): Promise<{ pipeline: GPUComputePipeline; extra: Bindings<GPUBuffer> }> {
    const c = this.cc;
    const ev = bakedEvaluation(c, range[0], range[1]);
    const pipeline = await this.ctx.pipeline('detect', detectWgsl(this.levels.length, ev.code), entry, {
      COUNT: c.count, FIRST: c.firstStage, STAGED: c.staged ? 1 : 0, NLEVELS: this.levels.length, SRC_W: this.W, SRC_H: this.H, CHANNELS: this.channels, ...constants,
    });
    return { pipeline, extra: ev.usesWeak ? { weak: this.buf.weak } : {} };
  }

  /** A dispatch of `entry` over `buffers`, of `size` workgroups. */
  private async dispatch(name: string, entry: string, constants: Record<string, number>, range: [number, number] | undefined, buffers: Bindings<GPUBuffer>, size: [number, number]): Promise<Dispatch> {
    const { pipeline, extra } = await this.pipe(entry, constants, range);
    return { name, pipeline, group: createBindGroup(this.ctx, name, pipeline, { ...buffers, ...extra }), size };
  }

  private groups(n: number, per: number): [number, number] {
    return grid1d(this.ctx, Math.ceil(n / per));
  }

  /**
   * Where the first window kernel starts: after stage 0 (whose results the mask holds), unless the cascade is
   * stage 0 alone — then it evaluates it again to have the final sums.
   */
  private firstKernelStart(): number {
    const c = this.cc;
    return c.staged && c.firstStage < c.count ? c.firstStage : 0;
  }

  /** The integral pyramid's dispatches for input `src` (the input's packed bytes), made once per input buffer. */
  private pyramidDispatches(src: GPUBuffer): Promise<Dispatch[]> {
    let d = this.pyramids.get(src);
    if (!d) {
      if (this.pyramids.size >= 16) this.pyramids.clear(); // inputs come from a pool; keep the cache bounded
      const b = this.buf;
      d = Promise.all([
        this.dispatch('detect.pyramid rows (resize + row sums)', 'integral_rows', { TOTAL: this.rows }, undefined, { src, levels: b.levels, coefs: b.coefs, ii: b.ii }, this.groups(this.rows, 1)),
        this.dispatch('detect.pyramid columns', 'integral_cols', { TOTAL: this.blocks }, undefined, { levels: b.levels, ii: b.ii }, this.groups(this.blocks, 1)),
      ]);
      d.catch(() => this.pyramids.delete(src));
      this.pyramids.set(src, d);
    }
    return d;
  }

  private stage0(calibrate: boolean): Promise<Dispatch> {
    const b = this.buf;
    return this.dispatch(`detect.stage 0 (weak 1–${this.cc.firstStage})`, 'stage0', { TOTAL: this.windows, CALIBRATE: calibrate ? 1 : 0 }, [0, this.cc.firstStage],
      { levels: b.levels, ii: b.ii, tables: b.tables, mask: b.mask, counters: b.counters, live: b.live }, this.groups(this.windows, 64));
  }

  /** How the window kernel is sized: a thread per window (for a staged cascade, those past the stage-0 survivors' count idle). */
  private windowSize(): [number, number] {
    return this.groups(this.windows, 64);
  }

  /** The detection's dispatches for a schedule (none: the naive single kernel), made once per schedule. */
  private detectDispatches(schedule: ReductionSchedule | undefined): Promise<Dispatch[]> {
    const key = schedule ? `${schedule.bounds}|${schedule.capacities}` : 'naive';
    if (schedule) this.listsFor(schedule); // may replace lists (and drop the dispatches made with them)
    let d = this.detections.get(key);
    if (!d) {
      d = this.makeDetectDispatches(schedule);
      d.catch(() => this.detections.delete(key));
      this.detections.set(key, d);
    }
    return d;
  }

  private async makeDetectDispatches(schedule: ReductionSchedule | undefined): Promise<Dispatch[]> {
    const b = this.buf, cc = this.cc;
    // The buffers as they are now (before any await): a later listsFor or growDetections replaces them and drops
    // this entry of the cache.
    const bounds = schedule?.bounds ?? [cc.count];
    const caps = schedule?.capacities ?? [1];
    const lists = schedule ? [...b.lists] : [b.spare];
    const common = { levels: b.levels, ii: b.ii, tables: b.tables, counters: b.counters, dets: b.dets };
    const base = { COUNT: cc.count, CAP_DETS: this.capDets };
    const out: Dispatch[] = [];
    const first = this.firstKernelStart();
    if (cc.staged) out.push(await this.stage0(false));
    out.push(await this.dispatch(schedule ? `detect.reduce 1 (weak ${first + 1}–${bounds[0]})` : `detect.naive (weak ${first + 1}–${cc.count}, a thread per window)`,
      'windows', { ...base, TOTAL: this.windows, FROM: first, TO: bounds[0], LIST_OUT: 0, CAP_OUT: caps[0] }, [first, bounds[0]],
      { ...common, mask: b.mask, list_out: lists[0], live: b.live }, this.windowSize()));
    for (let j = 1; j <= bounds.length; j++) {
      const from = bounds[j - 1];
      if (from >= cc.count) break;
      const last = j === bounds.length;
      out.push(await (last
        ? this.dispatch(`detect.final (weak ${from + 1}–${cc.count}, a workgroup per candidate)`, 'final_pass', { ...base, FROM: from, LIST_IN: j - 1, CAP_IN: caps[j - 1] }, undefined,
          { ...common, weak: b.weak, list_in: lists[j - 1] }, this.groups(Math.min(caps[j - 1], FINAL_GROUPS), 1))
        : this.dispatch(`detect.reduce ${j + 1} (weak ${from + 1}–${bounds[j]})`, 'candidates', { ...base, FROM: from, TO: bounds[j], LIST_IN: j - 1, LIST_OUT: j, CAP_IN: caps[j - 1], CAP_OUT: caps[j] }, [from, bounds[j]],
          { ...common, list_in: lists[j - 1], list_out: lists[j] }, this.groups(caps[j - 1], 64))));
    }
    if (b.accepted) {
      out.push(await this.dispatch('detect.mark accepted windows', 'mark_accepted', { CAP_DETS: this.capDets }, undefined,
        { levels: b.levels, counters: b.counters, dets: b.dets, accepted: b.accepted }, this.groups(this.capDets, 64)));
    }
    return out;
  }

  /** Zeroes what a detection pass accumulates into (counters, and the stage-0 mask of a staged cascade). */
  private recordClears(rec: Recording): void {
    rec.clear(this.buf.counters);
    if (this.cc.staged) rec.clear(this.buf.mask);
    if (this.buf.accepted) rec.clear(this.buf.accepted);
  }

  /** Records the integral pyramid of `src` (the input's packed bytes). */
  async recordPyramid(rec: Recording, src: GPUBuffer): Promise<void> {
    record(rec, await this.pyramidDispatches(src));
  }

  /**
   * Records one detection pass over the pyramid already in `ii`: the staged reduction (or, with no schedule,
   * the naive single kernel), then copies counters and the first detections into `staging`.
   */
  async recordDetect(rec: Recording, schedule: ReductionSchedule | undefined, staging: GPUBuffer): Promise<void> {
    const d = await this.detectDispatches(schedule);
    this.recordClears(rec);
    record(rec, d);
    this.recordReadback(rec, staging);
  }

  /**
   * Records a whole frame: clears first, then pyramid and detection with nothing between them (one compute pass
   * when the recording fuses), then the copy of the results into `staging`.
   */
  async recordFrame(rec: Recording, src: GPUBuffer, schedule: ReductionSchedule | undefined, staging: GPUBuffer): Promise<void> {
    const [pyramid, detect] = await Promise.all([this.pyramidDispatches(src), this.detectDispatches(schedule)]);
    this.recordClears(rec);
    record(rec, pyramid);
    record(rec, detect);
    this.recordReadback(rec, staging);
  }

  private recordReadback(rec: Recording, staging: GPUBuffer): void {
    const b = this.buf;
    rec.copyRange(b.counters, 0, staging, 0, 4 * COUNTERS.HIST);
    if (b.accepted) rec.copyRange(b.accepted, 0, staging, 4 * COUNTERS.HIST, b.accepted.size);
    else rec.copyRange(b.dets, 0, staging, 4 * COUNTERS.HIST, 16 * Math.min(detectionsHeld(staging), this.capDets));
  }

  /** Records a calibration pass: every window through the whole classifier, rejections counted per weak classifier. */
  async recordCalibration(rec: Recording, staging: GPUBuffer): Promise<void> {
    const b = this.buf, cc = this.cc;
    const first = this.firstKernelStart();
    const d: Dispatch[] = cc.staged ? [await this.stage0(true)] : [];
    d.push(await this.dispatch('detect.calibrate', 'windows', { TOTAL: this.windows, FROM: first, TO: cc.count, CAP_DETS: this.capDets, CALIBRATE: 1 }, [first, cc.count],
      { levels: b.levels, ii: b.ii, tables: b.tables, mask: b.mask, list_out: b.spare, counters: b.counters, dets: b.dets, live: b.live }, this.windowSize()));
    this.recordClears(rec);
    record(rec, d);
    rec.copyRange(b.counters, 0, staging, 0, 4 * (COUNTERS.HIST + cc.count));
  }

  /**
   * Copies a host frame's bytes into one of the plan's mapped upload buffers and records their copy into the
   * plan's input buffer (returned: what recordFrame reads). The copy travels in the frame's own command buffer,
   * and the upload buffer is re-mapped in the background once it is submitted (`submitted`). With several frames
   * in flight, Dawn reports a re-map milliseconds after the GPU has done the copy: the plan keeps up to
   * MAX_UPLOADS buffers, so that a frame waits for one only when that many are pending.
   */
  async uploadFrame(rec: Recording, data: Uint8Array): Promise<{ input: GPUBuffer; submitted: () => void }> {
    const size = deviceBytes(data.byteLength);
    this.input ??= this.ctx.createBuffer(size, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, 'detect input');
    let u = this.uploads.find((x) => x.mapped);
    if (u) this.uploads.splice(this.uploads.indexOf(u), 1);
    else if (this.uploads.length >= MAX_UPLOADS) {
      u = this.uploads.shift()!;
      await u.ready;
      if (!u.mapped) throw new GpuDeviceLostError('detect: an upload buffer could not be mapped again (device lost?)');
    } else {
      const buf = this.ctx.createBuffer(size, GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, 'detect upload', true);
      u = { buf, mapped: true, ready: Promise.resolve() };
    }
    this.ctx.hostCopy(new Uint8Array(u.buf.getMappedRange(0, size), 0, data.byteLength), data);
    u.buf.unmap();
    u.mapped = false;
    rec.copy(u.buf, this.input, size);
    const up = u;
    return {
      input: this.input,
      submitted: () => {
        up.ready = up.buf.mapAsync(GPUMapMode.WRITE).then(() => { up.mapped = true; }, () => undefined);
        this.uploads.push(up);
      },
    };
  }

  /** A mappable buffer for one pass's counters and detections. */
  staging(whole = false): GPUBuffer {
    const bytes = 4 * COUNTERS.HIST + Math.max(16 * Math.max(whole ? this.capDets : DETS_PREVIEW, this.cc.count), this.buf.accepted?.size ?? 0);
    return this.ctx.createBuffer(bytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'detect readback');
  }

  /**
   * Reads a submitted pass's results from `staging` (and the rest of the detections, if there were more than it
   * holds: only when no later frame has been submitted since).
   */
  async readDetect(staging: GPUBuffer, schedule: ReductionSchedule | undefined): Promise<{ hits: RawHit[]; info: GpuPassInfo; accepted?: AcceptedWindows }> {
    const words = await mappedWords(staging);
    const info = passInfo(words, schedule);
    if (this.buf.accepted) {
      const bits = words.slice(COUNTERS.HIST, COUNTERS.HIST + this.buf.accepted.size / 4);
      return { hits: [], info, accepted: { count: words[COUNTERS.DETS], bits } };
    }
    const n = Math.min(words[COUNTERS.DETS], this.capDets);
    let dets = words.subarray(COUNTERS.HIST, COUNTERS.HIST + 4 * Math.min(n, detectionsHeld(staging)));
    if (n > detectionsHeld(staging)) {
      const more = this.ctx.createBuffer(16 * n, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'detect readback (all detections)');
      const enc = this.ctx.device.createCommandEncoder({ label: 'detect readback' });
      enc.copyBufferToBuffer(this.buf.dets, 0, more, 0, 16 * n);
      this.ctx.device.queue.submit([enc.finish()]);
      dets = await mappedWords(more);
      more.destroy();
    }
    const unit = 2 ** -this.cc.fixed.shift;
    const hits: RawHit[] = [];
    for (let i = 0; i < n; i++) {
      const [level, xy, lo, hi] = dets.subarray(4 * i, 4 * i + 4);
      // Two's complement (hi, lo) as a double: exact, the sums stay below 2^53 (classifier.ts FixedPoint).
      hits.push({ level, x: xy & 0xffff, y: xy >>> 16, score: ((hi | 0) * 4294967296 + lo) * unit });
    }
    hits.sort((a, b) => a.level - b.level || a.y - b.y || a.x - b.x);
    return { hits, info };
  }

  /** Whether `staging` holds every detection this plan's buffer can (a frame in flight must: see submitGpu). */
  holdsAll(staging: GPUBuffer): boolean {
    return detectionsHeld(staging) >= this.capDets;
  }

  /** Reads a calibration: the survivor curve over weak classifier counts 0..count. */
  async readCalibration(staging: GPUBuffer): Promise<number[]> {
    const words = await mappedWords(staging);
    const hist = words.slice(COUNTERS.HIST, COUNTERS.HIST + this.cc.count);
    return survivorCurve(this.windows, words[COUNTERS.HIST - 1], hist, this.cc.firstStage, this.cc.staged);
  }

  destroy(): void {
    for (const b of Object.values(this.buf).flat() as (GPUBuffer | undefined)[]) b?.destroy();
    this.input?.destroy();
    for (const u of this.uploads.splice(0)) u.buf.destroy();
  }
}

import { forChunks, inlinePool, type CpuPool } from '../../../core/cpu/pool.js';
import { InvalidArgumentError } from '../../../core/errors.js';
import type { GpuContext } from '../../../core/gpu/context.js';
import type { Image } from '../../../core/image.js';
import { resolveParams, type OptionsOf, type ParamSpec, type ResolvedOf } from '../../../core/params.js';
import type { Classifier, LbpFeature } from '../classifier.js';
import { integralImage, lbpCode } from '../cpu-kernels.js';
import { bestOfSplits, effectiveThreshold, stumpValue, type Split, type TrainedStage } from './boost.js';
import { trainCodesTask, trainHistogramsTask, trainSplitTask } from './cpu-kernels.js';
import { featureCodes, mbLbpFeatures, packFeatures, sampleIntegrals } from './features.js';
import { GpuStageSamples } from './gpu.js';
import { mineNegatives } from './mine.js';
import { trainStage, type HistogramBackend, type StageSamples } from './stage.js';
import { cascadeXml, paramsXml, stageXml, stagesClassifier, trainedWaldBoostXml, type CascadeParams } from './xml.js';

export { cascadeXml, paramsXml, parseStageXml, stageXml, stagesClassifier, trainedWaldBoostXml, type CascadeParams } from './xml.js';
export { mbLbpFeatures } from './features.js';
export type { Stump, TrainedStage } from './boost.js';

/**
 * Training of LBP detectors (issue 37), traincascade's algorithm: every MB-LBP feature of the window, Gentle
 * AdaBoost with categorical stumps per stage, stage thresholds from the hit rate, negatives bootstrapped per stage
 * with the cascade so far. The CPU path is the reference; the GPU computes the samples' codes and histograms and
 * mines with the staged GPU detector, and gives the same stages bit for bit (see boost.ts for why).
 */

export const TRAIN_TYPES = ['cascade', 'waldboost'] as const;
export type TrainType = (typeof TRAIN_TYPES)[number];

/** The options of trainDetector: the declared ones (trainParams) and how and where to run. */
export interface TrainOptions extends OptionsOf<typeof trainParams> {
  /** Train on this GPU (codes, histograms, the mining scan); the CPU otherwise. */
  gpu?: GpuContext;
  /** The CPU pool for the mining scan. */
  pool?: CpuPool;
  /** Stages already trained (a run continued from its stage files). */
  resume?: TrainedStage[];
  /** Called after each stage with its files' text (io writes them). */
  onStage?: (index: number, stage: TrainedStage, files: Record<string, string>) => void | Promise<void>;
  onProgress?: (p: StageProgress) => void;
}

export interface StageProgress {
  stage: number;
  /** Positives used, and how many of the pool were looked at to find them (rejected ones are skipped). */
  numPos: number;
  posConsumed: number;
  numNeg: number;
  /** Windows of the backgrounds the cascade so far accepts, over windows scanned. */
  negFound: number;
  windowsScanned: number;
  weak: number;
  hitRate: number;
  falseAlarm: number;
  ms: { mining: number; codes: number; boosting: number; total: number };
  /** Time left at this stage's pace. */
  etaMs: number;
}

/** Why training stopped. */
export type StopReason = 'done' | 'false-alarm-reached' | 'negatives-exhausted' | 'positives-exhausted' | 'inseparable';

export interface TrainResult {
  stages: TrainedStage[];
  stopped: StopReason;
  /** The classifier as imgpu detects with it. */
  classifier: Classifier;
  /** The file's text: cascade.xml (cascade) or waldboost.xml (waldboost). */
  xml: string;
  fileName: string;
  /** The feature pool (stumps index it). */
  features: LbpFeature[];
  progress: StageProgress[];
}

/**
 * The training options, declared once in traincascade's vocabulary (the library's names; the CLI's flags are them in
 * kebab case: numPos ↔ --num-pos): types, ranges, defaults, help and validation come from here.
 */
export const trainParams = [
  { name: 'window', kind: 'size', min: 6, default: { width: 24, height: 24 }, doc: 'detection window WxH (traincascade -w -h), up to 64x64' },
  { name: 'stages', kind: 'int', min: 1, max: 1000, default: 20, doc: 'stages to train (-numStages)' },
  { name: 'minHitRate', kind: 'float', exclusiveMin: 0, max: 1, default: 0.995, doc: 'fraction of its positives each stage keeps at least' },
  { name: 'maxFalseAlarm', kind: 'float', exclusiveMin: 0, max: 1, default: 0.5, doc: 'fraction of its negatives each stage accepts at most' },
  { name: 'numPos', kind: 'int', min: 1, doc: 'positives per stage (default: all there are, up to 2000)' },
  { name: 'numNeg', kind: 'int', min: 1, default: 1000, doc: 'negatives per stage, mined from the backgrounds' },
  { name: 'maxWeakCount', kind: 'int', min: 1, default: 100, doc: 'weak classifiers a stage may have at most' },
  { name: 'weightTrimming', kind: 'float', exclusiveMin: 0, max: 1, default: 0.95, doc: 'weight trimming rate (-weightTrimRate)' },
  { name: 'type', kind: 'enum', choices: TRAIN_TYPES, default: 'cascade', doc: 'an OpenCV cascade (cascade.xml) or WaldBoost (waldboost.xml, one running sum)' },
  { name: 'miningScale', kind: 'float', exclusiveMin: 1, default: 1.2, doc: 'pyramid factor of the scan of the backgrounds for negatives' },
] as const satisfies readonly ParamSpec[];

/** The options as checked and defaulted. */
export type ResolvedTrainOptions = Required<ResolvedOf<typeof trainParams>>;
type Resolved = ResolvedTrainOptions;

/** Checks and defaults the options (numPos defaults to the positives there are, up to 2000). */
export function resolveTrainOptions(o: TrainOptions, positives: number): Resolved {
  const r = resolveParams<ResolvedOf<typeof trainParams>>('train', trainParams, o);
  if (r.window.width > 64 || r.window.height > 64) throw new InvalidArgumentError(`train: window up to 64x64, got ${r.window.width}x${r.window.height}`);
  return { ...r, numPos: r.numPos ?? Math.min(2000, positives) };
}

/** Checks the data before any work: enough positives of the window's size, 8-bit gray backgrounds at least as large as the window. */
export function checkTrainingData(positives: readonly Uint8Array[], backgrounds: readonly Image[], o: Resolved): void {
  const { width: W, height: H } = o.window;
  if (positives.length < o.numPos) throw new InvalidArgumentError(`train: ${positives.length} positives, fewer than numPos ${o.numPos}: give more samples or a smaller numPos`);
  positives.forEach((p, i) => {
    if (p.length !== W * H) throw new InvalidArgumentError(`train: positive ${i} has ${p.length} pixels, not the ${W}×${H} window's ${W * H}`);
  });
  if (!backgrounds.length) throw new InvalidArgumentError('train: no background images for the negatives');
  backgrounds.forEach((b, i) => {
    if (b.dtype !== 'uint8' || b.channels !== 1 || b.shape.length !== 2) throw new InvalidArgumentError(`train: background ${i} must be 8-bit gray 2D`);
    if (b.shape[1] < W || b.shape[0] < H) throw new InvalidArgumentError(`train: background ${i} (${b.shape[1]}×${b.shape[0]}) is smaller than the ${W}×${H} window`);
  });
}

/** The running sum of a window (its pixels) through the stages; `accepted` false if a stage rejects it. */
function evaluate(stages: TrainedStage[], pool: LbpFeature[], ii: Int32Array, W: number, type: TrainType): { sum: number; accepted: boolean } {
  let sum = 0;
  for (const s of stages) {
    if (type === 'cascade') sum = 0;
    for (const w of s.weak) {
      const f = pool[w.feature];
      sum += stumpValue(w, lbpCode(ii, 0, W + 1, f.x, f.y, f.w, f.h));
    }
    if (sum < effectiveThreshold(s.threshold)) return { sum, accepted: false };
  }
  return { sum, accepted: true };
}

/** The first numPos positives of the pool the stages accept (traincascade's getPos: rejected ones are consumed). */
function selectPositives(positives: readonly Uint8Array[], stages: TrainedStage[], pool: LbpFeature[], o: Resolved): { samples: Uint8Array[]; offsets: number[]; consumed: number } {
  const { width: W, height: H } = o.window;
  const ii = new Int32Array((W + 1) * (H + 1));
  const samples: Uint8Array[] = [], offsets: number[] = [];
  let consumed = 0;
  for (const p of positives) {
    if (samples.length === o.numPos) break;
    consumed++;
    integralImage(p, W, H, ii);
    const e = evaluate(stages, pool, ii, W, o.type);
    if (e.accepted) { samples.push(p); offsets.push(o.type === 'waldboost' ? e.sum : 0); }
  }
  return { samples, offsets, consumed };
}

/** The running sums negatives carry into the stage (WaldBoost), computed from their pixels. */
function offsetsOf(samples: Uint8Array[], stages: TrainedStage[], pool: LbpFeature[], o: Resolved): number[] {
  if (o.type !== 'waldboost') return samples.map(() => 0);
  const { width: W, height: H } = o.window;
  const ii = new Int32Array((W + 1) * (H + 1));
  return samples.map((s) => { integralImage(s, W, H, ii); return evaluate(stages, pool, ii, W, o.type).sum; });
}

/** A stage's samples ready for boosting: the histogram backend, a feature's codes on demand, what to free after. */
interface PreparedSamples {
  backend: HistogramBackend;
  codesOf(f: number): Uint8Array;
  destroy(): void;
}

/**
 * The CPU reference: every code computed once, feature-major, and counted into the histograms on the host. On the
 * GPU the codes stay resident and the histograms come back; the host recomputes the chosen feature's codes alone
 * (the same function as the CPU path), which is all the weight update needs.
 */
async function prepareSamples(integrals: Int32Array, n: number, win: { width: number; height: number }, packed: Int32Array, positive: Uint8Array, pool: CpuPool, gpu?: GpuContext): Promise<PreparedSamples> {
  const F = packed.length / 4, { width: W, height: H } = win;
  if (gpu) {
    const g = await GpuStageSamples.create(gpu, integrals, n, W, packed, positive);
    return { backend: g, codesOf: (f) => featureCodes(integrals, n, W, H, packed, f), destroy: () => g.destroy() };
  }
  const shared = { integrals: sharedCopy(pool, integrals), features: sharedCopy(pool, packed), positive: sharedCopy(pool, positive) };
  const codes = sharedCopy(pool, new Uint8Array(F * n));
  await forChunks(pool, F, FEATURES_PER_TASK, trainCodesTask, { integrals: shared.integrals, n, W, H, features: shared.features, codes });
  const out = sharedCopy(pool, new Uint32Array(F * 512));
  const histograms = async (q: Uint32Array) => {
    await forChunks(pool, F, FEATURES_PER_TASK, trainHistogramsTask, { codes, n, positive: shared.positive, q: sharedCopy(pool, q), out });
    return out;
  };
  return { backend: { histograms }, codesOf: (f) => codes.subarray(f * n, (f + 1) * n), destroy: () => undefined };
}

/** Features per task of the pool (a task of fewer costs more to hand over than it saves). */
const FEATURES_PER_TASK = 256;

/** `a` in shared memory when the pool has workers (they read it without a copy; outputs are written in place). */
function sharedCopy<A extends Uint8Array | Int32Array | Uint32Array>(pool: CpuPool, a: A): A {
  if (pool.size <= 1 || typeof SharedArrayBuffer === 'undefined' || a.buffer instanceof SharedArrayBuffer) return a;
  const Ctor = a.constructor as new (b: SharedArrayBuffer) => A;
  const copy = new Ctor(new SharedArrayBuffer(a.byteLength));
  copy.set(a as never);
  return copy;
}

/** The best split over all features, split across the pool by feature ranges and reduced in feature order. */
async function bestSplitOn(pool: CpuPool, hist: Uint32Array, F: number): Promise<Split | undefined> {
  return bestOfSplits(await forChunks(pool, F, FEATURES_PER_TASK, trainSplitTask, { hist: sharedCopy(pool, hist) }));
}

/**
 * Trains a cascade (or WaldBoost classifier) from positives (window-sized 8-bit gray samples, in order) and
 * backgrounds (8-bit gray images without the object). Stops early, with the stages so far, when the negatives
 * run out, the cascade's false-alarm rate is reached, or the positives run out; the result says which.
 */
export async function trainDetector(positives: readonly Uint8Array[], backgrounds: readonly Image[], options: TrainOptions = {}): Promise<TrainResult> {
  const o = resolveTrainOptions(options, positives.length);
  checkTrainingData(positives, backgrounds, o);
  const { width: W, height: H } = o.window;
  const pool = mbLbpFeatures(W, H);
  const packed = packFeatures(pool);
  const params: CascadeParams = { ...o };
  const stages: TrainedStage[] = [...(options.resume ?? [])];
  const progress: StageProgress[] = [];
  let stopped: StopReason = 'done';
  const name = o.type === 'cascade' ? 'cascade.xml' : 'waldboost.xml';
  const classifierOf = () => stagesClassifier(stages, pool, o.window, o.type, name);
  while (stages.length < o.stages) {
    const t0 = performance.now();
    const pos = selectPositives(positives, stages, pool, o);
    if (pos.samples.length < o.numPos) { stopped = 'positives-exhausted'; break; }
    const mined = await mineNegatives(backgrounds, stages.length ? classifierOf() : undefined, o.numNeg, { window: o.window, scale: o.miningScale, gpu: options.gpu, pool: options.pool });
    if (!mined.samples.length) { stopped = 'negatives-exhausted'; break; }
    if (stages.length && mined.found / mined.scanned <= o.maxFalseAlarm ** o.stages) { stopped = 'false-alarm-reached'; break; }
    const t1 = performance.now();
    const samples = [...pos.samples, ...mined.samples];
    const n = samples.length;
    const positive = new Uint8Array(n).fill(1, 0, pos.samples.length);
    const integrals = sampleIntegrals(samples, W, H);
    const cpuPool = options.pool ?? inlinePool;
    const prepared = await prepareSamples(integrals, n, o.window, packed, positive, cpuPool, options.gpu);
    const d: StageSamples = { codesOf: (f) => prepared.codesOf(f), bestSplit: (h) => bestSplitOn(cpuPool, h, pool.length), n, positive, F: pool.length, offset: Float64Array.from([...pos.offsets, ...offsetsOf(mined.samples, stages, pool, o)]) };
    const t2 = performance.now();
    const r = await trainStage(d, o, prepared.backend).finally(() => prepared.destroy());
    if (!r.stage.weak.length) {
      // Every weighted sample has the same code on every feature: no stump separates them.
      if (!stages.length) throw new InvalidArgumentError('train: no feature tells the positives from the negatives (are the samples all alike?)');
      stopped = 'inseparable';
      break;
    }
    stages.push(r.stage);
    const t3 = performance.now();
    const p: StageProgress = {
      stage: stages.length - 1, numPos: pos.samples.length, posConsumed: pos.consumed, numNeg: mined.samples.length, negFound: mined.found, windowsScanned: mined.scanned,
      weak: r.stage.weak.length, hitRate: r.hitRate, falseAlarm: r.falseAlarm, ms: { mining: t1 - t0, codes: t2 - t1, boosting: t3 - t2, total: t3 - t0 }, etaMs: (t3 - t0) * (o.stages - stages.length),
    };
    progress.push(p);
    options.onProgress?.(p);
    await options.onStage?.(stages.length - 1, r.stage, { [`stage${stages.length - 1}.xml`]: stageXml(r.stage, stages.length - 1), 'params.xml': paramsXml(params) });
  }
  const comment = `imgpu train: ${stages.length} stages, stopped: ${stopped}`;
  const xml = o.type === 'cascade' ? cascadeXml(stages, pool, params, comment) : trainedWaldBoostXml(stages, pool, o.window, comment);
  return { stages, stopped, classifier: classifierOf(), xml, fileName: name, features: pool, progress };
}

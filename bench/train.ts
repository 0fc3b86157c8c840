/**
 * Training benchmark (issue 37): a synthetic set larger than the test's, training timed by phase on the CPU reference
 * and on the GPU, and the trained detectors scored on held-out scenes with objects at known boxes.
 *
 *   node dist/bench/train.js [--device cpu|gpu|both] [--stages 20] [--num-pos 3000] [--num-neg 1500] [--backgrounds 1000]
 *     [--min-hit-rate 0.995 --max-false-alarm 0.5 --max-weak-count 100 --weight-trimming 0.95 --mining-scale 1.2]
 *     [--extra-photos 1] [--aug-shift 1] [--aug-scale 0.1] [--save DIR] [--score-from 16] [--out bench/results/train.json]
 *
 * Data (made here, seeded, by bench/train/data.ts from committed images: test/fixtures/train — skimage's lfw_subset and
 * photographs — and bench/train/backgrounds, more skimage photographs):
 * - positives: the 80 training faces of faces.vec, augmented (mirror, shift ±aug-shift px, scale 1 ± aug-scale,
 *   brightness ±24, contrast 0.75–1.25) to `num-pos`·1.1 samples (traincascade needs some to spare: rejected
 *   positives are consumed);
 * - backgrounds: random crops (mirrored, rescaled to 160×120) of seven of the nine fixture photographs and, unless
 *   --extra-photos 0, the eleven of bench/train/backgrounds;
 * - held-out scenes: 100 scenes of 240×180 cut from the other two fixture photographs (coffee, coins), with 3 of
 *   the 20 held-out faces (80–99, augmented as the training faces are by default: shift ±1, scale 0.9–1.1) pasted
 *   each at known boxes of 24–59 px. The scenes have their own random sequence: every run, whatever its options,
 *   scores on the same scenes.
 * Scores: detection as cv2.detectMultiScale(scene, 1.1, minNeighbors) (imgpu detect, the same boxes); a detection is a
 * hit at IoU ≥ 0.5 with a box not yet taken; recall over all boxes, false positives per scene; at minNeighbors 3
 * (cv2's default: `heldOut`) and 1–5 (`curve`); and at minNeighbors 3 for the cascade cut after k stages, k from
 * --score-from on (`byStages`: what more stages buy, from one run).
 * --save DIR writes the set as files (positives/, backgrounds/, scenes/, scenes.json) for bench/train/waldboost.py.
 * Results are written to --out after every stage, so a run cut short keeps what it measured.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { detect, iou, type Classifier } from '../src/ops/detect/index.js';
import { stagesClassifier, trainDetector, type StageProgress, type TrainResult } from '../src/ops/detect/train/index.js';
import { makeData, saveData, type Scene } from './train/data.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const num = (k: string, d: number) => Number(args.get(k) ?? d);
const STAGES = num('stages', 20), NUM_POS = num('num-pos', 3000), NUM_NEG = num('num-neg', 1500), BACKGROUNDS = num('backgrounds', 1000);
const DEVICE = args.get('device') ?? 'both';
const OUT = args.get('out') ?? `bench/results/train-${DEVICE}.json`;
const SAVE = args.get('save');
/** Also score the cascade cut after 16, 17, … stages (--score-from; the full one is always scored). */
const SCORE_FROM = num('score-from', 16);
/** Training options other than the set's size, passed through when given (--min-hit-rate 0.999 …). */
const TUNING = Object.fromEntries((['minHitRate', 'maxFalseAlarm', 'maxWeakCount', 'weightTrimming', 'miningScale'] as const)
  .map((k) => [k, args.get(k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()))] as const).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Number(v)]));

/** Recall and false positives per scene, detecting as cv2.detectMultiScale(scene, 1.1, minNeighbors) does. */
async function score(c: Classifier, scenes: Scene[], minNeighbors: number) {
  let hits = 0, fps = 0, total = 0;
  for (const s of scenes) {
    const ds = (await detect(s.img, c, { minNeighbors, pool })).output.detections;
    const used = new Set<number>();
    for (const d of ds) {
      const j = s.boxes.findIndex((b, k) => !used.has(k) && iou({ ...b, neighbors: 1, score: 0 }, d) >= 0.5);
      if (j >= 0) { used.add(j); hits++; } else fps++;
    }
    total += s.boxes.length;
  }
  return { minNeighbors, recall: hits / total, falsePositivesPerScene: fps / scenes.length, scenes: scenes.length, objects: total };
}

/** The protocol's point (minNeighbors 3, cv2's default) and the curve around it. */
async function scores(c: Classifier, scenes: Scene[]) {
  const curve = [];
  for (const n of [1, 2, 3, 4, 5]) curve.push(await score(c, scenes, n));
  return { heldOut: curve[2], curve };
}

/** The protocol's point for the cascade cut after k stages, for every k from SCORE_FROM on: what more stages buy. */
async function byStages(r: TrainResult, scenes: Scene[]) {
  const out = [];
  for (let k = Math.min(SCORE_FROM, r.stages.length); k < r.stages.length; k++) {
    out.push({ stages: k, ...await score(stagesClassifier(r.stages.slice(0, k), r.features, { width: 24, height: 24 }, 'cascade', 'cascade.xml'), scenes, 3) });
  }
  return out;
}

function phases(progress: StageProgress[]) {
  const sum = (k: 'mining' | 'codes' | 'boosting' | 'total') => progress.reduce((a, p) => a + p.ms[k], 0) / 1000;
  return { seconds: { mining: sum('mining'), codes: sum('codes'), boosting: sum('boosting'), total: sum('total') }, weak: progress.reduce((a, p) => a + p.weak, 0) };
}

const pool = new NodeWorkerPool();
const dataOptions = { numPos: NUM_POS, backgrounds: BACKGROUNDS, extraPhotos: args.get('extra-photos') !== '0', augmentation: { shift: num('aug-shift', 1), scale: num('aug-scale', 0.1) } };
const data = await makeData(dataOptions);
if (SAVE) await saveData(data, SAVE);
const results: Record<string, unknown> = { stages: STAGES, numPos: NUM_POS, numNeg: NUM_NEG, backgrounds: BACKGROUNDS, positives: data.positives.length, threads: pool.size, tuning: TUNING, data: dataOptions };
/** Written after every stage and every trainer, so that a run cut short still leaves what it measured. */
const save = () => { mkdirSync(dirname(OUT), { recursive: true }); writeFileSync(OUT, JSON.stringify(results, null, 1)); };
const xml: Record<string, string> = {};
for (const device of DEVICE === 'both' ? ['cpu', 'gpu'] : [DEVICE]) {
  let gpu: GpuContext | undefined;
  if (device === 'gpu') gpu = await createNodeGpuContext();
  const t0 = performance.now();
  const progress: StageProgress[] = [];
  results[device] = { progress };
  const r = await trainDetector(data.positives, data.backgrounds, {
    stages: STAGES, numPos: NUM_POS, numNeg: NUM_NEG, ...TUNING, gpu, pool,
    onProgress: (p) => {
      progress.push(p);
      save();
      console.error(`${device} stage ${p.stage}: ${p.weak} weak, FA ${p.falseAlarm.toFixed(3)}, neg ${p.negFound}/${p.windowsScanned}, ${(p.ms.total / 1000).toFixed(1)} s (mining ${(p.ms.mining / 1000).toFixed(1)}, codes ${(p.ms.codes / 1000).toFixed(1)}, boosting ${(p.ms.boosting / 1000).toFixed(1)})`);
    },
  });
  const wall = (performance.now() - t0) / 1000;
  xml[device] = r.xml;
  writeFileSync(OUT.replace(/\.json$/, '.xml'), r.xml);
  results[device] = { wall, stopped: r.stopped, stages: r.stages.length, ...phases(r.progress), adapter: gpu?.adapter.description, ...await scores(r.classifier, data.scenes), byStages: await byStages(r, data.scenes), progress: r.progress };
  if (xml.cpu && xml.gpu) results.identicalXml = xml.cpu === xml.gpu;
  save();
  console.error(`${device}: ${wall.toFixed(1)} s, ${r.stages.length} stages (${r.stopped})`, JSON.stringify((results[device] as { heldOut: unknown }).heldOut));
  gpu?.destroy();
}
console.error(`wrote ${OUT}`);
await pool.close();

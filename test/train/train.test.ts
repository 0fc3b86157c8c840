import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { parseClassifierXml, readClassifier } from '../../src/io/classifier.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { parseVec, readBackgrounds, readPositives, train, type TrainFilesOptions } from '../../src/io/train.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { lbpCode } from '../../src/ops/detect/cpu-kernels.js';
import { acceptedOf, detect, Detector, pyramidLevels, selectAccepted, windowAt, type Detection, type DetectOutput } from '../../src/ops/detect/index.js';
import { bestSplitOf, histogramsCpu, quantiseWeights, trimWeights, WEIGHT_UNITS } from '../../src/ops/detect/train/boost.js';
import { featureCodes, packFeatures, sampleCodesCpu, sampleIntegrals } from '../../src/ops/detect/train/features.js';
import { GpuStageSamples } from '../../src/ops/detect/train/gpu.js';
import { scanBackgrounds } from '../../src/ops/detect/train/mine.js';
import { mbLbpFeatures, stageXml, trainDetector } from '../../src/ops/detect/train/index.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture, randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';

const pool = new NodeWorkerPool(2);
test.after(() => pool.close());
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-train-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

const FACES = fixture('train', 'faces.vec'), BACKGROUNDS = fixture('train', 'backgrounds'), SCENE = fixture('train', 'scene.png');
/** CI-sized: 70 of the 80 faces a stage, 200 mined negatives, 3 stages of the 24×24 window (a few seconds on one core). */
const SMALL = { numPos: 70, numNeg: 200, stages: 3 } as const;
const opts = (out: string, o: Partial<TrainFilesOptions> = {}): TrainFilesOptions => ({ positives: FACES, negatives: BACKGROUNDS, out: join(tmp, out), ...SMALL, pool, ...o });

/** One 3-stage CPU run shared by the tests that read its files. */
let reference: ReturnType<typeof train> | undefined;
const trained = () => (reference ??= train(opts('reference')));

const sorted = (boxes: number[][]) => boxes.map((b) => b.join(',')).sort();
const boxesOf = (ds: Detection[]) => sorted(ds.map((d) => [d.x, d.y, d.width, d.height]));

/** cv2.CascadeClassifier(xml).detectMultiScale(image, 1.1, minNeighbors) for each minNeighbors (Debian's OpenCV 4.6). */
function cv2Boxes(xml: string, image: string, minNeighbors: number[]): number[][][] {
  const script = `import cv2, json, sys
c = cv2.CascadeClassifier(sys.argv[1])
assert not c.empty(), 'cv2 could not load the cascade'
img = cv2.imread(sys.argv[2], cv2.IMREAD_GRAYSCALE)
print(json.dumps([[list(map(int, b)) for b in c.detectMultiScale(img, 1.1, int(n))] for n in sys.argv[3:]]))`;
  const r = spawnSync(PYTHON, ['-c', script, xml, image, ...minNeighbors.map(String)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as number[][][];
}

test("the feature pool is traincascade's: every (x, y, w, h) with 3w ≤ W, 3h ≤ H — 8,464 at 24×24 — in its order", () => {
  const f = mbLbpFeatures(24, 24);
  assert.equal(f.length, 8464);
  assert.deepEqual(f.slice(0, 3), [{ x: 0, y: 0, w: 1, h: 1 }, { x: 0, y: 0, w: 1, h: 2 }, { x: 0, y: 0, w: 1, h: 3 }]);
  assert.deepEqual(f[7], { x: 0, y: 0, w: 1, h: 8 });
  assert.deepEqual(f[8], { x: 0, y: 0, w: 2, h: 1 });
  assert.deepEqual(f.at(-1), { x: 21, y: 21, w: 1, h: 1 });
  assert.equal(mbLbpFeatures(12, 12).length, 484);
  // A feature's codes over many samples (corner offsets computed once) are the detector's lbpCode on each.
  const samples = Array.from({ length: 9 }, (_, i) => randomBytes(576, 100 + i, i === 4 ? 2 : 256));
  const ii = sampleIntegrals(samples, 24, 24), packed = packFeatures(f);
  for (const k of [0, 1234, 5000, 8463]) {
    const { x, y, w, h } = f[k];
    assert.deepEqual(Array.from(featureCodes(ii, 9, 24, 24, packed, k)), samples.map((_, i) => lbpCode(ii, i * 625, 25, x, y, w, h)), `feature ${k}`);
  }
});

test('the categorical split: codes sorted by mean response, the best prefix, leaves the weighted means (hand-computed)', () => {
  // code: positives' weight, negatives' weight → mean (P − N)/(P + N): 0: 3,1 → .5; 1: 0,4 → −1; 2: 4,0 → 1; 3: 1,3 → −.5
  const hist = new Uint32Array(512);
  [[0, 3, 1], [1, 0, 4], [2, 4, 0], [3, 1, 3]].forEach(([c, p, n]) => { hist[c] = p; hist[256 + c] = n; });
  // Order 1, 3, 0, 2. Prefix {1}: 16/4 + 16/12 = 5.33; {1, 3}: 36/8 + 36/8 = 9 (best); {1, 3, 0}: 5.33.
  const s = bestSplitOf(hist, 0, 7)!;
  assert.deepEqual(s.left, [1, 3]);
  assert.equal(s.score, 9);
  assert.deepEqual([s.leftSum, s.leftWeight, s.rightSum, s.rightWeight], [-6, 8, 6, 8]);
  assert.equal(bestSplitOf(new Uint32Array(512).fill(5, 0, 1), 0, 0), undefined, 'one code: no split');
});

test('weight trimming drops the lightest samples up to 1 − rate of the weight; quantised weights sum to at most 2^30', () => {
  assert.deepEqual(Array.from(trimWeights(Float64Array.from([0.02, 0.47, 0.01, 0.5]), 0.95)), [0, 0.47, 0, 0.5]);
  assert.deepEqual(Array.from(trimWeights(Float64Array.from([0.06, 0.44, 0.5]), 0.95)), [0.06, 0.44, 0.5]);
  const q = quantiseWeights(Float64Array.from([1, 2, 3, 0]));
  assert.equal(q[3], 0);
  assert.ok(q.reduce((a, v) => a + v, 0) <= WEIGHT_UNITS);
  assert.equal(q[0], Math.floor(WEIGHT_UNITS / 6));
});

test('a trained cascade loads in cv2.CascadeClassifier, and its detectMultiScale boxes equal imgpu detect on a held-out scene (CPU and GPU)', async (t) => {
  const r = await trained();
  assert.equal(r.stages.length, 3);
  assert.equal(r.stopped, 'done');
  const classifier = await readClassifier(r.path);
  assert.deepEqual(classifier.weak.map((w) => [w.reject, w.reset]), r.classifier.weak.map((w) => [w.reject, w.reset]), 'the file reads back as trained');
  assert.deepEqual(classifier.weak.map((w) => Array.from(w.table)), r.classifier.weak.map((w) => Array.from(w.table)));
  const scene = await readImage(SCENE, { gray: true });
  const [raw, grouped] = cv2Boxes(r.path, SCENE, [0, 3]);
  assert.ok(raw.length > grouped.length && grouped.length > 0, `${raw.length} raw windows, ${grouped.length} boxes`);
  const cpuRaw = (await detect(scene, classifier, { minNeighbors: 0, pool })).output.detections;
  assert.deepEqual(boxesOf(cpuRaw), sorted(raw));
  assert.deepEqual(boxesOf((await detect(scene, classifier, { minNeighbors: 3, pool })).output.detections), sorted(grouped));
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  assert.deepEqual(boxesOf((await detect(scene, classifier, { minNeighbors: 3, gpu })).output.detections), sorted(grouped));
});

test('each stage is saved as it finishes: a run over the same folder continues after its stage files and writes the same cascade', async () => {
  const r = await trained();
  const out = join(tmp, 'continued');
  const first = await train(opts('continued', { stages: 2 }));
  assert.equal(first.resumed, 0);
  assert.deepEqual(readFileSync(join(out, 'stage1.xml'), 'utf8'), readFileSync(join(tmp, 'reference', 'stage1.xml'), 'utf8'));
  const second = await train(opts('continued'));
  assert.equal(second.resumed, 2);
  assert.equal(readFileSync(second.path, 'utf8'), readFileSync(r.path, 'utf8'));
  await assert.rejects(train(opts('continued', { numNeg: 150 })), (e: Error) => e instanceof InvalidArgumentError && /other parameters/.test(e.message));
});

test('the result does not depend on the threads: one thread (no pool) trains the stages of the two-thread pool', async () => {
  await trained();
  const positives = await readPositives(FACES, { width: 24, height: 24 }), backgrounds = await readBackgrounds(BACKGROUNDS);
  const r = await trainDetector(positives, backgrounds, { ...SMALL, stages: 2 });
  assert.equal(stageXml(r.stages[1], 1), readFileSync(join(tmp, 'reference', 'stage1.xml'), 'utf8'));
});

test('--type waldboost: one running sum with each stage threshold on its last weak classifier, written as the WaldBoost XML imgpu detect reads', async () => {
  const r = await train(opts('waldboost', { type: 'waldboost', stages: 2 }));
  assert.ok(r.path.endsWith('waldboost.xml'));
  const c = parseClassifierXml(readFileSync(r.path, 'utf8'), r.path);
  assert.equal(c.staged, false);
  assert.ok(!c.weak.some((w) => w.reset));
  assert.deepEqual(c.weak.map((w) => [w.reject, Array.from(w.table)]), r.classifier.weak.map((w) => [w.reject, Array.from(w.table)]));
  // Two stages, two thresholds, both on the one running sum (no reset between them).
  const ends = c.weak.filter((w) => Number.isFinite(w.reject));
  assert.equal(ends.length, 2);
  const scene = await readImage(SCENE, { gray: true });
  assert.ok((await detect(scene, c, { minNeighbors: 3, pool })).output.detections.length > 0);
});

test('bad data is a typed error before any work: too few positives, a background smaller than the window, a .vec of another size', async () => {
  await assert.rejects(train(opts('bad', { numPos: 81 })), (e: Error) => e instanceof InvalidArgumentError && /80 positives, fewer than numPos 81/.test(e.message));
  const positives = await readPositives(FACES, { width: 24, height: 24 });
  const small = imageFrom(new Uint8Array(20 * 30), [30, 20]);
  await assert.rejects(trainDetector(positives, [small], { numPos: 10 }), (e: Error) => e instanceof InvalidArgumentError && /background 0 \(20×30\) is smaller than the 24×24 window/.test(e.message));
  assert.throws(() => parseVec(readFileSync(FACES), { width: 20, height: 20 }, 'faces.vec'), (e: Error) => e instanceof InvalidArgumentError && /576 pixels, not the 20×20/.test(e.message));
  assert.throws(() => parseVec(new Uint8Array(20), { width: 24, height: 24 }, 'x.vec'), UnsupportedFormatError);
  await assert.rejects(trainDetector(positives, [small], { numPos: 10, minHitRate: 1.5 }), /minHitRate must be ≤ 1/);
  const flat = Array.from({ length: 10 }, () => new Uint8Array(576).fill(90));
  await assert.rejects(trainDetector(flat, [imageFrom(new Uint8Array(40 * 40).fill(90), [40, 40])], { numNeg: 10, stages: 1 }), (e: Error) => e instanceof InvalidArgumentError && /no feature tells the positives from the negatives/.test(e.message));
});

test('negatives exhausted: training stops with the stages so far and says so (never a crash)', async () => {
  // Flat backgrounds: every window has the code 255 everywhere; the first stage learns to reject them all.
  const flat = [imageFrom(new Uint8Array(48 * 48).fill(128), [48, 48]), imageFrom(new Uint8Array(40 * 30).fill(30), [30, 40])];
  const positives = await readPositives(FACES, { width: 24, height: 24 });
  const r = await trainDetector(positives, flat, { numPos: 60, numNeg: 100, stages: 4 });
  assert.equal(r.stopped, 'negatives-exhausted');
  assert.equal(r.stages.length, 1);
  assert.match(r.xml, /<stageNum>1<\/stageNum>/);
});

test('imgpu train: a folder of crops as positives, progress per stage, the files in --out; bad arguments exit 2, missing files 3', async () => {
  await trained();
  const crops = join(tmp, 'crops');
  mkdirSync(crops);
  const faces = parseVec(readFileSync(FACES), { width: 24, height: 24 }, FACES);
  for (const [i, f] of faces.entries()) await writeImage(join(crops, `face${String(i).padStart(2, '0')}.png`), imageFrom(f, [24, 24]) as Image);
  assert.deepEqual(await readPositives(crops, { width: 24, height: 24 }), faces, 'the crops read back as the .vec samples');
  const out = join(tmp, 'cli');
  const r = cli('train', '--positives', crops, '--negatives', BACKGROUNDS, '--out', out, '--stages', '2', '--num-pos', '70', '--num-neg', '200', '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /stage 0: \d+ weak, hit rate 1\.0000/);
  assert.match(r.stderr, /stage 1: /);
  assert.match(r.stdout, /wrote .*cascade\.xml: 2 stages/);
  for (const f of ['params.xml', 'stage0.xml', 'stage1.xml', 'cascade.xml']) assert.ok(readFileSync(join(out, f)).length > 0, f);
  // The same samples as the .vec: the same first two stages as the reference run.
  assert.equal(readFileSync(join(out, 'stage1.xml'), 'utf8'), readFileSync(join(tmp, 'reference', 'stage1.xml'), 'utf8'));
  assertOneLineError(cli('train', '--positives', crops, '--negatives', BACKGROUNDS, '--out', out, '--num-pos', '500'), 2, /80 positives, fewer than --num-pos 500|fewer than numPos 500/);
  assertOneLineError(cli('train', '--positives', crops, '--out', out), 2, /needs --positives, --negatives and --out/);
  assertOneLineError(cli('train', '--positives', join(tmp, 'nope'), '--negatives', BACKGROUNDS, '--out', out), 3, /no such positives/);
  assertOneLineError(cli('train', '--positives', crops, '--negatives', BACKGROUNDS, '--out', out, '--type', 'haar'), 2, /type must be one of cascade\|waldboost/);
  // An opencv_annotation list: the held-out scene's 20 boxes (paths relative to the list), each resized to the window.
  const boxes = (JSON.parse(readFileSync(fixture('train', 'scene.json'), 'utf8')) as { boxes: number[][] }).boxes;
  writeFileSync(join(tmp, 'scene.txt'), `${SCENE} ${boxes.length} ${boxes.flat().join(' ')}\n`);
  const listed = await readPositives(join(tmp, 'scene.txt'), { width: 24, height: 24 });
  assert.equal(listed.length, 20);
  const scene = await readImage(SCENE, { gray: true });
  const [x, y] = boxes.find((b) => b[2] === 24)!;
  assert.deepEqual(listed[boxes.findIndex((b) => b[2] === 24)], Uint8Array.from({ length: 576 }, (_, k) => (scene.data as Uint8Array)[(y + Math.floor(k / 24)) * 320 + x + (k % 24)]), 'a 24×24 box is cut as it is');
  writeFileSync(join(tmp, 'list.txt'), `${SCENE} 1 0 0 10 300\n`);
  assertOneLineError(cli('train', '--positives', join(tmp, 'list.txt'), '--negatives', BACKGROUNDS, '--out', out), 2, /box 0 0 10 300 is not inside the 320×212 image/);
  assert.equal((await readBackgrounds(BACKGROUNDS)).length, 9);
});

test('GPU codes and histograms equal the CPU reference: integer weights up to 2^30 summed exactly in any order', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const W = 12, H = 12, n = 203; // not a multiple of 4 (codes are packed 4 to a word) nor of the workgroup
  const samples = Array.from({ length: n }, (_, i) => randomBytes(W * H, i + 1));
  samples[5].fill(200); // a flat sample: code 255 everywhere
  const features = packFeatures(mbLbpFeatures(W, H)), F = features.length / 4;
  const integrals = sampleIntegrals(samples, W, H);
  const positive = Uint8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));
  const w = Float64Array.from({ length: n }, (_, i) => (i === 7 ? 0 : 1 + ((i * 7919) % 1000) ** 2));
  const q = quantiseWeights(w);
  const codes = sampleCodesCpu(integrals, n, W, H, features);
  const cpu = new Uint32Array(F * 512);
  histogramsCpu(codes, n, positive, q, F, cpu);
  const g = await GpuStageSamples.create(gpu, integrals, n, W, features, positive);
  try {
    const hist = await g.histograms(q);
    assert.equal(hist.length, cpu.length);
    assert.ok(hist.every((v, i) => v === cpu[i]), 'histograms equal');
    assert.ok(cpu.some((v) => v > 2 ** 24), 'bins past float precision are exercised');
  } finally {
    g.destroy();
  }
  assert.deepEqual(featureCodes(integrals, n, W, H, features, 41), codes.subarray(41 * n, 42 * n));
});

test('mining picks the negatives it picked before the GPU counted on the device: the CI-sized cascade is byte for byte that of commit 2247431', async () => {
  // SHA-256 of cascade.xml as 2247431 trained it (imgpu train faces.vec backgrounds --num-pos 70 --num-neg 200
  // --stages 3, CPU): stages 1 and 2 are trained on mined negatives, so any change of which windows are picked shows.
  const r = await trained();
  assert.equal(createHash('sha256').update(readFileSync(r.path)).digest('hex'), 'db830e81405cc3f155578f221bd8bfea0359b1ddb2018c07102a044e1bc03309');
});

test('the accepted windows by rank: the r-th set bit, across empty words and bit 31, as a scan bit by bit finds it; hits made into bits and back', () => {
  const bits = new Uint32Array(randomBytes(4 * 40, 7).buffer);
  for (let w = 0; w < bits.length; w++) bits[w] = w % 5 === 2 ? 0 : bits[w] | (w % 3 === 0 ? 0x80000000 : 0);
  const set: number[] = [];
  for (let i = 0; i < 32 * bits.length; i++) if ((bits[i >>> 5] >>> (i & 31)) & 1) set.push(i);
  assert.deepEqual(selectAccepted(bits, set.map((_, k) => k)), set);
  assert.deepEqual(selectAccepted(bits, [0, 31, set.length - 1]), [set[0], set[31], set.at(-1)]);
  assert.throws(() => selectAccepted(bits, [set.length]), RangeError);
  const levels = pyramidLevels(100, 70, { width: 24, height: 24 }, { scale: 1.25, opencvStripes: true });
  const hits = [[0, 0, 0], [0, 74, 2], [0, 10, 20], [1, 4, 2], [levels.length - 1, 0, 0]].map(([level, x, y]) => ({ level, x, y, score: 0 }));
  const a = acceptedOf(hits, levels);
  assert.equal(a.count, hits.length);
  assert.deepEqual(selectAccepted(a.bits, hits.map((_, k) => k)).map((w) => windowAt(levels, w)), hits.map((h) => [h.level, h.y, h.x]));
});

test('the GPU trainer writes the same stage files and cascade as the CPU reference, byte for byte', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  await trained();
  const r = await train(opts('gpu', { stages: 2, gpu }));
  for (const f of ['params.xml', 'stage0.xml', 'stage1.xml']) assert.equal(readFileSync(join(tmp, 'gpu', f), 'utf8'), readFileSync(join(tmp, 'reference', f), 'utf8'), f);
  const cpu2 = await train(opts('cpu2', { stages: 2 }));
  assert.equal(readFileSync(r.path, 'utf8'), readFileSync(cpu2.path, 'utf8'));
});

type Scan = { gpu?: GpuContext; pool?: NodeWorkerPool };
/** A mining scan's accepted windows as [level, x, y]: its count's ranks looked up among its bits. */
function acceptedHits(x: DetectOutput): number[][] {
  const a = x.accepted!;
  return selectAccepted(a.bits, Array.from({ length: a.count }, (_, r) => r)).map((w) => { const [l, y, xx] = windowAt(x.levels, w); return [l, xx, y]; });
}
test("mining counts and marks each background's accepted windows (on the GPU, on the device) as a detection one at a time finds them, frames in flight or several on the pool; > 4,096 in a frame, and none", async (t) => {
  // Five sizes, interleaved (more than the detector keeps plans for); one stage accepts 600–17,000 windows a
  // background, more than a readback's first copy holds (4,096): frames in flight must not read each other's. A
  // flat background accepts none.
  const backgrounds = [...await readBackgrounds(BACKGROUNDS), imageFrom(new Uint8Array(64 * 48).fill(0), [48, 64])];
  const r = await trainDetector(await readPositives(FACES, { width: 24, height: 24 }), backgrounds.slice(0, -1), { ...SMALL, stages: 1, pool });
  const window = { width: 24, height: 24 }, scale = 1.2;
  const oneByOne = async (o: Scan) => {
    const det = new Detector(r.classifier, { scale, minNeighbors: 0, ...o });
    try {
      const outs = [];
      for (const b of backgrounds) outs.push((await det.run(b)).output);
      return outs.map((x) => ({ windows: x.windows, hits: x.hits.map((h) => [h.level, h.x, h.y]) }));
    } finally {
      det.close();
    }
  };
  const together = async (o: Scan) => {
    const det = new Detector(r.classifier, { scale, minNeighbors: 0, ...o }, 'accepted');
    try {
      const outs = await scanBackgrounds(backgrounds, det, { window, scale, ...o });
      return outs.map((x) => ({ windows: x.windows, hits: acceptedHits(x) }));
    } finally {
      det.close();
    }
  };
  const expected = await oneByOne({ pool });
  assert.ok(expected.filter((x) => x.hits.length > 4096).length >= 3, 'backgrounds of one size with more hits than the first copy holds');
  assert.equal(expected.at(-1)!.hits.length, 0, 'the flat background has no hit');
  assert.deepEqual(await together({ pool }), expected);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  assert.deepEqual(await together({ gpu }), expected);
});

/**
 * Training benchmark (issue 37): a synthetic set larger than the test's, training timed by phase on the CPU reference
 * and on the GPU, and the trained detectors scored on held-out scenes with objects at known boxes.
 *
 *   node dist/bench/train.js [--device cpu|gpu|both] [--stages 20] [--num-pos 3000] [--num-neg 1500] [--backgrounds 1000] [--out bench/results/train.json]
 *
 * Data (made here, seeded, from the committed fixtures of test/fixtures/train — skimage's lfw_subset and photographs):
 * - positives: the 80 training faces of faces.vec, augmented (mirror, shift ±1 px, scale 0.9–1.1, brightness ±24,
 *   contrast 0.75–1.25) to `num-pos`·1.1 samples (traincascade needs some to spare: rejected positives are consumed);
 * - backgrounds: random crops (mirrored, rescaled to 160×120) of seven of the nine background photographs;
 * - held-out scenes: 50 scenes of 240×180 cut from the other two photographs (coffee, coins), with 3 of the 20
 *   held-out faces (80–99, augmented) pasted each at known boxes of 24–60 px.
 * Scores: a detection is a hit at IoU ≥ 0.5 with a box; recall over all boxes, false positives per scene.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import { imageFrom, type Image } from '../src/core/image.js';
import { readBackgrounds, parseVec } from '../src/io/train.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { detect, iou, resizeLinearExact, type Classifier } from '../src/ops/detect/index.js';
import { trainDetector, type StageProgress } from '../src/ops/detect/train/index.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const num = (k: string, d: number) => Number(args.get(k) ?? d);
const STAGES = num('stages', 20), NUM_POS = num('num-pos', 3000), NUM_NEG = num('num-neg', 1500), BACKGROUNDS = num('backgrounds', 1000);
const DEVICE = args.get('device') ?? 'both';
const BG_W = 160, BG_H = 120;
const OUT = args.get('out') ?? `bench/results/train-${DEVICE}.json`;

/** mulberry32: the set is the same on every machine. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 24×24 face resampled (bilinear) at a scale and shift, maybe mirrored, with brightness and contrast changed. */
function augment(face: Uint8Array, r: () => number, size = 24): Uint8Array {
  const s = 0.9 + 0.2 * r(), dx = Math.round(2 * r() - 1), dy = Math.round(2 * r() - 1), mirror = r() < 0.5;
  const gain = 0.75 + 0.5 * r(), bias = Math.round(48 * r() - 24);
  const out = new Uint8Array(size * size);
  const k = 24 / size;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let u = ((x + 0.5) * k - 12) / s + 12 - 0.5 + dx, v = ((y + 0.5) * k - 12) / s + 12 - 0.5 + dy;
      if (mirror) u = 23 - u;
      u = Math.min(23, Math.max(0, u)); v = Math.min(23, Math.max(0, v));
      const x0 = Math.floor(u), y0 = Math.floor(v), x1 = Math.min(23, x0 + 1), y1 = Math.min(23, y0 + 1), fx = u - x0, fy = v - y0;
      const p = (1 - fy) * ((1 - fx) * face[y0 * 24 + x0] + fx * face[y0 * 24 + x1]) + fy * ((1 - fx) * face[y1 * 24 + x0] + fx * face[y1 * 24 + x1]);
      out[y * size + x] = Math.min(255, Math.max(0, Math.round((p - 128) * gain + 128 + bias)));
    }
  }
  return out;
}

/** A w×h crop of `img` at (x, y) of size cw×ch, resized to w×h and maybe mirrored. */
function cropResized(img: Image, x: number, y: number, cw: number, ch: number, w: number, h: number, mirror: boolean): Uint8Array {
  const [, W] = img.shape, src = img.data as Uint8Array;
  const crop = new Uint8Array(cw * ch);
  for (let r = 0; r < ch; r++) for (let c = 0; c < cw; c++) crop[r * cw + c] = src[(y + r) * W + (mirror ? x + cw - 1 - c : x + c)];
  const out = new Uint8Array(w * h);
  resizeLinearExact(crop, cw, ch, w, h, out);
  return out;
}

function randomCrop(src: Image, w: number, h: number, r: () => number): Uint8Array {
  const [H, W] = src.shape;
  const f = Math.min(W / w, H / h) * (0.5 + 0.5 * r());
  const cw = Math.max(8, Math.floor(w * f)), ch = Math.max(8, Math.floor(h * f));
  return cropResized(src, Math.floor(r() * (W - cw + 1)), Math.floor(r() * (H - ch + 1)), cw, ch, w, h, r() < 0.5);
}

interface Scene { img: Image; boxes: { x: number; y: number; width: number; height: number }[] }

async function makeData() {
  const faces = parseVec(readFileSync('test/fixtures/train/faces.vec'), { width: 24, height: 24 }, 'faces.vec');
  const heldOutFaces = await heldOut();
  const photos = await readBackgrounds('test/fixtures/train/backgrounds');
  const names = ['brick', 'coffee', 'coins', 'grass', 'gravel', 'lfw_nonfaces', 'moon', 'rocket', 'text'];
  const train = photos.filter((_, i) => !['coffee', 'coins'].includes(names[i])), test = photos.filter((_, i) => ['coffee', 'coins'].includes(names[i]));
  const r = rng(37);
  const positives = Array.from({ length: Math.ceil(NUM_POS * 1.1) }, (_, i) => augment(faces[i % faces.length], r));
  const backgrounds = Array.from({ length: BACKGROUNDS }, (_, i) => {
    // One size for all: the staged GPU detector makes a plan (buffers, calibration) per frame size, and a plan per
    // background would cost more than the scan itself (docs/training.md).
    return imageFrom(randomCrop(train[i % train.length], BG_W, BG_H, r), [BG_H, BG_W]);
  });
  const scenes: Scene[] = Array.from({ length: 50 }, (_, i) => {
    const W = 240, H = 180;
    const px = randomCrop(test[i % test.length], W, H, r);
    const boxes = [];
    for (let k = 0; k < 3; k++) {
      const size = 24 + Math.floor(36 * r());
      const x = k * 80 + Math.floor(r() * (80 - size)), y = Math.floor(r() * (H - size));
      const face = augment(heldOutFaces[(3 * i + k) % heldOutFaces.length], r, size);
      for (let row = 0; row < size; row++) px.set(face.subarray(row * size, (row + 1) * size), (y + row) * W + x);
      boxes.push({ x, y, width: size, height: size });
    }
    return { img: imageFrom(px, [H, W]), boxes };
  });
  return { positives, backgrounds, scenes };
}

/** The 20 held-out faces, cut from the committed scene (scene.json's boxes), resized to 24×24. */
async function heldOut(): Promise<Uint8Array[]> {
  const { readImage } = await import('../src/io/index.js');
  const scene = await readImage('test/fixtures/train/scene.png', { gray: true });
  const boxes = (JSON.parse(readFileSync('test/fixtures/train/scene.json', 'utf8')) as { boxes: number[][] }).boxes;
  return boxes.map(([x, y, w, h]) => cropResized(scene, x, y, w, h, 24, 24, false));
}

async function score(c: Classifier, scenes: Scene[], pool: NodeWorkerPool) {
  let hits = 0, fps = 0, total = 0;
  for (const s of scenes) {
    const ds = (await detect(s.img, c, { minNeighbors: 3, pool })).output.detections;
    const used = new Set<number>();
    for (const d of ds) {
      const j = s.boxes.findIndex((b, k) => !used.has(k) && iou({ ...b, neighbors: 1, score: 0 }, d) >= 0.5);
      if (j >= 0) { used.add(j); hits++; } else fps++;
    }
    total += s.boxes.length;
  }
  return { recall: hits / total, falsePositivesPerScene: fps / scenes.length, scenes: scenes.length, objects: total };
}

function phases(progress: StageProgress[]) {
  const sum = (k: 'mining' | 'codes' | 'boosting' | 'total') => progress.reduce((a, p) => a + p.ms[k], 0) / 1000;
  return { seconds: { mining: sum('mining'), codes: sum('codes'), boosting: sum('boosting'), total: sum('total') }, weak: progress.reduce((a, p) => a + p.weak, 0) };
}

const pool = new NodeWorkerPool();
const data = await makeData();
const results: Record<string, unknown> = { stages: STAGES, numPos: NUM_POS, numNeg: NUM_NEG, backgrounds: BACKGROUNDS, positives: data.positives.length, threads: pool.size };
const xml: Record<string, string> = {};
for (const device of DEVICE === 'both' ? ['cpu', 'gpu'] : [DEVICE]) {
  let gpu: GpuContext | undefined;
  if (device === 'gpu') gpu = await createNodeGpuContext();
  const t0 = performance.now();
  const r = await trainDetector(data.positives, data.backgrounds, {
    stages: STAGES, numPos: NUM_POS, numNeg: NUM_NEG, gpu, pool,
    onProgress: (p) => console.error(`${device} stage ${p.stage}: ${p.weak} weak, FA ${p.falseAlarm.toFixed(3)}, neg ${p.negFound}/${p.windowsScanned}, ${(p.ms.total / 1000).toFixed(1)} s (mining ${(p.ms.mining / 1000).toFixed(1)}, codes ${(p.ms.codes / 1000).toFixed(1)}, boosting ${(p.ms.boosting / 1000).toFixed(1)})`),
  });
  const wall = (performance.now() - t0) / 1000;
  xml[device] = r.xml;
  results[device] = { wall, stopped: r.stopped, stages: r.stages.length, ...phases(r.progress), adapter: gpu?.adapter.description, heldOut: await score(r.classifier, data.scenes, pool), progress: r.progress };
  console.error(`${device}: ${wall.toFixed(1)} s, ${r.stages.length} stages (${r.stopped})`, JSON.stringify((results[device] as { heldOut: unknown }).heldOut));
  gpu?.destroy();
}
if (xml.cpu && xml.gpu) results.identicalXml = xml.cpu === xml.gpu;
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(results, null, 1));
writeFileSync(OUT.replace(/\.json$/, '.xml'), xml.gpu ?? xml.cpu);
console.error(`wrote ${OUT}`);
await pool.close();

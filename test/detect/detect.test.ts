import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { InvalidArgumentError, UnsupportedDtypeError, UnsupportedFormatError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import type { Image } from '../../src/core/image.js';
import { parseClassifierXml, readClassifier, waldBoostXml } from '../../src/io/classifier.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { fixedPointOf } from '../../src/ops/detect/classifier.js';
import { detect, detectObjects, Detector, groupRectangles, hitBoxes, pyramidLevels, type Classifier, type DetectOptions, type DetectOutput, type Detection } from '../../src/ops/detect/index.js';
import { clipToImage } from '../../src/ops/detect/group.js';
import { fixture, randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

interface RefCase { image: string; classifier: string; scale: number; minNeighbors: number; minSize: [number, number] | null; raw: number[][]; grouped: number[][] }
const REF: Record<string, RefCase> = JSON.parse(readFileSync(fixture('detect', 'reference.json'), 'utf8'));
const cascades = new Map<string, Classifier>();
async function cascade(name: string): Promise<Classifier> {
  if (!cascades.has(name)) cascades.set(name, await readClassifier(fixture('detect', name)));
  return cascades.get(name)!;
}
const pool = new NodeWorkerPool(2);
test.after(() => pool.close());

function optionsOf(c: RefCase, minNeighbors: number): DetectOptions {
  return { scale: c.scale, minNeighbors, minSize: c.minSize ? { width: c.minSize[0], height: c.minSize[1] } : undefined };
}
const sortedBoxes = (ds: Detection[]) => ds.map((d) => [d.x, d.y, d.width, d.height]).sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
const hitKey = (o: DetectOutput) => o.hits.map((h) => `${h.level},${h.x},${h.y},${h.score}`);

test('an OpenCV LBP cascade loads into the internal form: stumps as 256-entry tables, stage thresholds − 1e-5 in float', async () => {
  const c = await cascade('lbpcascade_frontalface.xml');
  assert.deepEqual(c.window, { width: 24, height: 24 });
  assert.equal(c.weak.length, 139);
  assert.equal(c.weak.filter((w) => w.reset).length, 20);
  assert.ok(c.staged);
  // Stage 0: 3 stumps, threshold -0.7520892024040222; tree 0 uses feature 46 = rect "0 4 7 6" … leaf values ±.
  const w0 = c.weak[0];
  assert.equal(w0.table[0], Math.fround(-0.6543210148811340)); // code 0: subset word 0 = -67130709 has bit 0 set → leaf 0
  assert.equal(w0.table[2], Math.fround(0.8888888955116272)); // bit 1 of -67130709 (…1011) is clear → leaf 1
  assert.equal(c.weak[2].reject, Math.fround(Math.fround(-0.7520892024040222) - Math.fround(1e-5)));
  assert.equal(c.weak[1].reject, -Infinity);
  assert.ok(fixedPointOf(c).exact);
});

test('classifier files: malformed XML, other feature types, features outside the window, bad tables are typed errors', () => {
  const bad = (xml: string, pattern: RegExp, type: abstract new (...args: never[]) => Error = UnsupportedFormatError) => assert.throws(() => parseClassifierXml(xml, 'x.xml'), (e: Error) => e instanceof type && pattern.test(e.message));
  bad('<opencv_storage><cascade><stageType>BOOST', /malformed XML/);
  bad('<opencv_storage><cascade><stageType>BOOST</stageType><featureType>HAAR</featureType></cascade></opencv_storage>', /feature type 'HAAR'/);
  bad('<opencv_storage><haarcascade_frontalface_alt type_id="opencv-haar-classifier"><size>20 20</size></haarcascade_frontalface_alt></opencv_storage>', /old-style Haar/);
  bad('<html><body/></html>', /neither an OpenCV cascade/);
  const table = Array(256).fill('0.5').join(' ');
  const wb = (feature: string, values = table) => `<WaldBoostClassifier imageSizeX="24" imageSizeY="24" type="LBP"><stage posT="inf" negT="0"><HistogramWeakHypothesis predictionValues="${values}"/>${feature}</stage></WaldBoostClassifier>`;
  bad(wb('<LBPFeature positionX="10" positionY="0" blockWidth="5" blockHeight="2"/>'), /does not fit the 24×24 window/, InvalidArgumentError);
  bad(wb('<LBPFeature positionX="0" positionY="0" blockWidth="2" blockHeight="2"/>', '1 2 3'), /256 values/);
  bad(wb('<HaarFeature/>'), /only LBPFeature/);
  bad('<WaldBoostClassifier imageSizeX="24" imageSizeY="24" type="HOG"/>', /'HOG' is not supported/);
  const ok = parseClassifierXml(wb('<LBPFeature positionX="0" positionY="0" blockWidth="8" blockHeight="8"/>'), 'ok.xml');
  assert.equal(ok.staged, false);
  assert.equal(ok.weak[0].reject, 0);
});

test('convert: an OpenCV cascade written as WaldBoost XML reads back identical (tables, thresholds, stage ends)', async () => {
  for (const name of ['lbpcascade_frontalface.xml', 'lbpcascade_frontalcatface.xml']) {
    const c = await cascade(name);
    const back = parseClassifierXml(waldBoostXml(c), 'converted.xml');
    assert.equal(back.weak.length, c.weak.length);
    assert.equal(back.staged, true);
    c.weak.forEach((w, i) => {
      const b = back.weak[i];
      assert.deepEqual(b.feature, w.feature);
      assert.deepEqual(Array.from(b.table), Array.from(w.table), `${name} weak ${i} table`);
      assert.equal(b.reject, w.reject);
      assert.equal(b.accept, w.accept);
      assert.equal(b.reset, w.reset);
    });
  }
});

for (const [name, c] of Object.entries(REF)) {
  test(`CPU reference = cv2.CascadeClassifier.detectMultiScale: ${name} (raw windows and grouped boxes, exactly)`, async () => {
    const img = await readImage(fixture('detect', c.image));
    const cl = await cascade(c.classifier);
    const raw = await detect(img, cl, { ...optionsOf(c, 0), pool });
    assert.deepEqual(sortedBoxes(raw.output.detections), c.raw, 'raw windows');
    const grouped = await detect(img, cl, { ...optionsOf(c, c.minNeighbors), pool });
    assert.deepEqual(sortedBoxes(grouped.output.detections), c.grouped, 'grouped boxes');
  });
}

test('astronaut: the face OpenCV finds, and the converted WaldBoost classifier gives the same windows', async () => {
  const img = await readImage(fixture('detect', 'astronaut.png'));
  const c = await cascade('lbpcascade_frontalface.xml');
  const a = await detect(img, c, { pool });
  assert.deepEqual(sortedBoxes(a.output.detections), [[171, 64, 104, 104]]);
  const converted = parseClassifierXml(waldBoostXml(c), 'frontalface-waldboost.xml');
  const b = await detect(img, converted, { pool });
  assert.deepEqual(hitKey(b.output), hitKey(a.output));
});

for (const impl of ['staged', 'naive'] as const) {
  test(`GPU (${impl}) = CPU reference: the same accepted windows and sums on every reference image`, async (t) => {
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    for (const [name, c] of Object.entries(REF)) {
      const img = await readImage(fixture('detect', c.image));
      const cl = await cascade(c.classifier);
      const cpu = await detect(img, cl, { ...optionsOf(c, c.minNeighbors), pool });
      const g = await detect(img, cl, { ...optionsOf(c, c.minNeighbors), gpu, impl });
      assert.deepEqual(hitKey(g.output), hitKey(cpu.output), name);
      assert.deepEqual(sortedBoxes(g.output.detections), c.grouped, `${name}: grouped boxes`);
      if (impl === 'staged') assert.deepEqual(g.output.gpu!.dropped.filter((d) => d > 0), [], `${name}: nothing discarded with the default divisors`);
    }
  });
}

test('GPU = CPU on odd sizes, noise, colour input on the GPU, a resident GpuImage, explicit stages', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const c = await cascade('lbpcascade_frontalface.xml');
  const astro = await readImage(fixture('detect', 'astronaut.png'));
  const crop = (x0: number, y0: number, w: number, h: number): Image => {
    const d = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) d.set(astro.data.subarray((y0 + y) * 512 + x0, (y0 + y) * 512 + x0 + w) as Uint8Array, y * w);
    return { data: d, shape: [h, w], channels: 1, dtype: 'uint8' };
  };
  const cases: [string, Image, DetectOptions][] = [
    ['crop 301×257', crop(101, 11, 301, 257), { minNeighbors: 0 }],
    ['crop 25×24 (one level)', crop(200, 100, 25, 24), { minNeighbors: 0 }],
    ['noise 203×97', { data: randomBytes(203 * 97, 7), shape: [97, 203], channels: 1, dtype: 'uint8' }, { minNeighbors: 0, scale: 1.05 }],
    ['stages 3,5,9,20', astro, { stages: [3, 5, 9, 20] }],
    ['stages 139 (one reduction kernel)', astro, { stages: [139] }],
  ];
  for (const [what, img, o] of cases) {
    const cpu = await detect(img, c, { ...o, pool });
    const g = await detect(img, c, { ...o, gpu });
    assert.deepEqual(hitKey(g.output), hitKey(cpu.output), what);
  }
  // A cascade of one stage: the GPU's window kernel evaluates it again after the stage-0 mask, for the sums.
  const oneStage = { ...c, weak: c.weak.slice(0, c.weak.findIndex((w) => w.reset) + 1) };
  const small = crop(101, 11, 120, 90);
  const one = await detect(small, oneStage, { minNeighbors: 0, pool });
  assert.ok(one.output.hits.length > 100);
  assert.deepEqual(hitKey((await detect(small, oneStage, { minNeighbors: 0, gpu })).output), hitKey(one.output), 'one-stage cascade');
  // Colour: the GPU converts RGB to gray inside the pyramid kernel (cv2's fixed-point formula).
  const cat = await readImage(fixture('images', 'chelsea.png'));
  assert.equal(cat.channels, 3);
  const catC = await cascade('lbpcascade_frontalcatface.xml');
  const cpu = await detect(cat, catC, { minNeighbors: 0, scale: 1.05, pool });
  const g = await detect(cat, catC, { minNeighbors: 0, scale: 1.05, gpu });
  assert.deepEqual(hitKey(g.output), hitKey(cpu.output), 'RGB input');
  assert.deepEqual(sortedBoxes(cpu.output.detections), REF['chelsea-cat'].raw);
  const resident = await GpuImage.upload(gpu, astro);
  try {
    const r = await detect(resident, c, { gpu });
    assert.deepEqual(sortedBoxes(r.output.detections), [[171, 64, 104, 104]]);
  } finally {
    resident.release();
  }
});

test('colour input converts as cv2.cvtColor(RGB2GRAY), on the CPU and inside the GPU pyramid (issue 24 item 13)', async (t) => {
  // The astronaut painted in colour: each gray level v becomes an RGB pixel cv2 converts back to v (most of them
  // convert to another level with OpenCV's 14-bit YCrCb weights), so detecting in the colour image must give the
  // gray image's windows and sums exactly.
  const astro = await readImage(fixture('detect', 'astronaut.png'));
  const table = (await readImage(fixture('images', 'gray-levels-rgb.npy'))).data;
  const n = astro.data.length;
  const rgb = new Uint8Array(3 * n);
  for (let i = 0; i < n; i++) rgb.set(table.subarray(3 * astro.data[i], 3 * astro.data[i] + 3), 3 * i);
  const colour: Image = { data: rgb, shape: astro.shape, channels: 3, dtype: 'uint8' };
  const c = await cascade('lbpcascade_frontalface.xml');
  const want = await detect(astro, c, { minNeighbors: 0, pool });
  assert.deepEqual(hitKey((await detect(colour, c, { minNeighbors: 0, pool })).output), hitKey(want.output), 'CPU');
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  assert.deepEqual(hitKey((await detect(colour, c, { minNeighbors: 0, gpu })).output), hitKey(want.output), 'GPU');
});

test('GPU: lists too small for the survivors are counted and the frame is redone exactly', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = await readImage(fixture('detect', 'lfw_mosaic.png'));
  const c = await cascade('lbpcascade_frontalface.xml');
  const cpu = await detect(img, c, { minNeighbors: 0, pool });
  // Divisors of 1000 give lists of 4096 (the floor) after the first kernel: the mosaic's survivors do not fit.
  const g = await detect(img, c, { minNeighbors: 0, gpu, stages: [3, 4], divisors: [1000, 1000] });
  assert.ok(g.output.gpu!.dropped[0] > 0, `dropped ${g.output.gpu!.dropped}`);
  assert.ok(g.output.gpu!.rerun);
  assert.deepEqual(hitKey(g.output), hitKey(cpu.output));
});

test('Detector.submitGpu: ten frames in flight give each frame the hits and boxes it gets alone, completed in order', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const mosaic = await readImage(fixture('detect', 'lfw_mosaic.png'));
  const [mh, mw] = mosaic.shape;
  const W = 160, H = 96;
  // Ten different frames of one size: crops of the face mosaic moving right and down (faces in each).
  const frames: Image[] = Array.from({ length: 10 }, (_, k) => {
    const data = new Uint8Array(W * H), x0 = Math.min(mw - W, 41 * k), y0 = Math.min(mh - H, 9 * k);
    for (let y = 0; y < H; y++) data.set((mosaic.data as Uint8Array).subarray((y0 + y) * mw + x0, (y0 + y) * mw + x0 + W), y * W);
    return { data, shape: [H, W], channels: 1, dtype: 'uint8' };
  });
  const c = await cascade('lbpcascade_frontalface.xml');
  const d = new Detector(c, { gpu, minNeighbors: 1, profile: false });
  try {
    const alone = [];
    for (const f of frames) alone.push((await d.runGpu(f, gpu)).output);
    assert.ok(alone.some((o) => o.detections.length > 0) && new Set(alone.map((o) => hitKey(o).join(';'))).size > 5, 'frames differ and have faces');
    // More frames in flight than the plan keeps upload buffers (8): the last ones wait for a re-mapped one.
    const pending = [];
    for (const f of frames) pending.push(await d.submitGpu(f, gpu));
    for (let k = 0; k < frames.length; k++) {
      const r: DetectOutput = (await pending[k]()).output;
      assert.deepEqual(hitKey(r), hitKey(alone[k]), `frame ${k}: hits`);
      assert.deepEqual(r.detections, alone[k].detections, `frame ${k}: boxes`);
    }
  } finally {
    d.close();
  }
});

test('hand-made WaldBoost classifier: per-weak-classifier rejection and early acceptance (posT) = an independent numpy evaluation', async (t) => {
  const c = await readClassifier(fixture('detect', 'handmade_waldboost.xml'));
  assert.equal(c.staged, false);
  assert.equal(c.weak.filter((w) => Number.isFinite(w.accept)).length, 1);
  const ref: { scale: number; hits: number[][] } = JSON.parse(readFileSync(fixture('detect', 'handmade_reference.json'), 'utf8'));
  const img = await readImage(fixture('detect', 'astronaut.png'));
  const check = (o: DetectOutput, what: string) => {
    assert.equal(o.hits.length, ref.hits.length, `${what}: accepted windows`);
    const want = new Map(ref.hits.map(([l, x, y, s]) => [`${l},${x},${y}`, s]));
    for (const h of o.hits) {
      const s = want.get(`${h.level},${h.x},${h.y}`);
      assert.ok(s !== undefined, `${what}: window ${h.level},${h.x},${h.y} should be rejected`);
      assert.ok(Math.abs(s - h.score) < 1e-9, `${what}: sum ${h.score} vs ${s}`);
    }
  };
  const cpu = await detect(img, c, { scale: ref.scale, minNeighbors: 0, pool });
  check(cpu.output, 'CPU');
  // Without posT the result differs: the early acceptances matter.
  const noPost = { ...c, weak: c.weak.map((w) => ({ ...w, accept: Infinity })) };
  const np = await detect(img, noPost, { scale: ref.scale, minNeighbors: 0, pool });
  assert.ok(np.output.hits.length < ref.hits.length / 2);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const impl of ['staged', 'naive'] as const) check((await detect(img, c, { scale: ref.scale, minNeighbors: 0, gpu, impl })).output, `GPU ${impl}`);
});

test('groupRectangles: clusters averaged, small clusters dropped, boxes inside stronger ones removed; 0 neighbours = raw', () => {
  const box = (x: number, y: number, s: number): Detection => ({ x, y, width: s, height: s, neighbors: 1, score: 0 });
  const raw = [box(10, 10, 24), box(11, 10, 24), box(10, 11, 24), box(12, 12, 25), box(100, 100, 24), box(14, 14, 12), box(15, 14, 12), box(14, 15, 12)];
  assert.equal(groupRectangles(raw, 0).length, raw.length);
  // Expected values from cv2.groupRectangles(raw, 2, 0.2): the 4-box cluster averaged (float 1/n, rounded); the
  // lone box dropped (1 ≤ 2); the 3 small boxes inside the 4-box cluster removed (4 > max(3, 3)).
  assert.deepEqual(groupRectangles(raw, 2).map((d) => [d.x, d.y, d.width, d.height, d.neighbors]), [[11, 11, 24, 24, 4]]);
  const g2 = groupRectangles([...raw, box(10, 10, 24), box(11, 11, 24)], 2);
  assert.deepEqual(g2.map((d) => [d.x, d.y, d.width, d.height, d.neighbors]), [[11, 11, 24, 24, 6]]);
  assert.deepEqual(groupRectangles([box(10, 10, 24), box(11, 10, 24), box(10, 11, 24), box(14, 14, 12), box(15, 14, 12), box(14, 15, 12)], 2).map((d) => d.neighbors), [3, 3], 'n2 = 3 is not > max(3, 3): both kept');
  assert.deepEqual(clipToImage([box(-5, -5, 20)], 10, 10).map((d) => [d.x, d.y, d.width, d.height]), [[0, 0, 10, 10]]);
});

test('detect input checks: 16-bit, volumes, scale ≤ 1 and bad schedules are typed errors before any work', async () => {
  const c = await cascade('lbpcascade_frontalface.xml');
  const u16: Image = { data: new Uint16Array(64 * 64), shape: [64, 64], channels: 1, dtype: 'uint16' };
  await assert.rejects(detect(u16, c), UnsupportedDtypeError);
  const vol: Image = { data: new Uint8Array(4 * 32 * 32), shape: [4, 32, 32], channels: 1, dtype: 'uint8' };
  await assert.rejects(detect(vol, c), InvalidArgumentError);
  assert.throws(() => new Detector(c, { scale: 1 }), InvalidArgumentError);
  assert.throws(() => new Detector(c, { divisors: [1] }), InvalidArgumentError);
  assert.throws(() => new Detector(c, { stages: [0] }), InvalidArgumentError);
  // An image smaller than the window: no levels, no detections, no error.
  const tiny: Image = { data: new Uint8Array(20 * 20), shape: [20, 20], channels: 1, dtype: 'uint8' };
  assert.equal((await detect(tiny, c)).output.detections.length, 0);
  assert.equal(pyramidLevels(20, 20, c.window, { scale: 1.1 }).length, 0);
  assert.deepEqual(hitBoxes([], []), []);
});

test('one declaration: the options type is derived from detectParams, and its ranges hold for every entry point (scale > 1 as cv2, no upper bound)', async () => {
  const c = await cascade('lbpcascade_frontalface.xml');
  const img = await readImage(fixture('detect', 'astronaut.png'));
  // A typed call as a user writes it: every option is checked by the compiler against the declaration.
  const o: DetectOptions = { scale: 20, minNeighbors: 0, minSize: { width: 30, height: 30 }, impl: 'naive', stages: [3, 9], divisors: [8, 4], pool };
  const r = await detect(img, c, o);
  assert.deepEqual(r.output.levels.map((l) => l.factor), [20], 'factor 1 is below minSize; 20 is the last that fits');
  const same = await detectObjects(img, { classifier: c, ...o });
  assert.deepEqual(hitKey(same.output), hitKey(r.output));
  assert.equal(detectObjects.op.name, 'detect');
  // scale ≤ 1 is refused by the declaration (API, Detector and CLI alike); a factor so near 1 that the pyramid
  // passes 4096 levels by pyramidLevels, for every entry point too.
  await assert.rejects(detect(img, c, { scale: 1 }), /scale must be > 1/);
  await assert.rejects(detectObjects(img, { classifier: c, scale: 0.5 }), /scale must be > 1/);
  await assert.rejects(detect(img, c, { scale: 1.00005 }), /4096 pyramid levels/);
  await assert.rejects(detect(img, c, { nms: 2 }), /nms must be ≤ 1/);
  await assert.rejects(detectObjects(img, {}), /needs a classifier/);
});

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { lumaOf } from '../../src/core/colour.js';
import { InvalidArgumentError, UnsupportedDtypeError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { createImage, imageFrom, toGray, type Image } from '../../src/core/image.js';
import type { OpResult } from '../../src/core/timings.js';
import { readImage } from '../../src/io/index.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { clahe, type ClaheOptions } from '../../src/ops/clahe/index.js';
import { tileLut, windowLutValue } from '../../src/ops/clahe/cpu-kernels.js';
import { reflect101Index } from '../../src/core/border.js';
import { mirror, windowGeometry } from '../../src/ops/clahe/plan.js';
import { CLAHE_TILED_VARIANTS } from '../../src/ops/clahe/gpu.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { claheWindowReference } from '../helpers/window-reference.js';

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

// Inputs and the cv2.createCLAHE outputs made by scripts/make_clahe_fixtures.py.
const OPENCV_CASES: { input: string; ref: string; clip: number; tiles: [number, number] }[] = [
  { input: 'camera.png', ref: 'camera-8x8-2.png', clip: 2, tiles: [8, 8] },
  { input: 'moon.png', ref: 'moon-7x5-3.png', clip: 3, tiles: [7, 5] },
  { input: 'coins.png', ref: 'coins-8x8-2.png', clip: 2, tiles: [8, 8] },
  { input: 'coins.png', ref: 'coins-16x16-40.png', clip: 40, tiles: [16, 16] },
  { input: 'page.png', ref: 'page-4x3-1.png', clip: 1, tiles: [4, 3] },
  { input: 'camera_301x256.png', ref: 'camera_301x256-8x8-2.png', clip: 2, tiles: [8, 8] },
  { input: 'moon16.png', ref: 'moon16-8x8-2.png', clip: 2, tiles: [8, 8] },
  { input: 'moon16.png', ref: 'moon16-5x3-4.png', clip: 4, tiles: [5, 3] },
  // 256 MiB of 16-bit tile histograms: the GPU takes them in bands (lavapipe binds 128 MiB).
  { input: 'moon16.png', ref: 'moon16-32x32-2.png', clip: 2, tiles: [32, 32] },
  { input: 'chelsea.png', ref: 'chelsea-8x8-2.png', clip: 2, tiles: [8, 8] },
  { input: 'chelsea16.png', ref: 'chelsea16-8x8-2.png', clip: 2, tiles: [8, 8] },
];

for (const c of OPENCV_CASES) {
  const tiles = { width: c.tiles[0], height: c.tiles[1] };
  test(`tiled CLAHE equals cv2.createCLAHE(${c.clip}, ${c.tiles.join('x')}) on ${c.input}: CPU and GPU`, async (t) => {
    const img = await readImage(fixture('images', c.input));
    const ref = await readImage(fixture('clahe', c.ref));
    assertSame((await clahe(img, { tiles, clip: c.clip })).output, ref, 'cpu');
    const gpu = await gpuOrSkip(t);
    if (gpu) assertSame((await clahe(img, { tiles, clip: c.clip, gpu })).output, ref, 'gpu');
  });
}

test('RGB → YCrCb Y is the OpenCV gray; colour keeps its channels and dtype', async () => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  assertSame(lumaOf(img), toGray(img), 'Y vs gray');
  const out = (await clahe(img)).output;
  assert.equal(out.channels, 3);
  const img16 = await readImage(fixture('images', 'chelsea16.png'));
  assert.equal((await clahe(img16)).output.dtype, 'uint16');
});

/** OpenCV's rule applied to a whole window histogram, the value at v (the definition windowLutValue shortcuts). */
function ruleValue(hist: Uint32Array, limit: number, area: number, scale: number, v: number): number {
  const lut = new Uint8Array(256);
  tileLut(hist.slice(), limit, scale, lut, 0);
  return lut[v];
}

test("windowLutValue equals OpenCV's tile rule on random windows and clip limits", () => {
  let seed = 7;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  for (let trial = 0; trial < 3000; trial++) {
    const r = 1 + rnd(20);
    const clip = [0.5, 1, 2, 4, 40, 1e6][rnd(6)];
    const g = windowGeometry(r, clip);
    const hist = new Uint32Array(256);
    // Concentrated histograms (few distinct values) exercise clipping; spread ones the residual rule.
    const distinct = 1 + rnd(trial % 2 ? 6 : 256);
    const base = rnd(256);
    for (let i = 0; i < g.area; i++) hist[(base + rnd(distinct) * (1 + rnd(3))) & 255]++;
    const v = rnd(256);
    let p = 0, s = 0;
    for (let b = 0; b < 256; b++) {
      const m = Math.min(hist[b], g.clipLimit);
      s += m;
      if (b <= v) p += m;
    }
    assert.equal(windowLutValue(p, s, v, g.area, g.lutScale), ruleValue(hist, g.clipLimit, g.area, g.lutScale, v), `trial ${trial}, r ${r}, clip ${clip}, v ${v}`);
  }
});

test('mirror modes: reflect repeats the edge pixel, reflect101 does not', () => {
  assert.deepEqual([-3, -2, -1, 0, 4, 5, 6].map((p) => mirror(p, 5, 'reflect')), [2, 1, 0, 0, 4, 4, 3]);
  assert.deepEqual([-3, -2, -1, 0, 4, 5, 6].map((p) => mirror(p, 5, 'reflect101')), [3, 2, 1, 0, 4, 3, 2]);
  assert.deepEqual([3, 4, 5, 6, 7, 8, -1, -4].map((p) => reflect101Index(p, 3)), [1, 0, 1, 2, 1, 0, 1, 0]);
});

// The references: window_reference.py (numpy, written from docs/clahe.md's definition, nothing of imgpu's code): every
// pixel's whole mirrored window histogram, OpenCV's clip-and-redistribute rule on all 256 bins.
for (const border of ['reflect101', 'reflect'] as const) {
  test(`sliding-window CLAHE (${border}): CPU and GPU (naive and columns) equal an independent per-pixel numpy reference, on a 512×512 photo, a real 301×256 one and odd crops`, async (t) => {
    const photo = await readImage(fixture('images', 'camera.png'));
    // A real crop with odd sizes (not multiples of the GPU tiles), and random noise.
    const crop = imageFrom(new Uint8Array(61 * 43), [43, 61]);
    for (let y = 0; y < 43; y++) for (let x = 0; x < 61; x++) crop.data[y * 61 + x] = photo.data[(200 + y) * 512 + 150 + x];
    const noise = imageFrom(randomBytes(37 * 53, 3, 256), [37, 53]);
    // Taller and wider than one GPU column tile (64 rows, ≥ 32 columns): several tiles in both directions.
    const tall = imageFrom(new Uint8Array(150 * 90), [150, 90]);
    for (let y = 0; y < 150; y++) for (let x = 0; x < 90; x++) tall.data[y * 90 + x] = photo.data[(300 + y) * 512 + 40 + x];
    const odd = await readImage(fixture('images', 'camera_301x256.png'));
    const cases = ([[crop, 5, 2], [crop, 10, 4], [noise, 3, 1], [noise, 17, 40], [tall, 12, 3], [odd, 7, 2.5], [photo, border === 'reflect' ? 10 : 4, 3]] as const)
      .map(([img, radius, clip]) => ({ img, radius, clip, border }));
    const refs = claheWindowReference(cases);
    const gpu = await gpuOrSkip(t);
    for (const [i, { img, radius: r, clip }] of cases.entries()) {
      const what = `${img.shape.join('×')} r=${r} clip ${clip}`;
      assertSame((await clahe(img, { window: r, clip, border })).output, refs[i], `cpu ${what}`);
      if (!gpu) continue;
      for (const scheme of ['naive', 'columns'] as const) {
        const res = await clahe(img, { window: r, clip, border, scheme, gpu, profile: true });
        assert.ok(res.timings.kernels.some((k) => k.name === `clahe.window.${scheme}`), `the ${scheme} kernel ran`);
        assertSame(res.output, refs[i], `gpu ${scheme} ${what}`);
      }
    }
  });
}

test('the column kernel without subgroups (its other reduction) equals the CPU', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const gpu = await createNodeGpuContext({ withoutFeatures: ['subgroups'] });
  try {
    const photo = await readImage(fixture('images', 'coins.png'));
    for (const r of [4, 15]) {
      const res = await clahe(photo, { window: r, clip: 3, gpu, profile: true });
      assert.ok(res.timings.kernels.some((k) => k.name === 'clahe.window.columns'));
      assertSame(res.output, (await clahe(photo, { window: r, clip: 3 })).output, `r=${r}`);
    }
  } finally {
    gpu.destroy();
  }
});

test('GPU equals CPU on odd sizes, 8 and 16-bit, and on a resident GpuImage', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const [h, w, tx, ty] of [[1, 1, 1, 1], [7, 5, 3, 2], [97, 131, 8, 8], [256, 333, 16, 5]]) {
    for (const img of [imageFrom(randomBytes(w * h, h * w, 256), [h, w]), imageFrom(randomU16(w * h, h + w, 4096), [h, w])]) {
      const opts = { tiles: { width: tx, height: ty }, clip: 2 };
      const cpu = (await clahe(img, opts)).output;
      assertSame((await clahe(img, { ...opts, gpu })).output, cpu, `${img.dtype} ${w}×${h} tiles ${tx}x${ty}`);
    }
  }
  const img = await readImage(fixture('images', 'coins.png'));
  const dev = await GpuImage.upload(gpu, img);
  const tiled = await clahe(dev);
  const window = await clahe(dev, { window: 7 });
  assert.ok(tiled.output instanceof GpuImage && window.output instanceof GpuImage);
  assertSame(await tiled.output.toHost(), (await clahe(img)).output, 'resident tiled');
  assertSame(await window.output.toHost(), (await clahe(img, { window: 7 })).output, 'resident window');
  for (const g of [dev, tiled.output, window.output]) g.release();
});

/** Smooth 8-bit test image with flat runs (words of 4 equal bytes: tile_hist_private's one-atomic path) and noise. */
function patchy(h: number, w: number, seed: number): Image {
  const noise = randomBytes(w * h, seed, 256);
  const data = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) data[y * w + x] = (x >> 3) % 3 === 0 ? noise[y * w + x] : ((x >> 5) * 37 + (y >> 2) * 11) & 255;
  }
  return imageFrom(data, [h, w]);
}

test('every 8-bit tiled kernel variant (the context option variants.claheTiled) equals the CPU on odd sizes', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  // Widths: multiples of 16 (strips of 16), of 8 and of 4 only (narrower strips), odd (word kernel); images
  // smaller than one strip or tile; tiles whose rows start off a 16-byte boundary; a grid with REFLECT_101 padding.
  const cases: [number, number, number, number][] = [[1, 1, 1, 1], [3, 16, 2, 2], [9, 20, 3, 2], [37, 24, 8, 8], [97, 131, 8, 8], [64, 64, 2, 2], [256, 336, 16, 5], [300, 480, 8, 8]];
  const inputs = cases.flatMap(([h, w, tx, ty]) => [imageFrom(randomBytes(w * h, h * w + 3, 256), [h, w]), patchy(h, w, h + w)]
    .map((img) => ({ img, opts: { tiles: { width: tx, height: ty }, clip: 2 } })));
  const expected = await Promise.all(inputs.map(async ({ img, opts }) => (await clahe(img, opts)).output));
  for (const name of Object.keys(CLAHE_TILED_VARIANTS)) {
    // A context of its own: pooled output buffers cannot hold another variant's (correct) pixels.
    const gpu = await createNodeGpuContext({ variants: { claheTiled: name } });
    try {
      for (const [i, { img, opts }] of inputs.entries()) {
        assertSame((await clahe(img, { ...opts, gpu })).output, expected[i], `${name} ${img.shape[1]}×${img.shape[0]} tiles ${opts.tiles.width}x${opts.tiles.height}`);
      }
    } finally {
      gpu.destroy();
    }
  }
  const bad = await createNodeGpuContext({ variants: { claheTiled: 'no-such-variant' } });
  try {
    await assert.rejects(clahe(patchy(8, 8, 1), { gpu: bad }), /option `variants.claheTiled`: unknown variant/);
  } finally {
    bad.destroy();
  }
});

test('worker pool gives the same result as the inline path', async () => {
  const pool = new NodeWorkerPool(2);
  try {
    const img = await readImage(fixture('images', 'moon.png'));
    assertSame((await clahe(img, { pool })).output, (await clahe(img)).output, 'tiled');
    assertSame((await clahe(img, { pool, window: 6 })).output, (await clahe(img, { window: 6 })).output, 'window');
    const m16 = await readImage(fixture('images', 'moon16.png'));
    assertSame((await clahe(m16, { pool, tiles: { width: 5, height: 3 } })).output, (await clahe(m16, { tiles: { width: 5, height: 3 } })).output, '16-bit');
  } finally {
    await pool.close();
  }
});

// CI builds the native pieces (IMGPU_REQUIRE_NATIVE=1, where a missing module fails below); elsewhere the test says why it skips.
const nativeSkip = new NodeWorkerPool(1).native || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native kernels not built (scripts/build-native.mjs)';

test('native interpolation (the pool\'s native threads) equals cv2.createCLAHE and the JavaScript loop: 8/16-bit, colour, odd sizes', { skip: nativeSkip }, async () => {
  const pool = new NodeWorkerPool(2);
  assert.ok(pool.native, 'dist/native/imgpu-native.node missing: did npm ci run scripts/build-native.mjs?');
  try {
    for (const c of OPENCV_CASES) {
      const img = await readImage(fixture('images', c.input));
      assertSame((await clahe(img, { pool, tiles: { width: c.tiles[0], height: c.tiles[1] }, clip: c.clip })).output, await readImage(fixture('clahe', c.ref)), `${c.input} ${c.tiles.join('x')}`);
    }
    for (const [h, w, tx, ty] of [[1, 1, 1, 1], [7, 5, 3, 2], [97, 131, 8, 8], [53, 301, 16, 5]]) {
      for (const img of [imageFrom(randomBytes(w * h, h * w, 256), [h, w]), imageFrom(randomU16(w * h, h + w, 4096), [h, w])]) {
        const opts = { tiles: { width: tx, height: ty }, clip: 2 };
        assertSame((await clahe(img, { ...opts, pool })).output, (await clahe(img, opts)).output, `${img.dtype} ${w}×${h} tiles ${tx}x${ty}`);
      }
    }
  } finally {
    await pool.close();
  }
});

test('bad input: typed errors before any work', async () => {
  const img = imageFrom(randomBytes(20 * 30), [20, 30]);
  await assert.rejects(clahe(img, { clip: 0 }), InvalidArgumentError);
  await assert.rejects(clahe(img, { clip: -1 }), InvalidArgumentError);
  await assert.rejects(clahe(img, { clip: Number.NaN }), InvalidArgumentError);
  await assert.rejects(clahe(img, { tiles: { width: 0, height: 8 } }), InvalidArgumentError);
  await assert.rejects(clahe(img, { tiles: { width: 400, height: 400 } }), /131072 interpolation cells/);
  await assert.rejects(clahe(imageFrom(randomU16(600), [20, 30]), { tiles: { width: 33, height: 32 } }), /at most 1024 tiles/);
  await assert.rejects(clahe(img, { window: 0 }), InvalidArgumentError);
  await assert.rejects(clahe(img, { window: 20 }), InvalidArgumentError);
  await assert.rejects(clahe(imageFrom(new Float32Array(600), [20, 30])), UnsupportedDtypeError);
  await assert.rejects(clahe(imageFrom(randomU16(600), [20, 30]), { window: 3 }), UnsupportedDtypeError);
  await assert.rejects(clahe(imageFrom(randomBytes(1200), [2, 20, 30])), InvalidArgumentError);
});

// More tiles than pixels along an axis, images of one pixel: OpenCV pads (REFLECT_101, repeatedly where the padding
// is longer than the image) and returns a result (scripts/make_clahe_fixtures.py); imgpu refused these with exit 2.
const TINY: [string, [number, number][]][] = [
  ['tiny-4x4', [[2, 10], [10, 10], [10, 2], [8, 8], [3, 3]]],
  ['tiny-1x1', [[8, 8], [1, 1], [3, 1]]],
  ['tiny-5x3', [[7, 2], [2, 7], [5, 3]]],
  ['tiny-4x4-16', [[2, 10], [10, 10]]],
];
test('tile grids with more tiles than pixels equal cv2.createCLAHE (OpenCV pads), CPU and GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  for (const [stem, grids] of TINY) {
    const img = await readImage(fixture('clahe', `${stem}.png`));
    for (const [width, height] of grids) {
      const ref = await readImage(fixture('clahe', `${stem}-${width}x${height}-2.png`));
      assertSame((await clahe(img, { tiles: { width, height } })).output, ref, `cpu ${stem} ${width}x${height}`);
      if (gpu) assertSame((await clahe(img, { tiles: { width, height }, gpu })).output, ref, `gpu ${stem} ${width}x${height}`);
    }
  }
});

test('images and tile histograms beyond one storage binding: tiled CLAHE in bands and row slabs, windows in slabs (GPU equals CPU)', async (t) => {
  // 128 KiB bindings for 8-bit: a 300×451 image takes row slabs (the grids' interpolation cells fit); 2 MiB for 16-bit: 8 tile histograms of 65536 bins a
  // band, and row slabs of a 1201×1003 image.
  const cat = await readImage(fixture('images', 'chelsea_gray_cv2.png'));
  const small = await gpuWithBindingLimit(t, 128 << 10);
  if (!small) return;
  for (const tiles of [{ width: 8, height: 8 }, { width: 7, height: 5 }, { width: 10, height: 9 }]) {
    const r = await clahe(cat, { tiles, gpu: small });
    assert.ok((r.timings.slabs ?? 1) > 1, 'split');
    assertSame(r.output, (await clahe(cat, { tiles })).output, `8-bit tiled ${tiles.width}x${tiles.height}`);
  }
  // A width of 16-pixel strips (interpolate_strips in row slabs); the tiles band by band.
  const wide = patchy(320, 480, 5);
  const strips = await clahe(wide, { gpu: small });
  assert.ok((strips.timings.slabs ?? 1) > 1, 'split');
  assertSame(strips.output, (await clahe(wide)).output, '8-bit tiled, strips in slabs');
  for (const window of [5, 20]) {
    const r = await clahe(cat, { window, gpu: small });
    assert.ok((r.timings.slabs ?? 1) > 1, 'split');
    assertSame(r.output, (await clahe(cat, { window })).output, `window ${window}`);
  }
  const img16 = imageFrom(randomU16(1201 * 1003, 41, 5000), [1201, 1003]);
  const mid = await gpuWithBindingLimit(t, 2 << 20);
  for (const tiles of [{ width: 4, height: 4 }, { width: 3, height: 5 }]) {
    const r = await clahe(img16, { tiles, gpu: mid });
    assert.ok((r.timings.slabs ?? 1) > 1, 'split');
    assertSame(r.output, (await clahe(img16, { tiles })).output, `16-bit tiled ${tiles.width}x${tiles.height}`);
  }
});

test('ClaheOptions is derived from the declaration: typed values, impl and its old name scheme', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const opts: ClaheOptions = { tiles: { width: 4, height: 6 }, clip: 3, border: 'reflect', impl: 'naive' };
  // @ts-expect-error: not a scheme (the declaration's choices are the type)
  const wrong: ClaheOptions = { impl: 'fast' };
  // @ts-expect-error: clip is a number
  const wrongClip: ClaheOptions = { clip: '2' };
  await assert.rejects(clahe(img, wrong), /impl\/scheme must be one of columns\|naive/);
  await assert.rejects(clahe(img, wrongClip), /clip must be a finite number/);
  await assert.rejects(clahe(img, { impl: 'naive', scheme: 'columns' }), /impl and scheme \(another name for it\) are both given/);
  assertSame((await clahe(img, opts)).output, (await clahe(img, { tiles: { width: 4, height: 6 }, clip: 3 })).output, 'tiled ignores the window options');
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const cpu = (await clahe(img, { window: 5, border: 'reflect' })).output;
  for (const [o, kernel] of [[{ impl: 'naive' }, 'naive'], [{ scheme: 'naive' }, 'naive'], [{ scheme: 'columns' }, 'columns'], [{}, 'columns']] as const) {
    const r: OpResult<Image> = await clahe(img, { window: 5, border: 'reflect', gpu, profile: true, ...o });
    assert.deepEqual(r.timings.kernels.map((k) => k.name), [`clahe.window.${kernel}`], JSON.stringify(o));
    assertSame(r.output, cpu, JSON.stringify(o));
  }
});

test('colour CLAHE into the caller\'s out: checked against the colour image, filled, timed as before', async (t) => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  const ref = (await clahe(img)).output;
  const out = createImage(img.shape, img.dtype, img.channels);
  const r = await clahe(img, { out });
  assert.equal(r.output, out);
  assertSame(out, ref, 'cpu into out');
  assert.deepEqual(r.timings.kernels.map((k) => k.name), ['clahe.tiled']);
  assert.deepEqual((await clahe(img, { window: 4 })).timings.kernels.map((k) => k.name), ['clahe.window']);
  await assert.rejects(clahe(img, { out: createImage(img.shape, img.dtype, 1) }), InvalidArgumentError);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const out2 = createImage(img.shape, img.dtype, img.channels);
  const g = await clahe(img, { out: out2, gpu });
  assert.equal(g.output, out2);
  assertSame(out2, ref, 'gpu into out');
  assert.equal(g.timings.backend, 'gpu');
});

test('CLI: --impl and its old name --scheme; --border takes the OpenCV and scipy names', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'imgpu-clahe-'));
  const img = fixture('images', 'coins.png');
  const run = (...args: string[]) => {
    const r = cli('clahe', img, join(tmp, `${args.join('_').replace(/[^\w]/g, '')}.png`), '--window', '4', '--json', ...args);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { params: Record<string, unknown>; gpu: { kernels: { name: string }[] } | null };
  };
  assert.equal(run('--device', 'cpu', '--border', 'mirror').params.border, 'reflect101');
  assert.equal(run('--device', 'cpu', '--border', 'BORDER_REFLECT').params.border, 'reflect');
  assertOneLineError(cli('clahe', img, join(tmp, 'x.png'), '--border', 'wrap', '--device', 'cpu'), 2, /border must be one of reflect101\|reflect/);
  if (!(await gpuOrSkip(t))) return;
  for (const flag of ['--impl', '--scheme']) {
    const j = run('--device', 'gpu', flag, 'naive');
    assert.equal(j.params.impl, 'naive');
    assert.deepEqual(j.gpu!.kernels.map((k) => k.name), ['clahe.window.naive'], flag);
  }
});

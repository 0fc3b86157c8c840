import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { GpuLimitError, InvalidArgumentError, UnsupportedDtypeError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { DEFAULT_MORPH_SCHEDULE, MorphGpu, morphSchedule, type MorphSchedule } from '../../src/ops/morph/gpu.js';
import { dilate, ellipseElement, erode, maskElement, morph, parseElement, type MorphOptions } from '../../src/ops/morph/index.js';
import { cli } from '../helpers/cli.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';

/** The element's spec for test names ('rect:7x9'), 'mask' for an element given as an array. */
const seName = (se: MorphOptions['se']): string => (typeof se === 'string' ? se : 'mask');

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} elements differ (max |diff| ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

// [input, reference (scripts/make_morph_fixtures.py), options]
const CASES: [string, string, MorphOptions][] = [
  ...[3, 7, 15, 27, 51].map((k): [string, string, MorphOptions] => ['camera.png', `cv-camera-erode-rect${k}.png`, { op: 'erode', se: `rect:${k}x${k}` }]),
  ['camera.png', 'cv-camera-dilate-rect3.png', { op: 'dilate', se: 'rect:3x3' }],
  ['camera.png', 'cv-camera-dilate-rect51.png', { op: 'dilate', se: 'rect:51x51' }],
  ['chelsea_gray_cv2.png', 'cv-cat-erode-rect7x5.png', { op: 'erode', se: 'rect:7x5' }],
  ['chelsea_gray_cv2.png', 'cv-cat-dilate-rect4x6.png', { op: 'dilate', se: 'rect:4x6' }],
  ['chelsea_gray_cv2.png', 'cv-cat-erode-lineh15.png', { op: 'erode', se: 'line:15:h' }],
  ['chelsea_gray_cv2.png', 'cv-cat-dilate-linev15.png', { op: 'dilate', se: 'line:15:v' }],
  ['chelsea_gray_cv2.png', 'cv-cat-erode-rect5x5-it3.png', { op: 'erode', se: 'rect:5x5', iterations: 3 }],
  ...(['open', 'close', 'gradient', 'tophat', 'blackhat'] as const).map((op): [string, string, MorphOptions] => ['chelsea_gray_cv2.png', `cv-cat-${op}-rect5x5-it2.png`, { op, se: 'rect:5x5', iterations: 2 }]),
  ['chelsea_gray_cv2.png', 'cv-cat-erode-cross5.png', { op: 'erode', se: 'cross:5' }],
  ['chelsea_gray_cv2.png', 'cv-cat-dilate-ellipse7x7.png', { op: 'dilate', se: 'ellipse:7x7' }],
  ['chelsea_gray_cv2.png', 'cv-cat-erode-ellipse9x5-it2.png', { op: 'erode', se: 'ellipse:9x5', iterations: 2 }],
  ['chelsea_gray_cv2.png', 'sp-cat-erode-5x4.png', { op: 'erode', se: 'rect:5x4', border: 'scipy' }],
  ['chelsea_gray_cv2.png', 'sp-cat-dilate-4x6.png', { op: 'dilate', se: 'rect:4x6', border: 'scipy' }],
  ['chelsea_gray_cv2.png', 'sp-cat-open-5x5.png', { op: 'open', se: 'rect:5x5', border: 'scipy' }],
  ['chelsea_gray_cv2.png', 'sp-cat-close-6x3.png', { op: 'close', se: 'rect:6x3', border: 'scipy' }],
  ['camera_f32.npy', 'sp-f32-erode-5x5.npy', { op: 'erode', se: 'rect:5x5', border: 'scipy' }],
  ['camera_f32.npy', 'sp-f32-dilate-6x3.npy', { op: 'dilate', se: 'rect:6x3', border: 'scipy' }],
  ['volume_f32.npy', 'sp-vol-erode-4x5x3.npy', { op: 'erode', se: 'box:4x5x3', border: 'scipy' }],
  ['volume_f32.npy', 'sp-vol-dilate-5x3x4.npy', { op: 'dilate', se: 'box:5x3x4', border: 'scipy' }],
  ['volume_u8.npy', 'sp-vol8-open-3x3x3.npy', { op: 'open', se: 'box:3x3x3', border: 'scipy' }],
];

for (const [input, ref, opts] of CASES) {
  const lib = ref.startsWith('cv') ? 'OpenCV' : 'scipy';
  test(`${opts.op} ${seName(opts.se)}${opts.iterations ? ` ×${opts.iterations}` : ''} on ${input} equals ${lib} (${ref}): CPU and GPU`, async (t) => {
    const img = await readImage(fixture('images', input));
    const expected = await readImage(fixture('morph', ref));
    assertSame((await morph(img, opts)).output, expected, 'cpu');
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    assertSame((await morph(img, { ...opts, gpu })).output, expected, 'gpu');
    if (!seName(opts.se).startsWith('rect') && !seName(opts.se).startsWith('line') && !seName(opts.se).startsWith('box')) return;
    assertSame((await morph(img, { ...opts, gpu, method: 'naive' })).output, expected, 'gpu naive');
  });
}

test("ellipse elements are OpenCV's rasterization", async () => {
  for (const [w, h] of [[7, 7], [9, 5], [6, 4]]) {
    const ref = await readImage(fixture('morph', `se-ellipse${w}x${h}.npy`));
    assert.deepEqual([...ellipseElement(w, h)], [...ref.data], `ellipse ${w}x${h}`);
  }
});

test('vHGW equals the direct kernel on random images (odd sizes, all dtypes, 2D and 3D, both borders), CPU and GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  const images = [
    imageFrom(randomBytes(37 * 53, 11), [37, 53]),
    imageFrom(randomU16(19 * 23, 12), [19, 23]),
    imageFrom(Float32Array.from(randomU16(13 * 17 * 9, 13), (v) => v / 7 - 3000), [9, 13, 17]),
    imageFrom(randomBytes(5 * 7 * 6, 14), [5, 7, 6]),
  ];
  for (const img of images) {
    const is3d = img.shape.length === 3;
    for (const se of is3d ? ['box:3x4x2', 'box:5x1x3', 'line:4:d'] : ['rect:5x3', 'rect:2x6', 'line:9:h', 'rect:60x2', 'line:700:h']) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate', 'gradient'] as const) {
          const opts: MorphOptions = { op, se, border, iterations: op === 'erode' ? 2 : 1 };
          const naive = (await morph(img, { ...opts, method: 'naive' })).output;
          const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border}`;
          assertSame((await morph(img, opts)).output, naive, `cpu ${what}`);
          if (gpu) assertSame((await morph(img, { ...opts, gpu })).output, naive, `gpu ${what}`);
        }
      }
    }
  }
});

/** One erosion or dilation on the GPU through MorphGpu with a given schedule (the public API takes the default). */
async function primitiveWith(gpu: GpuContext, img: Image, op: 'erode' | 'dilate', se: string, border: 'opencv' | 'scipy', schedule: MorphSchedule): Promise<Image> {
  const dev = await GpuImage.upload(gpu, img);
  const m = new MorphGpu(gpu, img.dtype as 'uint8', schedule);
  const rec = new Recording(gpu, new KernelTimer(gpu, false), 'test');
  const out = await m.fromAligned(rec, await m.primitive(rec, await m.toAligned(rec, dev), op, parseElement(se), border, 1, 'auto'), dev.shape, false);
  rec.submit();
  const host = await out.toHost();
  out.release();
  dev.release();
  return host;
}

test('the direct x kernel (short windows, one word per invocation) equals the CPU and vHGW: all dtypes, odd sizes, 2D and 3D, both borders', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const direct: MorphSchedule = { ...DEFAULT_MORPH_SCHEDULE, directX: 1000 };
  const vhgw: MorphSchedule = { ...DEFAULT_MORPH_SCHEDULE, directX: 0, segX: 0, segY: 0 };
  const images = [
    imageFrom(randomBytes(29 * 43, 41), [29, 43]),
    imageFrom(randomU16(17 * 21, 42), [17, 21]),
    imageFrom(Float32Array.from(randomU16(15 * 13, 43), (v) => v / 7 - 3000), [15, 13]),
    imageFrom(randomBytes(5 * 9 * 11, 44), [5, 9, 11]),
  ];
  for (const img of images) {
    const ses = img.shape.length === 3 ? ['box:3x3x3', 'box:4x2x5'] : ['rect:3x3', 'rect:2x5', 'rect:8x1', 'rect:7x7', 'rect:30x19'];
    for (const se of ses) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate'] as const) {
          const cpu = (await morph(img, { op, se, border })).output;
          const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border}`;
          assertSame(await primitiveWith(gpu, img, op, se, border, direct), cpu, `direct ${what}`);
          assertSame(await primitiveWith(gpu, img, op, se, border, vhgw), cpu, `vHGW ${what}`);
        }
      }
    }
  }
});

test('the register-segment kernels (segX / segY, packed-byte min/max) equal the CPU: all dtypes, odd sizes, 2D and 3D, both borders, chunked and long windows', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // Two passes (fuseTW 0), the x pass on unpacked lanes (the default) and on packed words, the y pass on unpacked
  // lanes (unpackY); the fused kernel's own test is below.
  const schedules: MorphSchedule[] = [
    { ...DEFAULT_MORPH_SCHEDULE, fuseTW: 0 },
    { ...DEFAULT_MORPH_SCHEDULE, segX: 4, segY: 16, segYCols: 16, swar: false, directX: 0, fuseTW: 0, unpackX: false },
    { ...DEFAULT_MORPH_SCHEDULE, segX: 8, unpackX: true, unpackY: true, fuseTW: 0 },
  ];
  const images = [
    imageFrom(randomBytes(61 * 157, 51), [61, 157]),
    // Rows long enough for workgroups of the rows kernel clear of the border (64 segments of 4 words and the halo).
    imageFrom(randomBytes(3 * 2203, 55), [3, 2203]),
    imageFrom(randomU16(37 * 45, 52), [37, 45]),
    imageFrom(Float32Array.from(randomU16(23 * 31, 53), (v) => v / 7 - 3000), [23, 31]),
    imageFrom(randomBytes(6 * 11 * 21, 54), [6, 11, 21]),
  ];
  for (const img of images) {
    // u8 61×157: the rows kernel at windows of 8 … 101 (two chunks at 8, one long middle at 101) and the lines
    // kernel up to 51 (101 rows exceed the image: vHGW); u16, f32 and the depth axis once each.
    const ses = img.dtype === 'uint8'
      ? (img.shape.length === 3 ? ['box:9x3x5'] : img.shape[1] > 1000 ? ['rect:51x3', 'rect:16x1'] : ['rect:8x9', 'rect:40x1', 'rect:51x51', 'rect:101x101'])
      : img.dtype === 'uint16' ? ['rect:13x2', 'rect:1x30'] : ['rect:9x9'];
    for (const se of ses) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate'] as const) {
          const cpu = (await morph(img, { op, se, border })).output;
          for (const s of schedules) {
            const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border} segX ${s.segX} segY ${s.segY} swar ${s.swar} unpackX ${s.unpackX} unpackY ${s.unpackY}`;
            assertSame(await primitiveWith(gpu, img, op, se, border, s), cpu, what);
          }
        }
      }
    }
  }
});

test('lanes with their pixel on top (laneTop, the default) and masked lanes, odd words an invocation along x (no skew), the y pass on unpacked lanes (unpackY) equal the CPU: u8 / u16 / f32, odd sizes, rows with workgroups clear of the border, 2D and 3D, both borders', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // The default (laneTop, unpackY, 5 words along x, 16 rows along y), odd and even words with masked lanes, and
  // 15 words with 32 rows and 64 columns on top lanes.
  const schedules: MorphSchedule[] = [
    { ...DEFAULT_MORPH_SCHEDULE },
    { ...DEFAULT_MORPH_SCHEDULE, laneTop: false, segX: 15, segY: 32, segYCols: 64 },
    { ...DEFAULT_MORPH_SCHEDULE, laneTop: true, segX: 15, segY: 32, segYCols: 64 },
  ];
  const images = [
    imageFrom(randomBytes(61 * 157, 61), [61, 157]),
    // Rows long enough for workgroups of 64 × 15 words and the halo of a 101-pixel window clear of the border.
    imageFrom(randomBytes(2 * 8011, 62), [2, 8011]),
    imageFrom(randomU16(37 * 45, 63), [37, 45]),
    imageFrom(Float32Array.from(randomU16(23 * 31, 64), (v) => v / 7 - 3000), [23, 31]),
    imageFrom(randomBytes(6 * 11 * 21, 65), [6, 11, 21]),
  ];
  for (const img of images) {
    const ses = img.dtype === 'uint8'
      ? (img.shape.length === 3 ? ['box:9x3x5'] : img.shape[1] > 1000 ? ['rect:101x1', 'rect:50x2'] : ['rect:8x9', 'rect:51x51', 'rect:101x31'])
      : img.dtype === 'uint16' ? ['rect:13x2', 'rect:40x30'] : ['rect:9x9'];
    for (const se of ses) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate'] as const) {
          const cpu = (await morph(img, { op, se, border })).output;
          for (const s of schedules) {
            const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border} segX ${s.segX} segY ${s.segY} laneTop ${s.laneTop} unpackY ${s.unpackY}`;
            assertSame(await primitiveWith(gpu, img, op, se, border, s), cpu, what);
          }
        }
      }
    }
  }
});

test('the y kernel on strips of four words (yVec4) equals the CPU: all dtypes, widths not multiples of 16 or 4, one strip narrower than 16 pixels, word counts not multiples of 4 (the u32 kernel), 2D and 3D, both borders, windows as long as the image', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const strips = (s: Partial<MorphSchedule>): MorphSchedule => ({ ...DEFAULT_MORPH_SCHEDULE, yVec4: true, fuseTW: 0, ...s });
  const schedules = [strips({ segY: 8, segYCols: 64 }), strips({ segY: 16, segYCols: 8, swar: false })];
  // Words a row (u8: ⌈w / 4⌉, u16: ⌈w / 2⌉): 40, 4 (one strip, 13 pixels), 16, 13 (not a multiple of 4), 8, 12;
  // the volume's z lines have 11 · 4 words.
  // Per image its elements: chunked (9 rows: segments of 16 take two chunks) and long windows, a window as long as
  // the image and one beyond it; the shader compilations dominate the time on lavapipe, so few windows.
  const cases: [Image, string[]][] = [
    [ramped([61, 157], 61), ['rect:1x9', 'rect:3x40', 'rect:51x51']],
    [ramped([45, 13], 62), ['rect:1x45', 'rect:1x200']],
    [ramped([30, 61], 63), ['rect:3x40']],
    [ramped([20, 50], 64), ['rect:1x9']],
    [imageFrom(randomU16(37 * 15, 65), [37, 15]), ['rect:1x9', 'rect:1x37']],
    [imageFrom(Float32Array.from(randomU16(23 * 12, 66), (v) => v / 7 - 3000), [23, 12]), ['rect:1x9']],
    [ramped([6, 11, 16], 67), ['box:3x5x4']],
  ];
  for (const [img, ses] of cases) {
    for (const se of ses) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate'] as const) {
          const cpu = (await morph(img, { op, se, border })).output;
          for (const s of schedules) {
            const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border} segY ${s.segY} segYCols ${s.segYCols} swar ${s.swar}`;
            assertSame(await primitiveWith(gpu, img, op, se, border, s), cpu, what);
          }
        }
      }
    }
  }
});

test('variants.morphSchedule: fields over the default; anything else a typed error', () => {
  assert.deepEqual(morphSchedule(undefined), DEFAULT_MORPH_SCHEDULE);
  assert.deepEqual(morphSchedule('{"yVec4":true,"segY":16}'), { ...DEFAULT_MORPH_SCHEDULE, yVec4: true, segY: 16 });
  for (const bad of ['{', '[1]', '3', '{"segY":"16"}', '{"nope":1}']) assert.throws(() => morphSchedule(bad), InvalidArgumentError, bad);
});

/**
 * u8 noise over a diagonal ramp (x + 2y mod 240): a window's minimum (maximum) is set by where it lies, not by the
 * noise alone — on plain noise a 101-pixel window's minimum is 0 almost everywhere, hiding misplaced windows.
 */
function ramped(shape: [number, number] | [number, number, number], seed: number): Image {
  const n = shape.reduce((a, b) => a * b);
  const w = shape[shape.length - 1], noise = randomBytes(n, seed);
  return imageFrom(Uint8Array.from(noise, (v, i) => ((i % w) + 2 * Math.floor(i / w)) % 240 + (v & 15)), shape);
}

test('the fused x+y kernel (fuseTW) equals the CPU: all dtypes, odd sizes (smaller than a tile, widths not multiples of 4), 2D and 3D, both borders, windows as long as the image', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const fused = (s: Partial<MorphSchedule>): MorphSchedule => ({ ...DEFAULT_MORPH_SCHEDULE, fuseTW: 32, fuseXS: 4, fuseYS: 8, fuseThreads: 256, unpackX: false, ...s });
  // Tiles of 32 words × 64 rows (8 rows an invocation, 4 words), and of 64 words × 8 rows (8 words an invocation)
  // without packed bytes, and the x pass on unpacked lanes; 150×1101 has tiles clear of every border (the unchecked
  // loads).
  const schedules = [fused({}), fused({ fuseTW: 64, fuseXS: 8, fuseYS: 2, swar: false }), fused({ fuseXS: 8, unpackX: true })];
  const images = [
    ramped([61, 157], 61),
    ramped([150, 1101], 62),
    ramped([9, 23], 63),
    imageFrom(randomU16(37 * 45, 64), [37, 45]),
    imageFrom(Float32Array.from(randomU16(23 * 31, 65), (v) => v / 7 - 3000), [23, 31]),
    // +∞ in the top 12 rows: OpenCV's border (FLT_MAX) must beat them there, as the fill rows of the x result.
    imageFrom(Float32Array.from(randomU16(23 * 31, 67), (v, i) => (i < 12 * 31 ? Infinity : v / 7)), [23, 31]),
    ramped([4, 11, 21], 66),
  ];
  for (const img of images) {
    const [h, w] = img.shape.slice(-2);
    // Windows as long as the image (one reflection), longer (the two passes take them), 51 and 101 at a tile's scale.
    const ses = img.dtype === 'uint8'
      ? (img.shape.length === 3 ? ['box:9x3x5'] : h === 150 ? ['rect:101x101', 'rect:9x150'] : h === 61 ? ['rect:51x51', 'rect:200x70'] : [`rect:${w}x${h}`])
      : img.dtype === 'float32' && img.data[0] === Infinity ? ['rect:9x9'] : [`rect:${w}x${h}`];
    for (const se of ses) {
      for (const border of ['opencv', 'scipy'] as const) {
        for (const op of ['erode', 'dilate'] as const) {
          const cpu = (await morph(img, { op, se, border })).output;
          for (const s of schedules) {
            const what = `${img.dtype} ${img.shape.join('×')} ${op} ${se} ${border} fused ${s.fuseTW}/${s.fuseXS}/${s.fuseYS} swar ${s.swar} unpack ${s.unpackX}`;
            assertSame(await primitiveWith(gpu, img, op, se, border, s), cpu, what);
          }
        }
      }
    }
  }
});

test('a user mask and a resident GpuImage', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const se = maskElement(Uint8Array.from([0, 1, 0, 1, 1, 1, 0, 1, 1]), [1, 3, 3], 'mask:test');
  const cpu = (await morph(img, { op: 'close', se })).output;
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const dev = await GpuImage.upload(gpu, img);
  const r = await morph(dev, { op: 'close', se });
  assert.ok(r.output instanceof GpuImage);
  assertSame(await r.output.toHost(), cpu, 'resident');
  r.output.release();
  dev.release();
});

test('float32 at infinities equals cv2: ±FLT_MAX border (a window of border only, border beats ±inf), ±inf inside (issue 24 item 17)', async (t) => {
  // scripts/make_parity_fixtures.py: cv2.erode/dilate of a 6×7 float32 holding ±inf.
  const load = async (name: string) => readImage(fixture('morph', `inf-${name}.npy`));
  const img = await load('input');
  const corner = maskElement(Uint8Array.from([1, 0, 0, 0, 0, 0, 0, 0, 0]), [1, 3, 3], 'mask:corner');
  const cases: [string, MorphOptions][] = [
    ['rect3', { se: 'rect:3x3' }],
    ['rect5-it2', { se: 'rect:5x5', iterations: 2 }],
    ['corner', { se: corner }],
  ];
  const gpu = await gpuOrSkip(t);
  for (const [name, o] of cases) {
    for (const op of ['erode', 'dilate'] as const) {
      const want = await load(`${op}-${name}`);
      assertSame((await morph(img, { ...o, op })).output, want, `CPU ${op} ${name}`);
      if (gpu) assertSame((await morph(img, { ...o, op, gpu })).output, want, `GPU ${op} ${name}`);
    }
  }
});

test('worker pool gives the same result as the inline path', async () => {
  const pool = new NodeWorkerPool(3);
  try {
    const img = await readImage(fixture('images', 'camera.png'));
    for (const se of ['rect:15x9', 'ellipse:5x5']) {
      assertSame((await morph(img, { op: 'open', se, pool })).output, (await morph(img, { op: 'open', se })).output, se);
    }
    const vol = await readImage(fixture('images', 'volume_f32.npy'));
    assertSame((await morph(vol, { se: 'box:3x3x5', pool, border: 'scipy' })).output, (await morph(vol, { se: 'box:3x3x5', border: 'scipy' })).output, 'volume');
  } finally {
    await pool.close();
  }
});

test('bad input: typed errors', async () => {
  const img = imageFrom(randomBytes(20 * 30), [20, 30]);
  for (const se of ['rect:0x3', 'rect:3', 'line:5:q', 'disk:3', 'rect:axb', '']) {
    await assert.rejects(morph(img, { se }), InvalidArgumentError, se);
  }
  await assert.rejects(morph(img, { iterations: 0 }), InvalidArgumentError);
  await assert.rejects(morph(img, { se: 'box:3x3x3' }), InvalidArgumentError, '3D element on a 2D image');
  await assert.rejects(morph(img, { op: 'thin' as never }), InvalidArgumentError);
  assert.throws(() => maskElement(new Uint8Array(9), [1, 3, 3], 'mask:zeros'), InvalidArgumentError);
  await assert.rejects(morph(img, { se: maskElement(new Uint8Array(18).fill(1), [2, 3, 3], 'mask:3d') }), InvalidArgumentError, 'mask of the wrong rank');
  await assert.rejects(morph({ data: new Uint32Array(4), shape: [2, 2], channels: 1, dtype: 'uint32' } as never), (e: Error) => e instanceof InvalidArgumentError || e instanceof UnsupportedDtypeError);
});

// Elements far longer than the image, on a 29×45 crop (scripts/make_morph_fixtures.py): their windows are clamped to
// the image (plan.ts clampWindow) on both paths; the GPU kernel compiled a private array of the element's length
// (rect:100000x1 failed: "array count (100000) must be less than 65536").
const HUGE: [string, MorphOptions][] = [
  ['cv-small-erode-rect100000x1.png', { op: 'erode', se: 'rect:100000x1' }],
  ['cv-small-dilate-rect3x100000-it2.png', { op: 'dilate', se: 'rect:3x100000', iterations: 2 }],
  ['cv-small-erode-rect3000x3000.png', { op: 'erode', se: 'rect:3000x3000' }],
  ['cv-small-open-rect40x70.png', { op: 'open', se: 'rect:40x70' }],
  ['sp-small-erode-100000x70.png', { op: 'erode', se: 'rect:100000x70', border: 'scipy' }],
  ['sp-small-dilate-60x50.png', { op: 'dilate', se: 'rect:60x50', border: 'scipy' }],
];
test('elements far larger than the image equal OpenCV and scipy (windows clamped to the image), CPU and GPU', async (t) => {
  const img = await readImage(fixture('images', 'cat_29x45.png'));
  const gpu = await gpuOrSkip(t);
  for (const [ref, opts] of HUGE) {
    const expected = await readImage(fixture('morph', ref));
    assertSame((await morph(img, opts)).output, expected, `cpu ${ref}`);
    if (gpu) assertSame((await morph(img, { ...opts, gpu })).output, expected, `gpu ${ref}`);
  }
  // rect:100000x100000 (the issue's): every window covers the image, so erosion gives its minimum everywhere.
  const min = Math.min(...img.data);
  const all = imageFrom(new Uint8Array(img.data.length).fill(min), [...img.shape] as [number, number]);
  assertSame((await morph(img, { se: 'rect:100000x100000' })).output, all, 'cpu rect:100000x100000');
  if (gpu) assertSame((await morph(img, { se: 'rect:100000x100000', gpu })).output, all, 'gpu rect:100000x100000');
});

test('clamped windows equal the direct kernel (unclamped) for elements between one and two image sizes, both borders', async (t) => {
  const gpu = await gpuOrSkip(t);
  const img = imageFrom(randomBytes(23 * 31, 21), [23, 31]);
  for (const se of ['rect:45x30', 'rect:61x47', 'rect:70x3', 'rect:2x50']) {
    for (const border of ['opencv', 'scipy'] as const) {
      for (const [op, iterations] of [['erode', 1], ['dilate', 2], ['close', 1]] as const) {
        const opts: MorphOptions = { op, se, border, iterations };
        const naive = (await morph(img, { ...opts, method: 'naive' })).output;
        assertSame((await morph(img, opts)).output, naive, `cpu ${se} ${border} ${op}×${iterations}`);
        if (gpu) assertSame((await morph(img, { ...opts, gpu })).output, naive, `gpu ${se} ${border} ${op}×${iterations}`);
      }
    }
  }
});

test('huge elements that are not boxes are typed errors before any work (boxes of any size run)', async () => {
  const img = imageFrom(randomBytes(20 * 30), [20, 30]);
  for (const se of ['ellipse:100000x100000', 'cross:5000', 'ellipse:3000x2000']) await assert.rejects(morph(img, { se }), InvalidArgumentError, se);
  await assert.rejects(morph(img, { se: 'rect:3000x3000', method: 'naive' }), InvalidArgumentError, 'naive huge box');
  assert.throws(() => maskElement(new Uint8Array(3000 * 2000).fill(1).fill(0, 0, 1), [1, 2000, 3000], 'mask:big'), InvalidArgumentError, 'mask');
});

test('images beyond one storage binding run in row slabs (planes for volumes) with halos: GPU equals CPU', async (t) => {
  // 16 KiB bindings: a 200×301 image takes 53 aligned rows per slab, halos included.
  const gpu = await gpuWithBindingLimit(t, 16 << 10);
  if (!gpu) return;
  const images = [
    imageFrom(randomBytes(200 * 301, 31), [200, 301]),
    imageFrom(randomU16(97 * 123, 32), [97, 123]),
    imageFrom(Float32Array.from(randomU16(90 * 61, 33), (v) => v / 9 - 2000), [90, 61]),
  ];
  const cases: MorphOptions[] = [
    { op: 'erode', se: 'rect:7x9' }, { op: 'open', se: 'rect:5x5', iterations: 2 }, { op: 'tophat', se: 'ellipse:9x7' },
    { op: 'gradient', se: 'cross:5' }, { op: 'close', se: 'rect:6x4', border: 'scipy' }, { op: 'blackhat', se: 'rect:3x8', border: 'scipy', iterations: 2 },
  ];
  for (const img of images) {
    for (const opts of cases) {
      const what = `${img.dtype} ${opts.op} ${seName(opts.se)} ${opts.border ?? 'opencv'}×${opts.iterations ?? 1}`;
      const cpu = (await morph(img, opts)).output;
      const r = await morph(img, { ...opts, gpu });
      assert.ok((r.timings.slabs ?? 1) > 1, `${what}: split`);
      assertSame(r.output, cpu, what);
    }
    const dev = await GpuImage.upload(gpu, img);
    const res = await morph(dev, { op: 'open', se: 'rect:7x9' });
    assertSame(await res.output.toHost(), (await morph(img, { op: 'open', se: 'rect:7x9' })).output, `${img.dtype} resident`);
    res.output.release();
    dev.release();
  }
  // A volume splits into slabs of planes (64 KiB: 13 planes of 30×41 float32).
  const big = await gpuWithBindingLimit(t, 64 << 10);
  const vol = await readImage(fixture('images', 'volume_f32.npy'));
  for (const opts of [{ op: 'open', se: 'box:3x3x3', border: 'scipy' }, { op: 'erode', se: 'box:4x5x3' }] as MorphOptions[]) {
    const r = await morph(vol, { ...opts, gpu: big });
    assert.ok((r.timings.slabs ?? 1) > 1, 'volume split');
    assertSame(r.output, (await morph(vol, opts)).output, `volume ${opts.op} ${seName(opts.se)}`);
  }
  // A halo taller than a binding holds: refused before any work.
  await assert.rejects(morph(images[0], { se: 'rect:3x200', gpu }), GpuLimitError);
});

test('MorphOptions is derived from the declaration: a typed call as a user writes it; impl, and its old name method, on the API', async (t) => {
  const img = imageFrom(randomBytes(23 * 31, 41), [23, 31]);
  // Typed as a user would: the element as a spec or a StructuringElement, impl or its old name method.
  const opts: MorphOptions = { op: 'close', se: 'ellipse:5x3', iterations: 2, border: 'scipy', impl: 'naive' };
  const viaObject: MorphOptions = { op: 'close', se: parseElement('ellipse:5x3'), iterations: 2, border: 'scipy', method: 'naive' };
  // @ts-expect-error: not an operation
  const bad: MorphOptions = { op: 'thin' };
  void bad;
  const expected = (await morph(img, opts)).output;
  assertSame((await morph(img, viaObject)).output, expected, 'method (old name) with an element object');
  const gpu = await gpuOrSkip(t);
  if (gpu) assertSame((await morph(img, { ...viaObject, gpu })).output, expected, 'gpu, method (old name)');
  // The old name reaches the implementation: naive refuses a box too large for the direct kernel, auto runs it.
  await assert.rejects(morph(img, { se: 'rect:3000x3000', method: 'naive' }), /direct kernel/);
  await assert.rejects(morph(img, { impl: 'naive', method: 'auto' }), /impl and method \(another name for it\) are both given/);
  assertSame((await erode(img, { se: 'rect:3000x3000', method: 'auto' })).output, (await morph(img, { op: 'erode', se: 'rect:3000x3000' })).output, 'erode wrapper');
  assertSame((await dilate(img, { impl: 'vhgw' })).output, (await morph(img, { op: 'dilate', method: 'naive' })).output, 'dilate wrapper');
});

test('CLI: --impl and its old name --method both pick the implementation; the JSON params name it impl', () => {
  const img = fixture('images', 'coins.png');
  const tmp = mkdtempSync(join(tmpdir(), 'imgpu-morph-'));
  try {
    const runs = ['--impl', '--method'].map((flag) => cli('morph', 'open', img, join(tmp, `${flag.slice(2)}.png`), '--se', 'rect:5x3', flag, 'naive', '--device', 'cpu', '--json'));
    for (const r of runs) {
      assert.equal(r.status, 0, r.stderr);
      const j = JSON.parse(r.stdout);
      assert.equal(j.params.impl, 'naive');
      assert.equal(j.params.op, 'open');
      assert.deepEqual(j.cpu.kernels.map((k: { name: string }) => k.name), ['morph.open']);
    }
    assert.deepEqual(readFileSync(join(tmp, 'impl.png')), readFileSync(join(tmp, 'method.png')));
    const huge = cli('morph', 'erode', img, join(tmp, 'x.png'), '--se', 'rect:3000x3000', '--method', 'naive', '--device', 'cpu');
    assert.equal(huge.status, 2, huge.stderr);
    assert.match(huge.stderr, /direct kernel/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Image, Shape } from '../../src/core/image.js';
import { encodeNpy, decodeNpy } from '../../src/io/npy.js';
import { writeImage } from '../../src/io/index.js';
import { clahe, type ClaheOptions } from '../../src/ops/clahe/index.js';
import { convolve, correlate, filter, type FilterOptions } from '../../src/ops/convolve/index.js';
import { denseKernel } from '../../src/ops/convolve/kernel.js';
import { readClassifier } from '../../src/io/classifier.js';
import { detect } from '../../src/ops/detect/index.js';
import { equalize } from '../../src/ops/equalize/index.js';
import { histogram } from '../../src/ops/histogram/index.js';
import { maskElement, morph, parseElement, type MorphOptions } from '../../src/ops/morph/index.js';
import { parsePipeline, runPipeline } from '../../src/ops/pipeline.js';
import { FILTER_TOLERANCE } from '../../src/ops/registry.js';
import { threshold, type ThresholdOptions } from '../../src/ops/threshold/index.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { caseSeed, masterSeed, Rng, selected, type Compare, type ParityCase, type Path, type Outputs } from '../helpers/parity.js';
import { anyInput, crop, fill, floatInput, noise, size2d, type Made, type Sources } from './inputs.js';

/**
 * The families of the differential test: for each, a few fixed cases (the adversarial ones, among them every
 * defect class issue 24 found, kept whatever the seed) and random cases drawn from the case's own seed; how the
 * library runs a case; and which reference (test/parity/reference.py) it is compared with.
 */
type Spec = Omit<ParityCase, 'id' | 'family' | 'seed'>;
type Gen = (rng: Rng, S: Sources) => Spec;

export interface Family {
  name: string;
  title: string;
  /** Cases in all: the fixed ones first, then random ones. */
  count: number;
  fixed: Gen[];
  random: Gen;
  run(c: ParityCase, on: Path['on']): Promise<Outputs>;
  /** Also on a GPU context binding at most 64 KiB per buffer (ranges, row slabs, tile bands). @default true */
  slabs?: boolean;
}

const HIST_METHODS = ['atomic', 'subhist'] as const;
const known = (what: string) => `known defect class (issue 24): ${what}`;
const u8or16 = (rng: Rng, p16 = 0.3) => (rng.chance(p16) ? 'uint16' : 'uint8') as 'uint8' | 'uint16';
const colourOr1 = (rng: Rng, p = 0.15) => (rng.chance(p) ? rng.pick([3, 4] as const) : 1);
/** np.arange(start, stop, step) as a 1×N 8-bit row: Otsu's exact ties. */
const arange = (start: number, stop: number, step: number): Made => {
  const n = Math.ceil((stop - start) / step);
  return { img: fill([1, n], 'uint8', 1, (i) => start + i * step), how: `np.arange(${start}, ${stop}, ${step}, uint8)[None, :]` };
};
const lowContrast = (rng: Rng, shape: Shape, lo = 181, hi = 184): Made => noise(rng, shape, 'uint8', 1, lo, hi);

// ---- colour → gray ----------------------------------------------------------------------------------------------
/** The gray input every gray operation sees; a 1×1 erosion returns it unchanged, on both paths. */
const gray: Family = {
  name: 'gray',
  title: 'colour → gray (RGB/RGBA, 8/16-bit/float) = cv2.cvtColor',
  count: 12,
  fixed: [
    (rng) => ({ ...grayCase(noise(rng, [61, 67], 'uint8', 3)), note: known('colour→gray off by one (8-bit)') }),
    (rng) => ({ ...grayCase(noise(rng, [53, 41], 'uint16', 3)), note: known('colour→gray off by one (16-bit)') }),
    (rng) => grayCase(noise(rng, [1, 1], 'uint8', 4)),
    (rng) => grayCase(noise(rng, [17, 33], 'float32', 3, -100, 1000)),
    (rng, S) => grayCase(crop(rng, 'chelsea', S.rgb, [451, 300])),
  ],
  random: (rng, S) => {
    const dtype = rng.pick(['uint8', 'uint16', 'float32'] as const);
    const shape = size2d(rng, 200 * 200);
    const ch = rng.pick([3, 4] as const);
    return grayCase(dtype === 'float32' ? noise(rng, shape, dtype, ch, 0, 1) : anyInput(rng, S, shape, dtype, ch));
  },
  // gray: true — a colour image is eroded per channel otherwise (cv2.erode's rule); this family checks the conversion.
  run: async (c, on) => ({ image: (await morph(c.src, { se: 'rect:1x1', gray: true, ...on })).output }),
};
function grayCase(m: Made): Spec {
  const compare: ParityCase['compare'] = m.img.dtype === 'float32' ? { image: { kind: 'ulp', ulps: 2, known: 'gray-float32-ulp' } } : undefined;
  return { compare, op: 'morph erode (rect:1x1: the gray input)', params: {}, src: m.img, how: m.how, ref: { fn: 'gray', args: {}, what: 'cv2.cvtColor(RGB[A]2GRAY)' } };
}

// ---- equalize ------------------------------------------------------------------------------------------------
function equalizeCase(rng: Rng, m: Made): Spec {
  const cv = m.img.dtype === 'uint8' && m.img.shape.length === 2;
  return {
    op: 'equalize', params: { hist: rng.pick(HIST_METHODS) }, src: m.img, how: m.how,
    ref: { fn: 'equalize', args: {}, what: cv ? 'cv2.equalizeHist' : "cv2.equalizeHist's formula over all pixels (65536 bins for 16-bit)" },
  };
}
const equalizeFamily: Family = {
  name: 'equalize',
  title: 'equalize 8/16-bit, 2D and volumes, colour = cv2.equalizeHist (its formula for 16-bit)',
  count: 24,
  fixed: [
    (rng, S) => equalizeCase(rng, crop(rng, 'camera', S.gray.camera, [1000, 1500])),
    (rng, S) => equalizeCase(rng, crop(rng, 'moon16', S.moon16, [4, 37, 29])),
    (rng) => equalizeCase(rng, noise(rng, [1, 1], 'uint8')),
    (rng, S) => equalizeCase(rng, anyInput(rng, S, [45, 77], 'uint8', 3)),
    (rng, S) => equalizeCase(rng, anyInput(rng, S, [33, 21], 'uint16', 4)),
    (rng) => equalizeCase(rng, noise(rng, [123, 101], 'uint16', 1, 0, 4095)),
  ],
  random: (rng, S) => {
    const dtype = u8or16(rng);
    const shape: Shape = rng.chance(0.1) ? [rng.int(2, 5), ...size2d(rng, 40 * 40)] : size2d(rng);
    return equalizeCase(rng, anyInput(rng, S, shape, dtype, shape.length === 2 ? colourOr1(rng) : 1));
  },
  run: async (c, on) => ({ image: (await equalize(c.src, { ...c.params, ...on })).output }),
};

// ---- histogram ----------------------------------------------------------------------------------------------
const histogramFamily: Family = {
  name: 'histogram',
  title: 'histogram: bins, masks, ROIs, 8/16-bit = np.bincount / np.histogram / cv2.calcHist',
  count: 16,
  fixed: [
    (rng, S) => histCase(rng, anyInput(rng, S, [1000, 1500], 'uint8'), {}),
    (rng) => histCase(rng, noise(rng, [1, 1], 'uint16'), { bins: 7 }),
  ],
  random: (rng, S) => {
    const dtype = u8or16(rng);
    const shape: Shape = rng.chance(0.1) ? [rng.int(2, 4), ...size2d(rng, 40 * 40)] : size2d(rng);
    const m = anyInput(rng, S, shape, dtype, shape.length === 2 ? colourOr1(rng, 0.1) : 1);
    const levels = dtype === 'uint8' ? 256 : 65536;
    const opts: { bins?: number; roi?: number[]; mask?: boolean } = {};
    if (rng.chance(0.5)) opts.bins = rng.pick([1, 2, 3, 7, 16, 100, 255, levels, rng.int(1, levels)]);
    if (rng.chance(0.3)) opts.mask = true;
    if (shape.length === 2 && rng.chance(0.25)) {
      const [h, w] = shape;
      const x = rng.int(0, w - 1), y = rng.int(0, h - 1);
      opts.roi = [x, y, rng.int(1, w - x), rng.int(1, h - y)];
    }
    return histCase(rng, m, opts);
  },
  run: async (c, on) => {
    const p = c.params as { method: 'atomic' | 'subhist'; bins?: number; roi?: number[] };
    const roi = p.roi ? { x: p.roi[0], y: p.roi[1], width: p.roi[2], height: p.roi[3] } : undefined;
    return { counts: (await histogram(c.src, { method: p.method, bins: p.bins, roi, mask: c.extra?.mask, ...on })).output };
  },
};
function histCase(rng: Rng, m: Made, o: { bins?: number; roi?: number[]; mask?: boolean }): Spec {
  const extra = o.mask ? { mask: noise(rng, m.img.shape, 'uint8', 1, 0, 3).img } : undefined;
  const params = { method: rng.pick(HIST_METHODS), bins: o.bins, roi: o.roi, mask: o.mask ? 'noise 0..3 (0 = not counted)' : undefined };
  const what = o.mask ? 'cv2.calcHist with the mask (np.histogram for 16-bit/volumes)' : o.bins ? 'np.histogram(range=(0, 2^bits))' : 'np.bincount';
  return { op: 'histogram', params, src: m.img, how: m.how, extra, ref: { fn: 'histogram', args: { bins: o.bins, roi: o.roi }, what } };
}

// ---- thresholds ---------------------------------------------------------------------------------------------
function globalCase(rng: Rng, m: Made, method: 'otsu' | 'isodata', note?: string): Spec {
  return {
    op: 'threshold', params: { method, hist: rng.pick(HIST_METHODS) }, src: m.img, how: m.how, note,
    ref: method === 'otsu' ? { fn: 'otsu', args: {}, what: 'cv2.threshold(THRESH_BINARY | THRESH_OTSU)' } : { fn: 'isodata', args: {}, what: 'skimage.filters.threshold_isodata, img > t' },
  };
}
const thresholdGlobal: Family = {
  name: 'threshold-global',
  title: 'global thresholds: Otsu = cv2 THRESH_OTSU, isodata = skimage (ties, plateaus, 8/16-bit)',
  count: 26,
  fixed: [
    (rng) => globalCase(rng, arange(0, 181, 3), 'otsu', known('GPU Otsu on exact ties')),
    (rng) => globalCase(rng, arange(0, 256, 5), 'otsu', known('GPU Otsu on exact ties')),
    (rng) => globalCase(rng, arange(10, 200, 7), 'otsu', known('GPU Otsu on exact ties')),
    (rng) => globalCase(rng, { img: fill([9, 31], 'uint8', 1, (i) => (i % 2 ? 40 : 200)), how: 'two values 40/200' }, 'otsu'),
    (rng) => globalCase(rng, noise(rng, [97, 203], 'uint16'), 'otsu'),
    (rng, S) => globalCase(rng, crop(rng, 'moon16', S.moon16, [71, 55]), 'isodata'),
    (rng) => globalCase(rng, { img: fill([5, 7], 'uint8', 1, () => 77), how: 'constant 77' }, 'otsu'),
    (rng) => globalCase(rng, noise(rng, [1, 1], 'uint8'), 'otsu'),
    (rng, S) => globalCase(rng, crop(rng, 'coins', S.gray.coins, [1000, 1500]), 'otsu'),
    (rng, S) => globalCase(rng, anyInput(rng, S, [41, 59], 'uint8', 3), 'isodata'),
  ],
  random: (rng, S) => {
    const method = rng.pick(['otsu', 'isodata'] as const);
    if (rng.chance(0.15)) {
      const step = rng.int(1, 9), start = rng.int(0, 60);
      return globalCase(rng, arange(start, rng.int(start + step * 2, 256), step), method, known('exact ties'));
    }
    const dtype = u8or16(rng, 0.25);
    return globalCase(rng, anyInput(rng, S, size2d(rng), dtype, colourOr1(rng, 0.1)), method);
  },
  run: runThreshold,
};
async function runThreshold(c: ParityCase, on: Path['on']): Promise<Outputs> {
  const r = await threshold(c.src, { ...(c.params as ThresholdOptions), ...on });
  return { image: r.output, threshold: r.threshold, fallback: r.fallback };
}

function localCase(rng: Rng, m: Made, method: 'mean' | 'gaussian', window: number, offset: number, note?: string): Spec {
  return {
    op: 'threshold', params: { method, window, offset }, src: m.img, how: m.how, note,
    ref: { fn: 'local', args: { method, window, offset }, what: `cv2.adaptiveThreshold(ADAPTIVE_THRESH_${method.toUpperCase()}_C, THRESH_BINARY)` },
  };
}
const thresholdLocal: Family = {
  name: 'threshold-local',
  title: 'mean and gaussian thresholds = cv2.adaptiveThreshold (windows past the image, low contrast)',
  count: 25,
  fixed: [
    // Blur values within a float32 step of x.5 are rare: it takes a large image to meet some.
    (rng) => localCase(rng, lowContrast(rng, [300, 320]), 'gaussian', 11, 2, known('GPU gaussian windows ≥ 11 on low-contrast noise 181–184')),
    (rng) => localCase(rng, lowContrast(rng, [300, 320]), 'gaussian', 31, 2, known('GPU gaussian windows ≥ 11 on low-contrast noise')),
    (rng) => localCase(rng, lowContrast(rng, [151, 163]), 'gaussian', 101, -1, known('GPU gaussian windows ≥ 11 on low-contrast noise')),
    (rng) => localCase(rng, lowContrast(rng, [33, 65]), 'mean', 25, 0),
    (rng) => localCase(rng, noise(rng, [1, 1], 'uint8'), 'gaussian', 3, 2),
    (rng, S) => localCase(rng, anyInput(rng, S, [37, 51], 'uint8', 3), 'mean', 9, 2.5),
    // An even window: cv2 asserts (blockSize % 2 == 1), so imgpu must refuse it as a bad argument too.
    (rng) => localCase(rng, noise(rng, [9, 12], 'uint8'), 'mean', 4, 0),
  ],
  random: (rng, S) => {
    const shape = size2d(rng, 200 * 160);
    const lo = rng.int(0, 250);
    const m = rng.chance(0.2) ? lowContrast(rng, shape, lo, lo + rng.int(1, 5)) : anyInput(rng, S, shape, 'uint8');
    const window = rng.chance(0.1) ? rng.odd(Math.max(...shape) | 1, 2 * Math.max(...shape) + 1) : rng.odd(3, rng.pick([11, 31, 75]));
    const offset = rng.chance(0.7) ? rng.int(-10, 10) : Math.round(rng.float(-8, 8) * 4) / 4;
    return localCase(rng, m, rng.pick(['mean', 'gaussian'] as const), window, offset);
  },
  run: runThreshold,
};

function adaptiveCase(rng: Rng, m: Made, window: number, contrast: number): Spec {
  return {
    op: 'threshold', params: { method: 'adaptive', window, contrast, scheme: rng.pick(['sliding', 'naive'] as const), hist: rng.pick(HIST_METHODS) }, src: m.img, how: m.how,
    ref: { fn: 'adaptive', args: { window, contrast }, what: "skimage threshold_isodata per clipped window, global isodata where the range < contrast (docs/histogram.md)" },
  };
}
const thresholdAdaptive: Family = {
  name: 'threshold-adaptive',
  title: 'adaptive isodata = skimage isodata per window (its documented rule)',
  count: 6,
  fixed: [(rng) => adaptiveCase(rng, lowContrast(rng, [23, 29], 100, 130), 7, 15)],
  random: (rng, S) => {
    const shape: [number, number] = [rng.int(1, 40), rng.int(1, 48)];
    return adaptiveCase(rng, anyInput(rng, S, shape, 'uint8'), rng.odd(3, 31), rng.pick([0, 5, 15, 40]));
  },
  run: runThreshold,
};

// ---- CLAHE --------------------------------------------------------------------------------------------------
function tiledCase(m: Made, tx: number, ty: number, clip: number, note?: string): Spec {
  return {
    op: 'clahe', params: { tiles: `${tx}x${ty}`, clip }, src: m.img, how: m.how, note,
    ref: { fn: 'clahe', args: { tiles: [tx, ty], clip }, what: `cv2.createCLAHE(${clip}, (${tx}, ${ty})).apply${m.img.channels > 1 ? ' on YCrCb Y' : ''}` },
  };
}
const CLIPS = [0.01, 0.5, 1, 2, 3.7, 10, 40];
const claheTiled: Family = {
  name: 'clahe-tiled',
  title: 'tiled CLAHE 8/16-bit, colour, more tiles than pixels = cv2.createCLAHE',
  count: 24,
  fixed: [
    (rng) => tiledCase(noise(rng, [2, 3], 'uint8'), 8, 8, 2, known('more tiles than pixels refused where OpenCV pads')),
    (rng) => tiledCase(noise(rng, [1, 1], 'uint8'), 2, 2, 2, known('more tiles than pixels')),
    (rng) => tiledCase(noise(rng, [5, 7], 'uint16'), 16, 16, 3, known('more tiles than pixels')),
    (rng) => tiledCase(noise(rng, [90, 100], 'uint16'), 32, 32, 2, known('16-bit CLAHE with 32x32 tiles exceeds the software GPU binding limit')),
    (rng, S) => tiledCase(anyInput(rng, S, [61, 83], 'uint8', 3), 4, 3, 2),
    (rng, S) => tiledCase(anyInput(rng, S, [47, 29], 'uint16', 4), 3, 5, 1.5),
    (rng, S) => tiledCase(crop(rng, 'moon', S.gray.moon, [1000, 1500]), 8, 8, 2),
  ],
  random: (rng, S) => {
    const dtype = u8or16(rng);
    const shape = size2d(rng, dtype === 'uint8' ? 320 * 240 : 160 * 120);
    const ch = colourOr1(rng);
    const max = dtype === 'uint8' ? 16 : 8; // 16-bit: at most 8×8 tiles of 65536-bin LUTs (32 MiB on the device)
    const tx = rng.chance(0.15) ? rng.int(shape[1], shape[1] + 4) : rng.int(1, max);
    const ty = rng.chance(0.15) ? rng.int(shape[0], shape[0] + 4) : rng.int(1, max);
    const big = tx > shape[1] || ty > shape[0];
    return tiledCase(anyInput(rng, S, shape, dtype, ch), Math.min(tx, max), Math.min(ty, max), rng.chance(0.8) ? rng.pick(CLIPS) : Math.round(rng.float(0.1, 8) * 100) / 100, big ? known('more tiles than pixels') : undefined);
  },
  run: runClahe,
};
async function runClahe(c: ParityCase, on: Path['on']): Promise<Outputs> {
  const p = c.params as { tiles?: string; clip: number; window?: number; border?: ClaheOptions['border']; scheme?: ClaheOptions['scheme'] };
  const tiles = p.tiles ? { width: Number(p.tiles.split('x')[0]), height: Number(p.tiles.split('x')[1]) } : undefined;
  return { image: (await clahe(c.src, { tiles, clip: p.clip, window: p.window, border: p.border, scheme: p.scheme, ...on })).output };
}

const claheWindow: Family = {
  name: 'clahe-window',
  title: 'sliding-window CLAHE = OpenCV\'s tile rule on each mirrored window (cv2, 1×1 tile per window)',
  count: 8,
  fixed: [(rng, S) => windowCase(rng, anyInput(rng, S, [23, 31], 'uint8', 3), 4, 2)],
  random: (rng, S) => {
    const shape: [number, number] = [rng.int(2, 40), rng.int(2, 48)];
    return windowCase(rng, anyInput(rng, S, shape, 'uint8'), rng.int(1, Math.min(12, Math.min(...shape) - 1)), rng.pick(CLIPS));
  },
  run: runClahe,
};
function windowCase(rng: Rng, m: Made, radius: number, clip: number): Spec {
  const border = rng.pick(['reflect101', 'reflect'] as const);
  return {
    op: 'clahe', params: { window: radius, clip, border, scheme: rng.pick(['columns', 'naive'] as const) }, src: m.img, how: m.how,
    ref: { fn: 'clahe', args: { radius, clip, border }, what: `cv2.createCLAHE(${clip}, (1, 1)) on each (2R+1)² window, BORDER_${border === 'reflect' ? 'REFLECT' : 'REFLECT_101'}` },
  };
}

// ---- morphology ---------------------------------------------------------------------------------------------
const MORPH_OPS = ['erode', 'dilate', 'open', 'close', 'gradient', 'tophat', 'blackhat'] as const;

/** A random element: its spec (mask elements: 'mask:…' with the flags in `mask`) and its [d, h, w] flags. */
function element(rng: Rng, rank: 2 | 3, anchorless = 0.5): { spec: string; size: [number, number, number]; mask: Uint8Array } {
  const r = rng.next();
  let spec: string;
  if (rank === 3 && r < 0.5) spec = rng.chance(0.7) ? `box:${rng.int(1, 5)}x${rng.int(1, 5)}x${rng.int(1, 4)}` : `line:${rng.int(1, 5)}:d`;
  else if (r < 0.3) spec = `rect:${rng.int(1, rng.chance(0.1) ? 61 : 15)}x${rng.int(1, rng.chance(0.1) ? 61 : 15)}`;
  else if (r < 0.42) spec = `cross:${rng.int(1, 11)}`;
  else if (r < 0.6) spec = `ellipse:${rng.int(1, 15)}x${rng.int(1, 15)}`;
  else if (r < 0.72) spec = `line:${rng.int(1, 21)}:${rng.pick(['h', 'v'])}`;
  else {
    const size: [number, number, number] = [rank === 3 ? rng.int(1, 3) : 1, rng.int(1, 7), rng.int(1, 7)];
    const mask = Uint8Array.from({ length: size[0] * size[1] * size[2] }, () => (rng.chance(0.5) ? 1 : 0));
    mask[rng.int(0, mask.length - 1)] = 1;
    const anchor = (Math.floor(size[0] / 2) * size[1] + Math.floor(size[1] / 2)) * size[2] + Math.floor(size[2] / 2);
    if (mask.length > 1 && rng.chance(anchorless)) {
      mask[anchor] = 0; // no anchor: some outputs see no pixel of the image at all
      if (!mask.some((v) => v)) mask[(anchor + 1) % mask.length] = 1;
    }
    return { spec: `mask:${size.join('x')}:${Array.from(mask).join('')}`, size, mask };
  }
  const e = parseElement(spec);
  return { spec, size: e.size, mask: e.mask };
}
const nested = (mask: Uint8Array, [d, h, w]: [number, number, number], rank: number): number[][] | number[][][] => {
  const plane = (z: number) => Array.from({ length: h }, (_, y) => Array.from(mask.subarray((z * h + y) * w, (z * h + y + 1) * w)));
  return rank === 3 ? Array.from({ length: d }, (_, z) => plane(z)) : plane(0);
};

function morphCase(rng: Rng, m: Made, border: 'opencv' | 'scipy', o: { op?: string; e?: ReturnType<typeof element>; iterations?: number; note?: string } = {}): Spec {
  const rank = m.img.shape.length === 3 && m.img.shape[0] > 1 ? 3 : 2;
  const e = o.e ?? element(rng, rank);
  const op = o.op ?? rng.pick(MORPH_OPS);
  const iterations = o.iterations ?? (rng.chance(0.7) ? 1 : rng.int(2, 3));
  const what = border === 'opencv' ? `cv2.${op === 'erode' || op === 'dilate' ? op : `morphologyEx(MORPH_${op.toUpperCase()})`}(iterations=${iterations})` : `scipy.ndimage grey ${op} (mode reflect, footprint)`;
  return {
    op: `morph ${op}`, params: { se: e.spec, border, iterations, method: rng.chance(0.2) ? 'naive' : 'auto' }, src: m.img, how: m.how, note: o.note,
    ref: { fn: border === 'opencv' ? 'morph_cv' : 'morph_scipy', args: { op, iterations, se: nested(e.mask, e.size, rank) }, what },
  };
}
function morphInput(rng: Rng, S: Sources, shape: Shape): Made {
  const dtype = rng.pick(['uint8', 'uint8', 'uint16', 'float32'] as const);
  return dtype === 'float32' ? floatInput(rng, S, shape) : anyInput(rng, S, shape, dtype, shape.length === 2 ? colourOr1(rng, 0.05) : 1);
}
async function runMorph(c: ParityCase, on: Path['on']): Promise<Outputs> {
  const p = c.params as unknown as { se: string } & MorphOptions;
  let se: MorphOptions['se'] = p.se;
  if (p.se.startsWith('mask:')) {
    const [, dims, flags] = p.se.split(':');
    const [d, h, w] = dims.split('x').map(Number);
    se = maskElement(Uint8Array.from(flags, Number), [d, h, w], 'mask');
  }
  return { image: (await morph(c.src, { ...p, op: c.op.split(' ')[1] as MorphOptions['op'], se, ...on })).output };
}
const anchorless = (rng: Rng): ReturnType<typeof element> => {
  for (;;) {
    const e = element(rng, 2, 1);
    if (e.spec.startsWith('mask:') && e.mask.length > 1) return e;
  }
};
const morphCv: Family = {
  name: 'morph-cv',
  title: 'morphology, OpenCV border: every op, rect/cross/ellipse/line/mask, u8/u16/f32 = cv2',
  count: 34,
  fixed: [
    (rng, S) => morphCase(rng, floatInput(rng, S, [1, 1]), 'opencv', { op: 'erode', e: anchorless(rng), note: known('float32 morphology ±inf where cv2 gives ±FLT_MAX') }),
    (rng, S) => morphCase(rng, floatInput(rng, S, [3, 2]), 'opencv', { op: 'dilate', e: anchorless(rng), note: known('float32 morphology ±inf where cv2 gives ±FLT_MAX') }),
    (rng, S) => morphCase(rng, floatInput(rng, S, [4, 5]), 'opencv', { op: 'blackhat', e: anchorless(rng), note: known('float32 morphology ±inf where cv2 gives ±FLT_MAX') }),
    (rng, S) => morphCase(rng, anyInput(rng, S, [29, 41], 'uint8'), 'opencv', { op: 'erode', e: element(rng, 2, 0), iterations: 1 }),
    (rng, S) => morphCase(rng, anyInput(rng, S, [30, 40], 'uint8'), 'opencv', { op: 'gradient', e: { spec: 'rect:51x51', size: [1, 51, 51], mask: new Uint8Array(51 * 51).fill(1) } }),
    (rng, S) => morphCase(rng, anyInput(rng, S, [57, 43], 'uint16'), 'opencv', { op: 'close', e: { spec: 'ellipse:7x5', size: [1, 5, 7], mask: parseElement('ellipse:7x5').mask }, iterations: 2 }),
    (rng, S) => morphCase(rng, crop(rng, 'camera', S.gray.camera, [1000, 1500]), 'opencv', { op: 'open', e: { spec: 'rect:7x7', size: [1, 7, 7], mask: new Uint8Array(49).fill(1) }, iterations: 1 }),
  ],
  random: (rng, S) => morphCase(rng, morphInput(rng, S, size2d(rng, 160 * 120)), 'opencv'),
  run: runMorph,
};
const morphSp: Family = {
  name: 'morph-sp',
  title: 'morphology, scipy border: every op, even sizes, masks, 2D and 3D, u8/u16/f32 = scipy.ndimage',
  count: 28,
  fixed: [
    (rng, S) => morphCase(rng, floatInput(rng, S, [5, 23, 19]), 'scipy', { op: 'open', e: { spec: 'box:4x3x2', size: [2, 3, 4], mask: new Uint8Array(24).fill(1) } }),
    (rng, S) => morphCase(rng, anyInput(rng, S, [1, 1], 'uint8'), 'scipy', { op: 'tophat' }),
  ],
  random: (rng, S) => {
    const shape: Shape = rng.chance(0.2) ? [rng.int(2, 6), rng.int(1, 30), rng.int(1, 30)] : size2d(rng, 160 * 120);
    return morphCase(rng, morphInput(rng, S, shape), 'scipy');
  },
  run: runMorph,
};

// ---- filters ------------------------------------------------------------------------------------------------
const BORDERS = ['reflect', 'reflect101', 'replicate', 'wrap', 'constant', 'valid'] as const;
const CV_BORDERS = new Set(['reflect', 'reflect101', 'replicate', 'constant']);
const SCIPY_MODE: Record<string, string> = { reflect: 'reflect', reflect101: 'mirror', replicate: 'nearest', wrap: 'wrap', constant: 'constant', valid: 'constant, cropped' };

interface FilterDraw {
  kind: string;
  spec?: string;
  axis?: string;
  sigma?: number[];
  truncate?: number;
  size?: number[];
  /** Kernels: [z,]y,x sizes, anchor, weights (float32 values) and whether it is convolved. */
  kshape?: number[];
  anchor?: number[];
  weights?: number[];
  flip?: boolean;
  /** Kernel size and anchor ([z, y, x]) for 'valid'. */
  ksize: number[];
  kanchor: number[];
  /** The kernel is dense (not rank 1), so a nonzero cval means the same on every path (docs/convolution.md). */
  dense: boolean;
}

function drawFilter(rng: Rng, rank: 2 | 3): FilterDraw {
  const full = (k: number[]) => (rank === 3 ? k : [1, ...k]);
  const r = rng.next();
  const axes = rank === 3 ? ['x', 'y', 'z'] : ['x', 'y'];
  if (r < 0.25) {
    const kind = rng.chance(0.65) ? 'sobel' : 'prewitt';
    const axis = rng.chance(0.7) ? rng.pick(axes) : undefined;
    return { kind, axis, spec: axis ? `${kind}-${axis}` : kind, ksize: full(Array(rank).fill(3)), kanchor: full(Array(rank).fill(1)), dense: false };
  }
  if (r < 0.42) {
    const sigma = rng.chance(0.7) ? [Math.round(rng.float(0.3, 3.5) * 100) / 100] : axes.map(() => Math.round(rng.float(0.3, 3) * 100) / 100);
    const truncate = rng.chance(0.7) ? 4 : rng.pick([1, 1.5, 2.5, 6]);
    const radius = (s: number) => Math.floor(truncate * s + 0.5);
    const sx = axes.map((_, i) => sigma[sigma.length === 1 ? 0 : i]);
    const ks = sx.map((s) => 2 * radius(s) + 1).reverse();
    return { kind: 'gauss', sigma, truncate, spec: `gauss:${sigma.join(',')}`, ksize: full(ks), kanchor: full(ks.map((k) => (k - 1) / 2)), dense: false };
  }
  if (r < 0.58) {
    const size = axes.map(() => rng.int(1, rank === 3 ? 5 : 15));
    const ks = size.slice().reverse();
    return { kind: 'box', size, spec: `box:${size.join('x')}`, ksize: full(ks), kanchor: full(ks.map((k) => Math.floor(k / 2))), dense: false };
  }
  if (r < 0.66) return { kind: 'laplace', spec: 'laplace', ksize: full(Array(rank).fill(3)), kanchor: full(Array(rank).fill(1)), dense: true };
  if (r < 0.7 && rank === 2) return { kind: 'roberts', spec: 'roberts', ksize: [1, 2, 2], kanchor: [0, 0, 0], dense: true };
  const kshape = (rank === 3 ? [rng.int(1, 3), rng.int(1, 4), rng.int(1, 4)] : [rng.int(1, 7), rng.int(1, 9)]);
  const anchor = kshape.map((k) => (k % 2 === 0 || rng.chance(0.3) ? rng.int(0, k - 1) : (k - 1) / 2));
  const weights = Array.from({ length: kshape.reduce((a, b) => a * b, 1) }, () => Math.fround(rng.float(-2, 2)));
  const flip = rng.chance(0.4);
  const kanchor = flip ? kshape.map((k, i) => k - 1 - anchor[i]) : anchor;
  const dense = kshape.filter((k) => k > 1).length > 1; // random weights are rank 1 only when at most one axis is longer than 1
  return { kind: 'kernel', kshape, anchor, weights, flip, ksize: full(kshape), kanchor: full(kanchor), dense };
}

function filterCase(rng: Rng, m: Made, f: FilterDraw, o: { border?: string; saturate?: boolean; impl?: string; note?: string } = {}): Spec {
  const border = o.border ?? rng.pick(BORDERS);
  const cval = border === 'constant' && f.dense && rng.chance(0.5) ? Math.round(rng.float(-50, 50) * 4) / 4 : 0;
  const integer = m.img.dtype !== 'float32';
  const saturate = o.saturate ?? (integer && rng.chance(0.4));
  // OpenCV decides the integer result of its integer-weight filters (box: its rounding of sum/area, ties included);
  // float kernels (cv2.filter2D accumulates in float32, in its own order) are compared through the float tolerance.
  const cvKind = m.img.shape.length === 2 && (f.kind === 'box' || f.kind === 'laplace' || (f.kind === 'sobel' && (f.axis === 'x' || f.axis === 'y')));
  const cv2 = saturate && cvKind && CV_BORDERS.has(border) && cval === 0;
  const impl = o.impl ?? (rng.chance(0.6) ? 'auto' : rng.pick(f.dense || f.kind === 'kernel' ? ['naive', 'tiled'] : ['naive', 'tiled', 'separable', 'fused']));
  const params: Record<string, unknown> = { filter: f.spec ?? (f.flip ? 'convolve' : 'correlate'), border, cval, saturate, impl };
  if (f.truncate !== undefined && f.truncate !== 4) params.truncate = f.truncate;
  if (f.kind === 'kernel') Object.assign(params, { shape: f.kshape, anchor: f.anchor, weights: f.weights });
  const scipyName = f.kind === 'kernel' ? (f.flip ? 'convolve' : 'correlate') : f.kind === 'gauss' ? 'gaussian_filter' : f.kind === 'box' ? 'uniform_filter' : f.kind;
  const cvName = f.kind === 'box' ? 'cv2.blur' : f.kind === 'sobel' ? 'cv2.Sobel' : 'cv2.Laplacian';
  const what = cv2 ? `${cvName}(ddepth=-1)` : `scipy.ndimage.${scipyName}(mode=${SCIPY_MODE[border]})${saturate ? ' rounded half to even, clamped' : ''}`;
  const args = { kind: f.kind, axis: f.axis, sigma: f.sigma, truncate: f.truncate ?? 4, size: f.size, weights: f.kshape && shaped(f.weights!, f.kshape), anchor: f.anchor, flip: f.flip, border, cval, saturate, cv2, ksize: f.ksize, kanchor: f.kanchor };
  const dims = m.img.shape.length === 3 ? m.img.shape : [1, ...m.img.shape];
  const larger = f.ksize.some((k, i) => k > dims[i]);
  const image: Compare = !cv2 ? { kind: 'rounded', rel: FILTER_TOLERANCE } : { kind: 'exact' };
  return {
    op: 'filter', params, src: m.img, how: m.how, note: o.note,
    ref: { fn: 'filter', args, what },
    ...refusal(larger, border),
    compare: saturate ? { image } : { float: { kind: 'float', rel: FILTER_TOLERANCE } },
  };
}
/** A kernel larger than the image: no output with `valid` (refused, a documented choice); every other border computes scipy's result. */
function refusal(larger: boolean, border: string): Pick<ParityCase, 'refuses'> {
  return larger && border === 'valid' ? { refuses: "'valid' with a kernel larger than the image: no output" } : {};
}
const shaped = (w: number[], shape: number[]): unknown => (shape.length === 1 ? w : Array.from({ length: shape[0] }, (_, i) => shaped(w.slice((i * w.length) / shape[0], ((i + 1) * w.length) / shape[0]), shape.slice(1))));

async function runFilter(c: ParityCase, on: Path['on']): Promise<Outputs> {
  const p = c.params as unknown as FilterOptions & { filter: string; shape?: number[]; anchor?: number[]; weights?: number[] };
  const opts: FilterOptions = { border: p.border, cval: p.cval, saturate: p.saturate, impl: p.impl, truncate: p.truncate, ...on };
  const r = p.shape
    ? await (p.filter === 'convolve' ? convolve : correlate)(c.src, denseKernel(p.weights!, p.shape, p.anchor), opts)
    : await filter(c.src, p.filter, opts);
  return { [p.saturate ? 'image' : 'float']: r.output };
}
function filterInput(rng: Rng, S: Sources, shape: Shape, nanShare = 0.15): Made {
  const dtype = rng.pick(['uint8', 'uint8', 'uint16', 'float32', 'float32'] as const);
  if (dtype === 'float32') return floatInput(rng, S, shape, rng.chance(nanShare) ? rng.pick([0.001, 0.02]) : 0, 1e18);
  return anyInput(rng, S, shape, dtype, shape.length === 2 ? colourOr1(rng, 0.05) : 1);
}
const NAN_NOTE = known('NaN/Inf in filter vs scipy (0·NaN = NaN; uniform_filter\'s running sum)');
const filter2d: Family = {
  name: 'filter-2d',
  title: 'filters 2D: sobel/prewitt/gauss/box/laplace/roberts/correlate/convolve, every border, NaN/Inf = scipy.ndimage (cv2 when saturating)',
  count: 56,
  fixed: [
    (rng) => filterCase(rng, noise(rng, [97, 143], 'uint16'), { kind: 'box', size: [7, 11], spec: 'box:7x11', ksize: [1, 11, 7], kanchor: [1, 5, 3], dense: false }, { border: 'reflect101', saturate: true, impl: 'auto', note: known('GPU uint16 box:7x11 --saturate vs cv2.blur ±1') }),
    (rng, S) => filterCase(rng, floatInput(rng, S, [31, 45], 0.01, 1e18), { kind: 'sobel', axis: 'x', spec: 'sobel-x', ksize: [1, 3, 3], kanchor: [1, 1, 1], dense: false }, { border: 'reflect', note: NAN_NOTE }),
    (rng, S) => filterCase(rng, floatInput(rng, S, [29, 53], 0.005, 1e18), { kind: 'box', size: [5, 5], spec: 'box:5x5', ksize: [1, 5, 5], kanchor: [0, 2, 2], dense: false }, { border: 'reflect', note: NAN_NOTE }),
    (rng, S) => filterCase(rng, floatInput(rng, S, [40, 33], 0.01, 1e18), drawFilterOf(rng, 2, 'gauss'), { border: 'replicate', note: NAN_NOTE }),
    (rng, S) => filterCase(rng, floatInput(rng, S, [37, 39], 0.01, 1e18), drawFilterOf(rng, 2, 'kernel'), { border: 'wrap', note: NAN_NOTE }),
    (rng, S) => filterCase(rng, anyInput(rng, S, [77, 91], 'uint8'), { kind: 'sobel', axis: 'y', spec: 'sobel-y', ksize: [1, 3, 3], kanchor: [1, 1, 1], dense: false }, { border: 'reflect101', saturate: true }),
    (rng, S) => filterCase(rng, anyInput(rng, S, [64, 65], 'uint16'), { kind: 'laplace', spec: 'laplace', ksize: [1, 3, 3], kanchor: [1, 1, 1], dense: true }, { border: 'replicate', saturate: true }),
    (rng, S) => filterCase(rng, anyInput(rng, S, [43, 57], 'uint8', 3), drawFilterOf(rng, 2, 'gauss'), { saturate: false }),
    (rng) => filterCase(rng, noise(rng, [151, 203], 'uint8'), { kind: 'box', size: [4, 6], spec: 'box:4x6', ksize: [1, 6, 4], kanchor: [0, 3, 2], dense: false }, { border: 'reflect101', saturate: true, impl: 'auto', note: 'an even window area: means on a .5 tie (cv2.blur rounds them its own way, box.ts roundBox8)' }),
  ],
  random: (rng, S) => filterCase(rng, filterInput(rng, S, size2d(rng, 200 * 150)), drawFilter(rng, 2)),
  run: runFilter,
};
/** A draw of one kind (redrawn until it comes up: the draws stay those of drawFilter). */
function drawFilterOf(rng: Rng, rank: 2 | 3, kind: string): FilterDraw {
  for (;;) {
    const f = drawFilter(rng, rank);
    if (f.kind === kind) return f;
  }
}
const filter3d: Family = {
  name: 'filter-3d',
  title: 'filters 3D (volumes): sobel/prewitt/gauss/box/laplace/kernels, every border = scipy.ndimage',
  count: 10,
  fixed: [(rng, S) => filterCase(rng, floatInput(rng, S, [4, 9, 11], 0.02, 1e18), drawFilterOf(rng, 3, 'sobel'), { border: 'reflect', note: NAN_NOTE })],
  random: (rng, S) => filterCase(rng, filterInput(rng, S, [rng.int(2, 8), rng.int(1, 40), rng.int(1, 40)], 0.1), drawFilter(rng, 3)),
  run: runFilter,
};

// ---- pipelines ----------------------------------------------------------------------------------------------
interface Step {
  text: string;
  fn: string;
  args: Record<string, unknown>;
}
function drawStep(rng: Rng, dtype: string): Step {
  for (;;) {
    const r = rng.int(0, 5);
    if (r === 0) return { text: 'equalize', fn: 'equalize', args: {} };
    if (r === 1) {
      const [tx, ty, clip] = [rng.int(1, 8), rng.int(1, 8), rng.pick(CLIPS)];
      return { text: `clahe --tiles ${tx}x${ty} --clip ${clip}`, fn: 'clahe', args: { tiles: [tx, ty], clip } };
    }
    if (r === 2) return { text: 'threshold --method otsu', fn: 'otsu', args: {} };
    if (r === 3 && dtype === 'uint8') {
      const [window, offset] = [rng.odd(3, 25), rng.int(-5, 5)];
      return { text: `threshold --method mean --window ${window} --offset ${offset}`, fn: 'local', args: { method: 'mean', window, offset } };
    }
    if (r === 4) {
      const e = element(rng, 2, 0);
      if (e.spec.startsWith('mask:')) continue;
      const [op, border] = [rng.pick(MORPH_OPS), rng.pick(['opencv', 'scipy'] as const)];
      return { text: `morph ${op} --se ${e.spec} --border ${border}`, fn: border === 'opencv' ? 'morph_cv' : 'morph_scipy', args: { op, iterations: 1, se: nested(e.mask, e.size, 2) } };
    }
    if (r === 5) {
      const kind = rng.pick(['sobel', 'laplace'] as const);
      const args = { kind, axis: kind === 'sobel' ? 'x' : undefined, border: 'reflect101', saturate: true, cv2: true, cval: 0 };
      return { text: `filter --filter ${kind === 'sobel' ? 'sobel-x' : 'laplace'} --border reflect101 --saturate`, fn: 'filter', args };
    }
  }
}
const pipelineFamily: Family = {
  name: 'pipeline',
  title: 'pipelines (GPU-resident chains, colour meeting gray steps) = the references chained',
  count: 7,
  fixed: [],
  random: (rng, S) => {
    const dtype = u8or16(rng, 0.25);
    const m = anyInput(rng, S, size2d(rng, 160 * 120), dtype, colourOr1(rng, 0.3));
    const steps = Array.from({ length: rng.int(2, 3) }, () => drawStep(rng, dtype));
    const text = steps.map((s) => s.text).join(' | ');
    // The filter steps are 3×3: an image narrower than 3 along an axis is refused (a known difference).
    const larger = steps.some((s) => s.fn === 'filter') && Math.min(...m.img.shape) < 3;
    return { ...refusal(larger, 'reflect101'), op: 'pipeline', params: { chain: text }, src: m.img, how: m.how, ref: { fn: 'chain', args: { steps: steps.map((s) => ({ fn: s.fn, args: s.args })) }, what: 'the chained references' } };
  },
  run: async (c, on) => ({ image: (await runPipeline(c.src, parsePipeline(c.params.chain as string), on)).output }),
};

// ---- detection ----------------------------------------------------------------------------------------------
const CASCADES = { face: fixture('detect', 'lbpcascade_frontalface.xml'), cat: fixture('detect', 'lbpcascade_frontalcatface.xml') };
function detectCase(m: Made, cascade: keyof typeof CASCADES, scale: number, minNeighbors: number, minSize?: number): Spec {
  const args = { cascade: CASCADES[cascade], scale, minNeighbors, minSize: minSize ? [minSize, minSize] : undefined };
  return {
    op: `detect (lbpcascade_frontal${cascade === 'cat' ? 'cat' : ''}face)`, params: { cascade, scale, minNeighbors, minSize }, src: m.img, how: m.how,
    ref: { fn: 'detect', args, what: 'cv2.CascadeClassifier.detectMultiScale' },
  };
}
/**
 * On the GPU the classifier runs as one reduction kernel that loops over the weak classifiers: the default
 * schedule unrolls them into kernels baked for each frame size, which lavapipe's LLVM takes one to three minutes
 * to compile per size (the schedule does not change the result; test/detect compares the default one with the CPU).
 */
const detectFamily: Family = {
  name: 'detect',
  title: 'detection = cv2.CascadeClassifier.detectMultiScale (raw windows and grouped boxes)',
  count: 5,
  slabs: false,
  fixed: [
    (rng, S) => detectCase(crop(rng, 'astronaut', S.gray.astronaut, [181, 203]), 'face', 1.1, 3),
    (rng, S) => detectCase(crop(rng, 'lfw_mosaic', S.gray.lfw, [192, 320]), 'face', 1.2, 0),
    (rng, S) => detectCase(crop(rng, 'astronaut', S.gray.astronaut, [257, 301]), 'face', 1.15, 2, 30),
    // Colour (the GPU converts inside its pyramid kernel: GPU = CPU on this path is test/detect's): CPU only, the
    // cat cascade's kernels alone take lavapipe 17 s to compile.
    (rng, S) => ({ ...detectCase(crop(rng, 'chelsea', S.rgb, [201, 233]), 'cat', 1.1, 0), gpu: false }),
  ],
  random: (rng, S) => {
    const src = rng.pick(['astronaut', 'lfw'] as const);
    return detectCase(crop(rng, src, S.gray[src], [rng.int(24, 240), rng.int(24, 320)]), 'face', rng.pick([1.05, 1.1, 1.25, 1.3]), rng.pick([0, 1, 3]));
  },
  run: async (c, on) => {
    const p = c.params as { cascade: keyof typeof CASCADES; scale: number; minNeighbors: number; minSize?: number };
    const cl = await readClassifier(CASCADES[p.cascade]);
    const minSize = p.minSize ? { width: p.minSize, height: p.minSize } : undefined;
    const r = await detect(c.src, cl, { scale: p.scale, minNeighbors: p.minNeighbors, minSize, stages: on.gpu ? [cl.weak.length] : undefined, ...on });
    return { boxes: r.output.detections.map((d) => [d.x, d.y, d.width, d.height]).sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]) };
  },
};

// ---- the command line ----------------------------------------------------------------------------------------
/** A few cases through the CLI process (files in, files out): the same references, argument parsing included. */
const cliFamily: Family = {
  name: 'cli',
  title: 'the CLI (files, flags, --device cpu|gpu) = the references',
  count: 3,
  slabs: false,
  fixed: [
    (rng, S) => ({ ...equalizeCase(rng, anyInput(rng, S, [61, 97], 'uint16', 3)), params: { args: ['equalize'] } }),
    (rng) => ({
      ...filterCase(rng, noise(rng, [97, 143], 'uint16'), { kind: 'box', size: [7, 11], spec: 'box:7x11', ksize: [1, 11, 7], kanchor: [1, 5, 3], dense: false }, { border: 'reflect101', saturate: true, impl: 'auto', note: known('GPU uint16 box:7x11 --saturate vs cv2.blur ±1') }),
      params: { args: ['filter', '--filter', 'box:7x11', '--border', 'reflect101', '--saturate'] },
    }),
    (rng) => ({ ...globalCase(rng, arange(0, 181, 3), 'otsu', known('GPU Otsu on exact ties')), params: { args: ['threshold', '--method', 'otsu'] } }),
  ],
  random: () => {
    throw new Error('the cli family has fixed cases only');
  },
  run: async (c, on) => {
    const dir = mkdtempSync(join(tmpdir(), 'imgpu-parity-cli-'));
    try {
      const [cmd, ...flags] = c.params.args as string[];
      // A colour source goes as TIFF: its gray read is OpenCV's cvtColor rule, the references' own; a colour PNG read
      // gray is libpng's rgb_to_gray, as cv2.imread does it (other weights: test/io/png-libpng.test.ts checks that).
      const input = join(dir, c.src.dtype === 'float32' ? 'in.npy' : c.src.channels > 1 ? 'in.tif' : 'in.png');
      if (c.src.dtype === 'float32') writeFileSync(input, encodeNpy(c.src));
      else await writeImage(input, c.src);
      const out = join(dir, 'out.npy');
      const r = cli(cmd, input, out, ...flags, '--device', on.gpu ? 'gpu' : 'cpu', '--json');
      if (r.status !== 0) throw new Error(`imgpu ${cmd} exited ${r.status}: ${r.stderr.trim()}`);
      const report = JSON.parse(r.stdout) as { threshold?: number };
      const img = decodeNpy(readFileSync(out));
      // .npy has no channel axis: a colour result comes back as [h, w, c].
      const result: Image = img.shape.length === 3 && c.src.channels > 1 ? { ...img, shape: [img.shape[0], img.shape[1]], channels: c.src.channels } : img;
      return { [c.compare?.float ? 'float' : 'image']: result, threshold: report.threshold };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const FAMILIES: Family[] = [
  gray, equalizeFamily, histogramFamily, thresholdGlobal, thresholdLocal, thresholdAdaptive, claheTiled, claheWindow,
  morphCv, morphSp, filter2d, filter3d, pipelineFamily, detectFamily, cliFamily,
];

/** The selected cases of a family, each generated from its own seed. */
export function generate(f: Family, S: Sources): ParityCase[] {
  const out: ParityCase[] = [];
  for (let i = 0; i < f.count; i++) {
    const id = `${f.name}-${String(i).padStart(3, '0')}`;
    if (!selected(id)) continue;
    const seed = caseSeed(masterSeed(), f.name, i);
    const rng = new Rng(seed);
    out.push({ ...(i < f.fixed.length ? f.fixed[i] : f.random)(rng, S), id, family: f.name, seed });
  }
  return out;
}

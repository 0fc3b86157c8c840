import type { CpuPool } from '../../../core/cpu/pool.js';
import type { GpuContext } from '../../../core/gpu/context.js';
import type { Image } from '../../../core/image.js';
import type { Classifier } from '../classifier.js';
import { Detector } from '../index.js';
import { pyramidLevels, resizeLinearExact, windowGrid, type Level } from '../pyramid.js';

/**
 * Bootstrapping negatives (traincascade's CvCascadeImageReader::NegReader, with imgpu's detector as the scan): every
 * window of every background's pyramid that the cascade trained so far accepts is a candidate; `numNeg` of them,
 * spread evenly over all candidates in order (background, level, row, x), become the stage's negatives. The first
 * stage (no cascade yet) takes from every window of the pyramids. The scan is the detector's (CPU or the staged GPU
 * detector: the same windows on both), so mining on either path gives the same negatives.
 */

export interface Mined {
  samples: Uint8Array[];
  /** Windows the cascade accepted, over windows scanned. */
  found: number;
  scanned: number;
}

/** The accepted windows of one background: level, x, y triples (or, with no cascade, every window: `all`). */
interface Candidates {
  levels: Level[];
  hits?: Int32Array;
  count: number;
}

export interface MiningOptions {
  window: { width: number; height: number };
  scale: number;
  gpu?: GpuContext;
  pool?: CpuPool;
}

function gridCandidates(img: Image, o: MiningOptions): Candidates {
  const levels = pyramidLevels(img.shape[1], img.shape[0], o.window, { scale: o.scale, opencvStripes: true });
  return { levels, count: levels.reduce((a, l) => { const g = windowGrid(l); return a + g.perRow * g.rows; }, 0) };
}

/** The position of the k-th window of a pyramid's grid (level, then row, then x). */
function gridWindow(levels: Level[], k: number): [number, number, number] {
  for (let l = 0; l < levels.length; l++) {
    const g = windowGrid(levels[l]), n = g.perRow * g.rows;
    if (k < n) return [l, Math.floor(k / g.perRow) * levels[l].step, (k % g.perRow) * levels[l].step];
    k -= n;
  }
  throw new Error(`window ${k} past the pyramid`); // unreachable: k < count
}

export async function mineNegatives(backgrounds: readonly Image[], cascade: Classifier | undefined, numNeg: number, o: MiningOptions): Promise<Mined> {
  const candidates: Candidates[] = [];
  let scanned = 0;
  const detector = cascade ? new Detector(cascade, { scale: o.scale, minNeighbors: 0, gpu: o.gpu, pool: o.pool }) : undefined;
  try {
    for (const img of backgrounds) {
      if (!detector) {
        const c = gridCandidates(img, o);
        scanned += c.count;
        candidates.push(c);
        continue;
      }
      const out = (await detector.run(img)).output;
      scanned += out.windows;
      const hits = Int32Array.from(out.hits.flatMap((h) => [h.level, h.x, h.y]));
      candidates.push({ levels: out.levels, hits, count: out.hits.length });
    }
  } finally {
    detector?.close();
  }
  const found = candidates.reduce((a, c) => a + c.count, 0);
  return { samples: pick(backgrounds, candidates, Math.min(numNeg, found), found, o.window), found, scanned };
}

/** k of the `found` candidates, evenly spaced in order, cut out of their levels (each level resized once). */
function pick(backgrounds: readonly Image[], candidates: Candidates[], k: number, found: number, win: { width: number; height: number }): Uint8Array[] {
  const out: Uint8Array[] = [];
  let base = 0, b = 0;
  let cache: { b: number; level: number; px: Uint8Array } | undefined;
  for (let j = 0; j < k; j++) {
    const g = Math.floor((j * found) / k);
    while (g >= base + candidates[b].count) base += candidates[b++].count;
    const c = candidates[b], local = g - base;
    const [level, y, x] = c.hits ? [c.hits[3 * local], c.hits[3 * local + 2], c.hits[3 * local + 1]] : gridWindow(c.levels, local);
    if (!cache || cache.b !== b || cache.level !== level) cache = { b, level, px: levelPixels(backgrounds[b], c.levels[level]) };
    out.push(crop(cache.px, c.levels[level].width, x, y, win));
  }
  return out;
}

/** A level's pixels: the background resized as the detector's pyramid resizes it (bit-exact bilinear). */
function levelPixels(img: Image, l: Level): Uint8Array {
  const [H, W] = img.shape, src = img.data as Uint8Array;
  if (l.width === W && l.height === H) return src;
  const px = new Uint8Array(l.width * l.height);
  resizeLinearExact(src, W, H, l.width, l.height, px);
  return px;
}

function crop(px: Uint8Array, stride: number, x: number, y: number, win: { width: number; height: number }): Uint8Array {
  const out = new Uint8Array(win.width * win.height);
  for (let r = 0; r < win.height; r++) out.set(px.subarray((y + r) * stride + x, (y + r) * stride + x + win.width), r * win.width);
  return out;
}

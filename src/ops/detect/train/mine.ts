import type { CpuPool } from '../../../core/cpu/pool.js';
import type { GpuContext } from '../../../core/gpu/context.js';
import type { Image } from '../../../core/image.js';
import type { Classifier } from '../classifier.js';
import { Detector, selectAccepted, windowAt, type AcceptedWindows, type DetectOutput, type PendingDetection } from '../index.js';
import { pyramidLevels, resizeLinearExact, windowGrid, type Level } from '../pyramid.js';

/**
 * Bootstrapping negatives (traincascade's CvCascadeImageReader::NegReader, with imgpu's detector as the scan): every
 * window of every background's pyramid that the cascade trained so far accepts is a candidate; `numNeg` of them,
 * spread evenly over all candidates in order (background, level, row, x), become the stage's negatives. The first
 * stage (no cascade yet) takes from every window of the pyramids. The scan is the detector's (CPU or the staged GPU
 * detector: the same windows on both), so mining on either path gives the same negatives.
 *
 * The detector reports a background's accepted windows as its count and a bit per window (Detector 'accepted'):
 * on the GPU both are made on the device, so that the host does no work per accepted window — early stages accept
 * millions and keep num-neg. The picks are then made from the counts, found among the bits by rank, and cut out.
 */

export interface Mined {
  samples: Uint8Array[];
  /** Windows the cascade accepted, over windows scanned. */
  found: number;
  scanned: number;
}

/** The accepted windows of one background (in window order), or with no cascade (no `accepted`) every window of its pyramid. */
interface Candidates {
  levels: Level[];
  accepted?: AcceptedWindows;
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

export async function mineNegatives(backgrounds: readonly Image[], cascade: Classifier | undefined, numNeg: number, o: MiningOptions): Promise<Mined> {
  const candidates: Candidates[] = [];
  let scanned = 0;
  if (!cascade) {
    for (const img of backgrounds) {
      const c = gridCandidates(img, o);
      scanned += c.count;
      candidates.push(c);
    }
  } else {
    const detector = new Detector(cascade, { scale: o.scale, minNeighbors: 0, gpu: o.gpu, pool: o.pool }, 'accepted');
    try {
      for (const out of await scanBackgrounds(backgrounds, detector, o)) {
        scanned += out.windows;
        const accepted = out.accepted!; // a detector made for 'accepted' always reports them
        candidates.push({ levels: out.levels, accepted, count: accepted.count });
      }
    } finally {
      detector.close();
    }
  }
  const found = candidates.reduce((a, c) => a + c.count, 0);
  return { samples: pick(backgrounds, candidates, Math.min(numNeg, found), found, o.window), found, scanned };
}

/** Frames in flight on the GPU while mining: enough to hide a readback's latency behind the next frames' kernels. */
const GPU_DEPTH = 8;

/**
 * Every background scanned by the detector, results in the backgrounds' order. Backgrounds are small and many, so
 * one at a time leaves the device or the pool idle between them: on the GPU, frames are submitted ahead (`submitGpu`) up to GPU_DEPTH and completed
 * in order, grouped by size so that a size's plan is never evicted while its frames are in flight; on the CPU,
 * several backgrounds share the pool at once. A background's windows do not depend on what runs beside it, so the
 * candidates — and the cascade — are those of a scan one at a time (tested). Measured on the H200, this took the CPU
 * path's mining from 30.1 to 21.8 s and the GPU's only from 28.8 to 27.5 s: there the bound was the host work on
 * every accepted window, which a detector made for 'accepted' no longer does (docs/training.md).
 */
export async function scanBackgrounds(backgrounds: readonly Image[], detector: Detector, o: MiningOptions): Promise<DetectOutput[]> {
  const out = new Array<DetectOutput>(backgrounds.length);
  if (o.gpu) {
    const gpu = o.gpu;
    const pending: { i: number; done: PendingDetection }[] = [];
    const complete = async (): Promise<void> => {
      const f = pending.shift()!;
      out[f.i] = (await f.done()).output;
    };
    let size = '';
    try {
      for (const i of bySize(backgrounds)) {
        const key = backgrounds[i].shape.join('x');
        while (pending.length && (key !== size || pending.length >= GPU_DEPTH)) await complete();
        size = key;
        pending.push({ i, done: await detector.submitGpu(backgrounds[i], gpu) });
      }
      while (pending.length) await complete();
    } finally {
      // On an error, the frames still in flight are completed (and their errors dropped) before the detector closes.
      await Promise.allSettled(pending.map((f) => f.done()));
    }
    return out;
  }
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < backgrounds.length) {
      const i = next++;
      out[i] = (await detector.runCpu(backgrounds[i])).output;
    }
  };
  await Promise.all(Array.from({ length: Math.min(backgrounds.length, 2 * (o.pool?.size ?? 1)) }, lane));
  return out;
}

/** The backgrounds' indices, those of one size together (first appearance order, stable within a size). */
function bySize(backgrounds: readonly Image[]): number[] {
  const groups = new Map<string, number[]>();
  backgrounds.forEach((b, i) => {
    const key = b.shape.join('x');
    const g = groups.get(key);
    if (g) g.push(i);
    else groups.set(key, [i]);
  });
  return [...groups.values()].flat();
}

/**
 * k of the `found` candidates, evenly spaced in order (the j-th is candidate ⌊j·found/k⌋), cut out of their levels
 * (each level resized once). The ranks are found per background from the counts alone; only then are the picked
 * windows looked up among that background's bits.
 */
function pick(backgrounds: readonly Image[], candidates: Candidates[], k: number, found: number, win: { width: number; height: number }): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const { b, ranks } of ranksByBackground(candidates, k, found)) {
    const c = candidates[b];
    const windows = c.accepted ? selectAccepted(c.accepted.bits, ranks) : ranks;
    let cache: { level: number; px: Uint8Array } | undefined;
    for (const w of windows) {
      const [level, y, x] = windowAt(c.levels, w);
      if (cache?.level !== level) cache = { level, px: levelPixels(backgrounds[b], c.levels[level]) };
      out.push(crop(cache.px, c.levels[level].width, x, y, win));
    }
  }
  return out;
}

/** The picks' ranks among each background's candidates (ascending), backgrounds in order, those with no pick left out. */
function ranksByBackground(candidates: Candidates[], k: number, found: number): { b: number; ranks: number[] }[] {
  const out: { b: number; ranks: number[] }[] = [];
  let base = 0, b = 0;
  for (let j = 0; j < k; j++) {
    const g = Math.floor((j * found) / k);
    while (g >= base + candidates[b].count) base += candidates[b++].count;
    if (out.at(-1)?.b !== b) out.push({ b, ranks: [] });
    out.at(-1)!.ranks.push(g - base);
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

import type { ParamSpec } from '../core/params.js';
import type { Image } from '../core/image.js';
import type { GpuImage } from '../core/gpu/gpu-image.js';
import type { OpResult } from '../core/timings.js';
import type { ImageOperation, Operation } from '../core/op.js';
import { clahe, claheParams, type ClaheOptions } from './clahe/index.js';
import { compareArrays, compareImages } from '../core/compare.js';
import * as families from './index.js';
import { histogram, histogramParams, type HistogramOptions } from './histogram/index.js';
import { morph, morphParams, type MorphOptions } from './morph/index.js';

export { FILTER_TOLERANCE } from './convolve/index.js';

/**
 * A family not yet declared with defineOp, as an Operation (moved onto the skeleton one family at a time; this
 * adapter goes when the last one has moved).
 */
function legacy<H = Image, D = GpuImage>(name: string, summary: string, params: readonly ParamSpec[], run: (src: Image | GpuImage, p: Record<string, unknown>, on?: object) => Promise<OpResult<H | D>>, more: Partial<Operation<readonly ParamSpec[], object, H, D>> = {}): Operation<readonly ParamSpec[], object, H, D> {
  const input = more.input ?? { dtypes: ['uint8', 'uint16'], colour: 'gray' };
  return {
    name, summary, params, positional: [], input, colour: input.colour !== 'gray', writes: true, run: run as Operation<readonly ParamSpec[], object, H, D>['run'],
    compare: (a, b) => compareImages(a as Image, b as Image), report: () => ({ json: {}, text: [] }),
    ...more,
  };
}

/** A function made by defineOp (it carries its declaration as `.op`). */
function isDeclared(x: unknown): x is { op: Operation } {
  return typeof x === 'function' && typeof (x as { op?: unknown }).op === 'object';
}

/** The operations the families declare with defineOp, in the order of ops/index.ts's names. */
const DECLARED: Operation[] = Object.values(families as Record<string, unknown>).flatMap((f) => (isDeclared(f) ? [f.op] : []));

/** The image → image operations: CLI commands, pipeline stages, batch jobs and playground forms derive from this list. */
const IMAGE_OPS: ImageOperation[] = [
  ...(DECLARED.filter((op) => op.writes) as ImageOperation[]),
  legacy<Image, GpuImage>('clahe', 'contrast-limited adaptive equalization: tiled (bit-identical to cv2.createCLAHE) or --window R per pixel; colour on YCrCb Y', claheParams,
    (img, p, on) => clahe(img, { ...on, ...p } as ClaheOptions), { input: { dtypes: ['uint8', 'uint16'], colour: 'luma' } }),
  legacy<Image, GpuImage>('morph', 'morphology: erode|dilate|open|close|gradient|tophat|blackhat, van Herk/Gil-Werman for boxes (= cv2, or scipy with --border scipy)', morphParams,
    (img, p, on) => morph(img, { ...on, ...p } as MorphOptions), { positional: ['op'] }),
];

/** Operations whose result is not an image (the CLI reports it). */
const REPORT_OPS: Operation[] = [
  ...DECLARED.filter((op) => !op.writes),
  legacy<Uint32Array, unknown>('histogram', 'histogram counts (numpy.bincount / np.histogram over [0, 2^bits), cv2.calcHist with --mask)',
    [...histogramParams, { name: 'mask', kind: 'image', doc: 'count only where this 8-bit image of the same size is non-zero' }],
    (img, p, on) => histogram(img, { ...on, ...p, method: p.hist } as HistogramOptions), {
      writes: false, compare: compareArrays,
      report: (r) => ({ json: { counts: Array.from(r.output) }, text: summarizeCounts(r.output) }),
    }) as Operation,
];

/** Every operation by name (the CLI's commands). */
export const ALL_OPERATIONS: Readonly<Record<string, Operation>> = Object.fromEntries([...IMAGE_OPS, ...REPORT_OPS].map((op) => [op.name, op]));

/** The image → image operations by name: pipeline stages and playground forms. */
export const OPERATIONS: Readonly<Record<string, ImageOperation>> = Object.fromEntries(IMAGE_OPS.map((op) => [op.name, op]));

function summarizeCounts(h: Uint32Array): string[] {
  let total = 0, nonzero = 0, mode = 0, lo = -1, hi = -1;
  for (let i = 0; i < h.length; i++) {
    total += h[i];
    if (h[i]) {
      nonzero++;
      if (lo < 0) lo = i;
      hi = i;
      if (h[i] > h[mode]) mode = i;
    }
  }
  return [`  ${h.length} bins, ${total} pixels counted, ${nonzero} non-zero bins in [${lo}, ${hi}], mode bin ${mode} (${h[mode]})`];
}

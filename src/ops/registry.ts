import type { ParamSpec } from '../core/params.js';
import type { Image } from '../core/image.js';
import type { GpuImage } from '../core/gpu/gpu-image.js';
import type { OpResult } from '../core/timings.js';
import type { ImageOperation, Operation } from '../core/op.js';
import { filter, filterParams, type FilterOptions, type FilterResult } from './convolve/index.js';
import { compareImages, compareWithin } from '../core/compare.js';
import * as families from './index.js';
import { morph, morphParams, type MorphOptions } from './morph/index.js';
import { threshold, thresholdParams, type ThresholdOptions, type ThresholdResult } from './threshold/index.js';

/** CPU and GPU float results of filters agree to this fraction of the output's largest magnitude (docs/convolution.md). */
export const FILTER_TOLERANCE = 1e-5;

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

/** The operations the families declare with defineOp, by exported name (a module namespace lists its names sorted). */
const DECLARED: Operation[] = Object.values(families as Record<string, unknown>).flatMap((f) => (isDeclared(f) ? [f.op] : []));

/** The image → image operations: CLI commands, pipeline stages, batch jobs and playground forms derive from this list. */
const IMAGE_OPS: ImageOperation[] = [
  ...(DECLARED.filter((op) => op.writes) as ImageOperation[]),
  legacy<Image, GpuImage>('threshold', 'binary segmentation: global otsu/isodata, local adaptive (isodata per window), mean/gaussian (cv2.adaptiveThreshold)', thresholdParams,
    (img, p, on) => threshold(img, { ...on, ...p } as ThresholdOptions), {
      report: (r) => {
        const { threshold: t, fallback } = r as ThresholdResult<Image | GpuImage>;
        if (t !== undefined) return { json: { threshold: t }, text: [`  threshold ${t} (pixels > ${t} are foreground)`] };
        if (fallback !== undefined) return { json: { fallback }, text: [`  global isodata fallback ${fallback} (used in windows too uniform to split)`] };
        return { json: {}, text: [] };
      },
    }),
  legacy<Image, GpuImage>('morph', 'morphology: erode|dilate|open|close|gradient|tophat|blackhat, van Herk/Gil-Werman for boxes (= cv2, or scipy with --border scipy)', morphParams,
    (img, p, on) => morph(img, { ...on, ...p } as MorphOptions), { positional: ['op'] }),
  legacy<Image, GpuImage>('filter', 'convolution filters on 2D images and 3D volumes: sobel, prewitt, roberts, gauss, box, laplace, any kernel (= scipy.ndimage / cv2 within 1e-5)', filterParams,
    (img, p, on) => filter(img, p.filter as string, { ...on, ...p } as FilterOptions), {
      // Saturated 8/16-bit results may round a float lying within rounding of a .5 tie differently: ±1.
      compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareWithin(a, b, 0, 1)),
      report: (r) => {
        const impl = (r as FilterResult<Image | GpuImage>).impl;
        return { json: { impl }, text: [`  implementation: ${impl}`] };
      },
    }),
];

/** Operations whose result is not an image (the CLI reports it). */
const REPORT_OPS: Operation[] = DECLARED.filter((op) => !op.writes);

/** Every operation by name (the CLI's commands). */
export const ALL_OPERATIONS: Readonly<Record<string, Operation>> = Object.fromEntries([...IMAGE_OPS, ...REPORT_OPS].map((op) => [op.name, op]));

/** The image → image operations by name: pipeline stages and playground forms. */
export const OPERATIONS: Readonly<Record<string, ImageOperation>> = Object.fromEntries(IMAGE_OPS.map((op) => [op.name, op]));

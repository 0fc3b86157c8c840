import type { CpuPool } from '../core/cpu/pool.js';
import type { GpuContext } from '../core/gpu/context.js';
import type { Image } from '../core/image.js';
import type { ParamSpec } from '../core/params.js';
import type { OpResult } from '../core/timings.js';
import { clahe, claheParams, type ClaheOptions } from './clahe/index.js';
import { filter, filterParams, type FilterOptions } from './convolve/index.js';
import { compareWithin, type Comparison } from '../core/compare.js';
import { equalize, equalizeParams } from './equalize/index.js';
import type { HistogramMethod } from './histogram/gpu.js';
import { morph, morphParams, type MorphOptions } from './morph/index.js';
import { threshold, thresholdParams, type ThresholdOptions } from './threshold/index.js';

/**
 * The image → image operations as data: what generic machinery (the CLI, the browser playground) needs to
 * offer one without code of its own — a summary, the declared parameters, whether colour input is taken as
 * it is, which parameters are positional on the command line, and how to run it on either path.
 */
export interface ImageOperation {
  summary: string;
  params: readonly ParamSpec[];
  /** Colour input is processed as colour (else converted to OpenCV's gray first). */
  colour?: boolean;
  /** Parameters given as positional arguments before <in> <out> on the command line (e.g. morph's <op>). */
  positional?: readonly string[];
  run(img: Image, params: Record<string, unknown>, on: { gpu?: GpuContext; pool?: CpuPool }): Promise<OpResult<Image>>;
  /** How the CPU and GPU results are compared (default: bit for bit). */
  compare?(cpu: Image, gpu: Image): Comparison;
}

/** CPU and GPU float results of filters agree to this fraction of the output's largest magnitude (docs/convolution.md). */
export const FILTER_TOLERANCE = 1e-5;

export const OPERATIONS: Record<string, ImageOperation> = {
  equalize: {
    summary: 'global histogram equalization (bit-identical to cv2.equalizeHist on 8-bit)',
    params: equalizeParams,
    run: (img, p, on) => equalize(img, { ...on, hist: p.hist as HistogramMethod }),
  },
  threshold: {
    summary: 'binary segmentation: global otsu/isodata, local adaptive (isodata per window), mean/gaussian (cv2.adaptiveThreshold)',
    params: thresholdParams,
    run: (img, p, on) => threshold(img, { ...on, ...p } as ThresholdOptions),
  },
  clahe: {
    summary: 'contrast-limited adaptive equalization: tiled (bit-identical to cv2.createCLAHE) or --window R per pixel; colour on YCrCb Y',
    params: claheParams,
    colour: true,
    run: (img, p, on) => clahe(img, { ...on, ...p } as ClaheOptions),
  },
  morph: {
    summary: 'morphology: erode|dilate|open|close|gradient|tophat|blackhat, van Herk/Gil-Werman for boxes (= cv2, or scipy with --border scipy)',
    params: morphParams,
    positional: ['op'],
    run: (img, p, on) => morph(img, { ...on, ...p } as MorphOptions),
  },
  filter: {
    summary: 'convolution filters on 2D images and 3D volumes: sobel, prewitt, roberts, gauss, box, laplace, any kernel (= scipy.ndimage / cv2 within 1e-5)',
    params: filterParams,
    run: (img, p, on) => filter(img, p.filter as string, { ...on, ...p } as FilterOptions),
    // Saturated 8/16-bit results may round a float lying within rounding of a .5 tie differently: ±1.
    compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareWithin(a, b, 0, 1)),
  },
};

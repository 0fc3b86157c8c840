import { compareArrays, compareImages, compareWithin, type Comparison } from '../core/compare.js';
import { parsePipeline, runPipeline } from '../ops/pipeline.js';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { denseKernel, filter, kernelFromJson, type FilterOptions, type FilterPlan, type FilterResult } from '../ops/convolve/index.js';
import type { CpuPool } from '../core/cpu/pool.js';
import type { GpuContext } from '../core/gpu/context.js';
import { asShape3D, type Image } from '../core/image.js';
import type { ParamSpec, Rect } from '../core/params.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { OpResult } from '../core/timings.js';
import { readImage, writeImage, type WriteOptions } from '../io/index.js';
import { maskElement, type StructuringElement } from '../ops/morph/index.js';
import { FILTER_TOLERANCE, OPERATIONS } from '../ops/registry.js';
import { histogram, histogramParams, type HistogramMethod } from '../ops/histogram/index.js';
import type { ThresholdResult } from '../ops/threshold/index.js';

export interface RunOn {
  gpu?: GpuContext;
  pool: CpuPool;
  /** GPU: time each phase separately (the default) or let them overlap (batch mode). */
  profile?: boolean;
  /** GPU: return the output as a view of mapped readback memory, with a release() (batch mode). */
  view?: boolean;
}

/**
 * One CLI operation: its positional arguments, its declared parameters (flags, help and validation come from
 * them), extra image inputs given as paths (e.g. --mask), how to run it on either path, how to compare the
 * two results, how to write the output, and what to report besides timings.
 */
export interface OpCommand<T> {
  summary: string;
  positional: readonly string[];
  params: readonly ParamSpec[];
  imageFlags?: readonly string[];
  /** The operation takes colour input as it is (e.g. CLAHE of the lightness); others get OpenCV's gray. */
  colour?: boolean;
  run(img: Image, params: Record<string, unknown>, on: RunOn, images: Record<string, Image | undefined>): Promise<OpResult<T>>;
  compare(a: T, b: T): Comparison;
  write?(path: string, out: T, opts?: WriteOptions): Promise<void>;
  /** Checks the parameters as a whole before any input is read (e.g. a pipeline's chain). */
  validate?(params: Record<string, unknown>): void;
  /** What to print besides timings, from the result of the path that produced the output. */
  report(result: OpResult<T>, params: Record<string, unknown>): { json: Record<string, unknown>; text: string[] };
}

/** `mask:FILE` (a .npy or image of 0 / non-zero) as an element; other specs are parsed by the operation. */
async function elementArg(spec: string): Promise<string | StructuringElement> {
  if (!spec.startsWith('mask:')) return spec;
  const m = await readImage(spec.slice(5));
  if (m.channels !== 1) throw new InvalidArgumentError(`${spec}: a mask has one channel`);
  return maskElement(Uint8Array.from(m.data, (v) => (v ? 1 : 0)), asShape3D(m.shape), spec);
}

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

/**
 * `kernel:FILE` as a one-kernel filter: a .npy (2D or 3D, any dtype imgpu reads) or a .json kernel (kernel.ts
 * kernelFromJson), applied as a correlation (cv2.filter2D, scipy.ndimage.correlate). Other specs pass through.
 */
async function filterArg(spec: string): Promise<string | FilterPlan> {
  if (!spec.startsWith('kernel:')) return spec;
  const path = spec.slice(7);
  if (extname(path).toLowerCase() === '.json') {
    const text = await readFile(path, 'utf8').catch((e: Error) => { throw new InvalidArgumentError(`${spec}: ${e.message}`); });
    return { name: spec, components: [kernelFromJson(text, path)], combine: 'single' };
  }
  const k = await readImage(path);
  if (k.channels !== 1) throw new InvalidArgumentError(`${spec}: a kernel has one channel`);
  return { name: spec, components: [denseKernel(k.data, [...k.shape], undefined, path)], combine: 'single' };
}

/** A registry operation as a CLI command: <positional params…> <in> <out>, writes its image. */
function imageCommand(name: string, extra: Partial<OpCommand<Image>> = {}): OpCommand<Image> {
  const op = OPERATIONS[name];
  return {
    summary: op.summary, params: op.params, colour: op.colour, positional: [...(op.positional ?? []), 'in', 'out'],
    run: (img, p, on) => op.run(img, p, on),
    compare: (a, b) => op.compare?.(a, b) ?? compareImages(a, b),
    write: writeImage,
    report: () => ({ json: {}, text: [] }),
    ...extra,
  };
}

export const COMMANDS: Record<string, OpCommand<any>> = {
  equalize: imageCommand('equalize'),
  clahe: imageCommand('clahe'),
  morph: imageCommand('morph', {
    run: async (img, p, on) => OPERATIONS.morph.run(img, { ...p, se: await elementArg(p.se as string) }, on),
  }),
  histogram: {
    summary: 'histogram counts (numpy.bincount / np.histogram over [0, 2^bits), cv2.calcHist with --mask)',
    positional: ['in'],
    params: histogramParams,
    imageFlags: ['mask'],
    run: (img, p, on, images) => histogram(img, { ...on, method: p.hist as HistogramMethod, bins: p.bins as number | undefined, roi: p.roi as Rect | undefined, mask: images.mask }),
    compare: compareArrays,
    report: (r) => ({ json: { counts: Array.from(r.output) }, text: summarizeCounts(r.output) }),
  } satisfies OpCommand<Uint32Array>,
  filter: imageCommand('filter', {
    run: async (img, p, on) => filter(img, await filterArg(p.filter as string), { ...on, ...p } as FilterOptions),
    report: (r) => {
      const impl = (r as FilterResult<Image>).impl;
      return { json: { impl }, text: [`  implementation: ${impl}`] };
    },
  }),
  pipeline: {
    summary: 'operations chained on the GPU-resident image: "clahe --clip 2 | threshold --method otsu" (one upload, one download)',
    positional: ['in', 'out', 'chain'],
    params: [{ name: 'chain', kind: 'string', doc: 'operations separated by |, each with its options' }],
    validate: (p) => void parsePipeline(p.chain as string),
    run: (img, p, on) => runPipeline(img, parsePipeline(p.chain as string), on),
    compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareImages(a, b)),
    write: writeImage,
    report: (_r, p) => ({ json: { steps: parsePipeline(p.chain as string) }, text: [] }),
  } satisfies OpCommand<Image>,
  threshold: imageCommand('threshold', {
    report: (r) => {
      const { threshold: t, fallback } = r as ThresholdResult<Image>;
      if (t !== undefined) return { json: { threshold: t }, text: [`  threshold ${t} (pixels > ${t} are foreground)`] };
      if (fallback !== undefined) return { json: { fallback }, text: [`  global isodata fallback ${fallback} (used in windows too uniform to split)`] };
      return { json: {}, text: [] };
    },
  }),
};

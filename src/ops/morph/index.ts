import type { CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Recording } from '../../core/gpu/recording.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { checkBinding } from '../../core/gpu/limits.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { asShape3D, checkOut, intoOut, type Image } from '../../core/image.js';
import { resolveParams, type ParamSpec } from '../../core/params.js';
import { closeTimings, makeTimings, now, type OpResult } from '../../core/timings.js';
import { grayInput } from '../input.js';
import { inlinePool } from '../tasks.js';
import { primitiveCpu, subtractCpu } from './cpu.js';
import { MORPH_METHODS, MorphGpu, type Aligned, type MorphMethod } from './gpu.js';
import { lanes, type MorphDtype } from './morph.wgsl.js';
import { MORPH_BORDERS, primitiveReach, type MorphBorder, type MorphPrimitive } from './plan.js';
import { checkMaskCells, maskElement, parseElement, type StructuringElement } from './se.js';

export { MORPH_BORDERS, type MorphBorder } from './plan.js';
export { MORPH_METHODS, type MorphMethod } from './gpu.js';
export { crossElement, ellipseElement, maskElement, parseElement, type StructuringElement } from './se.js';

export const MORPH_OPS = ['erode', 'dilate', 'open', 'close', 'gradient', 'tophat', 'blackhat'] as const;
export type MorphOp = (typeof MORPH_OPS)[number];

/** Declared once: CLI flags, help and validation come from here. */
/** `mask:FILE` (a .npy or image of 0 / non-zero, read by io) as a structuring element. */
function elementFromFile(f: { spec: string; image?: Image }): StructuringElement {
  const m = f.image!;
  if (m.channels !== 1) throw new InvalidArgumentError(`${f.spec}: a mask has one channel`);
  return maskElement(Uint8Array.from(m.data, (v) => (v ? 1 : 0)), asShape3D(m.shape), f.spec);
}

export const morphParams: readonly ParamSpec[] = [
  { name: 'op', kind: 'enum', choices: MORPH_OPS, default: 'erode', doc: 'operation (open = dilate∘erode, close = erode∘dilate, gradient = dilate − erode, tophat = src − open, blackhat = close − src)' },
  { name: 'se', kind: 'string', default: 'rect:3x3', file: { prefix: 'mask:', load: elementFromFile }, doc: 'structuring element: rect:WxH, line:LEN:h|v|d, box:WxHxD, cross:N, ellipse:WxH, mask:FILE.npy' },
  { name: 'iterations', kind: 'int', min: 1, max: 1000, default: 1, doc: 'erosions/dilations per primitive (OpenCV: a rectangle runs once, enlarged)' },
  { name: 'border', kind: 'enum', choices: MORPH_BORDERS, default: 'opencv', doc: 'opencv: neutral constant border, anchor ⌊k/2⌋ (= cv2); scipy: reflect border, reflected dilation (= scipy.ndimage)' },
  { name: 'method', kind: 'enum', choices: MORPH_METHODS, default: 'auto', doc: 'auto: van Herk/Gil-Werman for boxes, direct otherwise; naive: direct for every element' },
];

export interface MorphOptions extends GpuRunOptions {
  /** @default 'erode' */
  op?: MorphOp;
  /** An element spec (e.g. 'rect:51x51', 'ellipse:7x7') or a StructuringElement. @default 'rect:3x3' */
  se?: string | StructuringElement;
  /** @default 1 */
  iterations?: number;
  /** @default 'opencv' */
  border?: MorphBorder;
  /** @default 'auto' */
  method?: MorphMethod;
  gpu?: GpuContext;
  pool?: CpuPool;
}

/** How each operation is made of erosions, dilations and differences. */
type Plan<T> = { primitive: (x: T, op: MorphPrimitive) => Promise<T>; subtract: (a: T, b: T) => Promise<T> };
async function compose<T>(op: MorphOp, src: T, p: Plan<T>): Promise<T> {
  switch (op) {
    case 'erode':
    case 'dilate':
      return p.primitive(src, op);
    case 'open':
      return p.primitive(await p.primitive(src, 'erode'), 'dilate');
    case 'close':
      return p.primitive(await p.primitive(src, 'dilate'), 'erode');
    case 'gradient':
      return p.subtract(await p.primitive(src, 'dilate'), await p.primitive(src, 'erode'));
    case 'tophat':
      return p.subtract(src, await compose('open', src, p));
    case 'blackhat':
      return p.subtract(await compose('close', src, p), src);
  }
}

/** Erosions/dilations applied one after another on the way from the input to any output pixel. */
const DEPTH: Record<MorphOp, number> = { erode: 1, dilate: 1, gradient: 1, open: 2, close: 2, tophat: 2, blackhat: 2 };

/**
 * What the GPU path needs of slabs (core/gpu/slabs.ts) for an image beyond one storage binding: rows (2D) or
 * planes (volumes) with a halo as deep as the composed operation reads, and the aligned layout's bytes per unit;
 * the direct kernel's offset table must fit one binding too.
 */
function gpuSlabs(ctx: GpuContext, shape: Image['shape'], dtype: MorphDtype, se: StructuringElement, p: { op: MorphOp; border: MorphBorder; iterations: number; method: MorphMethod }): SlabSpec {
  const [d, h, w] = asShape3D(shape);
  const axis = d > 1 ? 0 : 1;
  const reach = Math.max(...(['erode', 'dilate'] as const).map((op) => primitiveReach(se, op, p.border, p.iterations, axis)));
  const rowBytes = Math.ceil(w / lanes(dtype).epw) * 4;
  if (p.method === 'naive' || se.kind === 'mask') checkBinding(ctx, se.mask.reduce((a, v) => a + v, 0) * 12, `morph: the offsets of ${se.spec}`);
  return { halo: DEPTH[p.op] * reach, unitBytes: axis === 0 ? h * rowBytes : rowBytes, what: 'morph' };
}

function element(se: string | StructuringElement, rank: number): StructuringElement {
  const e = typeof se === 'string' ? parseElement(se) : se;
  if (rank === 2 && e.size[0] > 1) throw new InvalidArgumentError(`structuring element ${e.spec} is 3D (depth ${e.size[0]}) but the image is 2D`);
  return e;
}

/**
 * Grayscale (and binary: 0/1 or 0/255 images are grayscale images) morphology of u8, u16 and f32 images and
 * volumes. Boxes, rectangles and lines run with van Herk/Gil-Werman, one 1-D pass per axis, at most three
 * comparisons per pixel whatever the element size; other elements with a direct kernel.
 * border 'opencv' (default) is bit-identical to cv2.erode/dilate/morphologyEx with their default border and
 * anchor; 'scipy' to scipy.ndimage.grey_erosion/grey_dilation/grey_opening/grey_closing (mode 'reflect').
 * Elements larger than the image are allowed: the border rule decides what lies outside.
 */
export async function morph(src: Image, opts?: MorphOptions): Promise<OpResult<Image>>;
export async function morph(src: GpuImage, opts?: MorphOptions): Promise<OpResult<GpuImage>>;
export async function morph(src: Image | GpuImage, opts?: MorphOptions): Promise<OpResult<Image | GpuImage>>;
export async function morph(src: Image | GpuImage, opts: MorphOptions = {}): Promise<OpResult<Image | GpuImage>> {
  const t0 = now();
  const p = resolveParams<{ op: MorphOp; se: string; iterations: number; border: MorphBorder; method: MorphMethod }>('morph', morphParams, {
    op: opts.op, se: typeof opts.se === 'string' ? opts.se : undefined, iterations: opts.iterations, border: opts.border, method: opts.method,
  });
  const se = element(opts.se ?? p.se, src.shape.length === 3 && src.shape[0] > 1 ? 3 : 2);
  if (p.method === 'naive' || se.kind === 'mask') checkMaskCells(se.size, se.spec, 'the direct kernel');
  const gray = grayInput(src, 'morph', ['uint8', 'uint16', 'float32']);
  const slabs = (ctx: GpuContext, shape: Image['shape']): SlabSpec => gpuSlabs(ctx, shape, gray.dtype as MorphDtype, se, p);
  const body = async (input: GpuImage, rec: Recording): Promise<GpuImage> => recordInSlabs(rec, input, slabs(input.ctx, input.shape), async (slab) => {
    const m = new MorphGpu(slab.ctx, slab.dtype as MorphDtype);
    const start = await m.toAligned(rec, slab);
    const out = await compose<Aligned>(p.op, start, {
      primitive: (x, op) => m.primitive(rec, x, op, se, p.border, p.iterations, p.method),
      subtract: (a, b) => m.subtract(rec, a, b),
    });
    return m.fromAligned(rec, out, [...slab.shape] as GpuImage['shape'], false);
  });
  const gpu = gray instanceof GpuImage ? gray.ctx : opts.gpu;
  // Before any upload: whether the image fits the device, whole or in slabs (else a GpuLimitError).
  if (gpu) slabsFor(gpu, gray.shape, gray.dtype, slabs(gpu, gray.shape));
  if (gray instanceof GpuImage) return runGpu(gray.ctx, gray, 'morph', opts, body) as Promise<OpResult<GpuImage>>;
  if (opts.out) checkOut(opts.out, gray);
  if (opts.gpu) {
    const r = (await runGpu(opts.gpu, gray, 'morph', opts, body)) as OpResult<Image>;
    return { ...r, timings: closeTimings(r.timings, t0) };
  }
  const pool = opts.pool ?? inlinePool;
  const tk = now();
  const output = intoOut(await compose<Image>(p.op, gray, {
    primitive: (x, op) => primitiveCpu(x, op, p.method === 'naive' ? { ...se, kind: 'mask' } : se, p.border, p.iterations, pool),
    subtract: (a, b) => subtractCpu(a, b, pool),
  }), opts.out);
  const k = now() - tk;
  return { output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: `morph.${p.op}`, ms: k }], kernelSource: 'cpu', total: now() - t0 }) };
}

/** Erosion: morph with op 'erode'. */
export const erode = (src: Image, opts: Omit<MorphOptions, 'op'> = {}) => morph(src, { ...opts, op: 'erode' });
/** Dilation: morph with op 'dilate'. */
export const dilate = (src: Image, opts: Omit<MorphOptions, 'op'> = {}) => morph(src, { ...opts, op: 'dilate' });

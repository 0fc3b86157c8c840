import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import type { GpuImage } from '../../core/gpu/gpu-image.js';
import { checkBinding } from '../../core/gpu/limits.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { asShape3D, intoOut, type Image } from '../../core/image.js';
import { defineOp, GRAY_PARAM, type OpOptions } from '../../core/op.js';
import type { ParamSpec, ResolvedOf } from '../../core/params.js';
import { now } from '../../core/timings.js';
import { primitiveCpu, subtractCpu } from './cpu.js';
import { MORPH_METHODS, MorphGpu, type Aligned } from './gpu.js';
import { lanes, type MorphDtype } from './morph.wgsl.js';
import { MORPH_BORDERS, primitiveReach, type MorphPrimitive } from './plan.js';
import { checkMaskCells, maskElement, parseElement, type StructuringElement } from './se.js';

export { MORPH_BORDERS, type MorphBorder } from './plan.js';
export { MORPH_METHODS, type MorphMethod } from './gpu.js';
export { crossElement, ellipseElement, maskElement, parseElement, type StructuringElement } from './se.js';

export const MORPH_OPS = ['erode', 'dilate', 'open', 'close', 'gradient', 'tophat', 'blackhat'] as const;
export type MorphOp = (typeof MORPH_OPS)[number];

/** `mask:FILE` (a .npy or image of 0 / non-zero, read by io) as a structuring element. */
function elementFromFile(f: { spec: string; image?: Image }): StructuringElement {
  const m = f.image!;
  if (m.channels !== 1) throw new InvalidArgumentError(`${f.spec}: a mask has one channel`);
  return maskElement(Uint8Array.from(m.data, (v) => (v ? 1 : 0)), asShape3D(m.shape), f.spec);
}

/**
 * Declared once: the options type, CLI flags, help, validation and the playground form come from here.
 * `border` is morph's convention switch (anchor, border value and the reflection of dilation together, as cv2 or
 * as scipy.ndimage), not a border mode of core/border.ts.
 */
export const morphParams = [
  { name: 'op', kind: 'enum', choices: MORPH_OPS, default: 'erode', doc: 'operation (open = dilate∘erode, close = erode∘dilate, gradient = dilate − erode, tophat = src − open, blackhat = close − src)' },
  { name: 'se', kind: 'string', default: 'rect:3x3', file: { prefix: 'mask:', load: elementFromFile }, doc: 'structuring element: rect:WxH, line:LEN:h|v|d, box:WxHxD, cross:N, ellipse:WxH, mask:FILE.npy' },
  { name: 'iterations', kind: 'int', min: 1, max: 1000, default: 1, doc: 'erosions/dilations per primitive (OpenCV: a rectangle runs once, enlarged)' },
  { name: 'border', kind: 'enum', choices: MORPH_BORDERS, default: 'opencv', doc: 'convention, not a border mode — opencv: neutral constant border, anchor ⌊k/2⌋ (= cv2); scipy: reflect border, reflected dilation (= scipy.ndimage)' },
  { name: 'impl', aliases: ['method'], kind: 'enum', choices: MORPH_METHODS, default: 'auto', doc: 'auto: van Herk/Gil-Werman for boxes, direct otherwise; naive: direct for every element' },
  GRAY_PARAM,
] as const satisfies readonly ParamSpec[];

/** `se`: an element spec (e.g. 'rect:51x51', 'ellipse:7x7') or a StructuringElement; `impl` (or `method`). */
export type MorphOptions = OpOptions<typeof morphParams>;

/** What both paths take: the parameters with the element parsed once and checked against the image. */
type MorphRun = Omit<ResolvedOf<typeof morphParams>, 'se'> & { se: StructuringElement };

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
function gpuSlabs(ctx: GpuContext, shape: Image['shape'], dtype: MorphDtype, p: MorphRun): SlabSpec {
  const [d, h, w] = asShape3D(shape);
  const axis = d > 1 ? 0 : 1;
  const reach = Math.max(...(['erode', 'dilate'] as const).map((op) => primitiveReach(p.se, op, p.border, p.iterations, axis)));
  const rowBytes = Math.ceil(w / lanes(dtype).epw) * 4;
  if (p.impl === 'naive' || p.se.kind === 'mask') checkBinding(ctx, p.se.mask.reduce((a, v) => a + v, 0) * 12, `morph: the offsets of ${p.se.spec}`);
  return { halo: DEPTH[p.op] * reach, unitBytes: axis === 0 ? h * rowBytes : rowBytes, what: 'morph' };
}

function element(se: string | StructuringElement, rank: number): StructuringElement {
  const e = typeof se === 'string' ? parseElement(se) : se;
  if (rank === 2 && e.size[0] > 1) throw new InvalidArgumentError(`structuring element ${e.spec} is 3D (depth ${e.size[0]}) but the image is 2D`);
  return e;
}

/**
 * Once per call, before any work: the element parsed and checked against the image, the direct kernel's size
 * limit, and (on a GPU) whether the image fits the device, whole or in slabs (else a GpuLimitError).
 */
function prepare(p: ResolvedOf<typeof morphParams>, img: Image | GpuImage, gpu?: GpuContext): MorphRun {
  const run = { ...p, se: element(p.se, img.shape.length === 3 && img.shape[0] > 1 ? 3 : 2) };
  if (run.impl === 'naive' || run.se.kind === 'mask') checkMaskCells(run.se.size, run.se.spec, 'the direct kernel');
  if (gpu) slabsFor(gpu, img.shape, img.dtype, gpuSlabs(gpu, img.shape, img.dtype as MorphDtype, run));
  return run;
}

/**
 * Grayscale (and binary: 0/1 or 0/255 images are grayscale images) morphology of u8, u16 and f32 images and
 * volumes. Boxes, rectangles and lines run with van Herk/Gil-Werman, one 1-D pass per axis, at most three
 * comparisons per pixel whatever the element size; other elements with a direct kernel.
 * border 'opencv' (default) is bit-identical to cv2.erode/dilate/morphologyEx with their default border and
 * anchor; 'scipy' to scipy.ndimage.grey_erosion/grey_dilation/grey_opening/grey_closing (mode 'reflect').
 * Elements larger than the image are allowed: the border rule decides what lies outside.
 */
export const morph = defineOp({
  name: 'morph',
  summary: 'morphology: erode|dilate|open|close|gradient|tophat|blackhat, van Herk/Gil-Werman for boxes (= cv2, or scipy with --border scipy)',
  params: morphParams,
  positional: ['op'],
  // Colour: each channel alone, as cv2.erode/dilate/morphologyEx of a 3-channel image (gray with `gray`).
  input: { dtypes: ['uint8', 'uint16', 'float32'], colour: 'planes', volumes: true },
  // As deep along z as the composed operation reads (its device slabs' halo); each pass applies its border at the
  // volume's true ends, which a clipped slab shares.
  reach: (p, img) => {
    const se = element(p.se, img.shape.length === 3 && img.shape[0] > 1 ? 3 : 2);
    const r = DEPTH[p.op] * Math.max(...(['erode', 'dilate'] as const).map((op) => primitiveReach(se, op, p.border, p.iterations, 0)));
    return { before: r, after: r };
  },
  prepare,
  cpu: async (img, p, { pool, out }) => {
    const tk = now();
    const output = intoOut(await compose<Image>(p.op, img, {
      primitive: (x, op) => primitiveCpu(x, op, p.impl === 'naive' ? { ...p.se, kind: 'mask' } : p.se, p.border, p.iterations, pool),
      subtract: (a, b) => subtractCpu(a, b, pool),
    }), out);
    return { output, kernels: [{ name: `morph.${p.op}`, ms: now() - tk }] };
  },
  gpu: (input, rec, p) => recordInSlabs(rec, input, gpuSlabs(input.ctx, input.shape, input.dtype as MorphDtype, p), async (slab) => {
    const m = new MorphGpu(slab.ctx, slab.dtype as MorphDtype);
    const start = await m.toAligned(rec, slab);
    const out = await compose<Aligned>(p.op, start, {
      primitive: (x, op) => m.primitive(rec, x, op, p.se, p.border, p.iterations, p.impl),
      subtract: (a, b) => m.subtract(rec, a, b),
    });
    return m.fromAligned(rec, out, [...slab.shape] as GpuImage['shape'], false);
  }),
});

/** Erosion: morph with op 'erode'. */
export const erode = (src: Image, opts: Omit<MorphOptions, 'op'> = {}) => morph(src, { ...opts, op: 'erode' });
/** Dilation: morph with op 'dilate'. */
export const dilate = (src: Image, opts: Omit<MorphOptions, 'op'> = {}) => morph(src, { ...opts, op: 'dilate' });

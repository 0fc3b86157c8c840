import { UnsupportedDtypeError } from '../errors.js';
import { bytesPerElement, pixelCount, type Image, type Shape } from '../image.js';
import type { GpuContext } from './context.js';
import { grid1d } from './dispatch.js';
import { GpuImage } from './gpu-image.js';
import { bindingRanges, rangeBinding } from './limits.js';
import type { Binding } from './bindings.js';
import type { Bindings, Recording } from './recording.js';
import { runGpu } from './run.js';
import { acquireStorage } from './transfer.js';
import { ColourParams, colourWgsl } from './wgsl/colour.js';

/**
 * OpenCV's colour conversions of a resident image, recorded on the GPU (kernels: wgsl/colour.ts): what the op
 * skeleton (core/op.ts) runs where an operation takes a colour GpuImage by its colour rule — gray (cv2.COLOR_RGB2GRAY)
 * or luma (the Y of cv2.COLOR_RGB2YCrCb, processed, and back with the original's chroma). The image never leaves the
 * device: a batch's photo decoded on the GPU stays there, decode → conversion → operation → conversion → encode.
 * 8- and 16-bit RGB or RGBA; images beyond one storage binding run in ranges of pixels.
 */

const WG = 256;
type Entry = 'to_gray' | 'to_luma' | 'from_luma' | 'to_channel' | 'set_channel' | 'replicate';

class ColourGpuPlan {
  private constructor(private readonly ctx: GpuContext, private readonly dtype: 'uint8' | 'uint16', private readonly pipelines: Record<Entry, GPUComputePipeline>) {}

  static prepare(ctx: GpuContext, dtype: 'uint8' | 'uint16'): Promise<ColourGpuPlan> {
    return ctx.plan(`colour:${dtype}`, async () => {
      const code = colourWgsl(dtype);
      const entries: Entry[] = ['to_gray', 'to_luma', 'from_luma', 'to_channel', 'set_channel', 'replicate'];
      const made = await Promise.all(entries.map((e) => ctx.pipeline(`colour-${dtype}`, code, e, { WG })));
      return new ColourGpuPlan(ctx, dtype, Object.fromEntries(entries.map((e, i) => [e, made[i]])) as Record<Entry, GPUComputePipeline>);
    });
  }

  /**
   * Records `entry` over the `n` pixels of `c` channels, range by range beyond one binding (ranges start at multiples
   * of 256 pixels: whole words of every array, aligned offsets). `plane` is the 1-channel array (written by to_gray,
   * to_luma and to_channel, read by from_luma and set_channel), `colour` the c-channel one (read; from_luma and
   * set_channel write into `out`). `k`, `first`: the channel of to_channel/set_channel, and set_channel's first pass.
   * replicate reads the plane alone (`colour` unused) and writes `out`.
   */
  encode(rec: Recording, entry: Entry, n: number, c: number, colour: GPUBuffer, plane: GPUBuffer, out: GPUBuffer, k = 0, first = true): void {
    const bpp = bytesPerElement(this.dtype), per = 4 / bpp;
    const ranges = bindingRanges(this.ctx, n, c * bpp);
    rec.split(ranges.length);
    const whole = ranges.length === 1;
    const writesColour = entry === 'from_luma' || entry === 'set_channel' || entry === 'replicate';
    for (const r of ranges) {
      const planeRange = rangeBinding(plane, r, bpp, whole);
      // from_luma: one invocation per PER pixels writing c words; the others: one per word written.
      const words = Math.ceil((r.count * (writesColour ? c : 1) * bpp) / 4);
      const invocations = entry === 'from_luma' ? Math.ceil(r.count / per) : words;
      const [x, y] = grid1d(this.ctx, Math.max(1, Math.ceil(invocations / WG)));
      const P = rec.uniform(ColourParams, { n: r.count, c, words, k, first: first ? 1 : 0 });
      const dst = rangeBinding(out, r, c * bpp, whole);
      const buffers: Bindings = entry === 'replicate' ? { luma: planeRange, dst, P } : bindings(rangeBinding(colour, r, c * bpp, whole), planeRange, writesColour ? dst : undefined, P);
      rec.dispatch(`colour.${entry}`, this.pipelines[entry], buffers, x, y);
    }
  }
}

/** The bindings of the entries that read the colour image: `dst` where they write colour, else the plane written. */
function bindings(src: Binding, plane: Binding, dst: Binding | undefined, P: Binding): Bindings {
  return dst ? { src, luma: plane, dst, P } : { src, dst: plane, P };
}

function checkColour(img: GpuImage, what: string): 'uint8' | 'uint16' {
  if (img.channels === 1 || img.dtype === 'float32') {
    throw new UnsupportedDtypeError(`${what} on the GPU takes an 8- or 16-bit RGB or RGBA image, got ${img.channels} channel(s) ${img.dtype}`);
  }
  return img.dtype;
}

/** A new resident gray image (pooled): `img`'s pixels as cv2.cvtColor(COLOR_RGB2GRAY) gives them. */
export async function grayGpu(img: GpuImage, rec: Recording): Promise<GpuImage> {
  return plane(img, rec, 'to_gray');
}

/** A new resident plane (pooled): the Y of cv2.cvtColor(COLOR_RGB2YCrCb) of `img`. */
export async function lumaGpu(img: GpuImage, rec: Recording): Promise<GpuImage> {
  return plane(img, rec, 'to_luma');
}

async function plane(img: GpuImage, rec: Recording, entry: 'to_gray' | 'to_luma'): Promise<GpuImage> {
  const dtype = checkColour(img, entry === 'to_gray' ? 'RGB → gray' : 'RGB → YCrCb');
  const plan = await ColourGpuPlan.prepare(img.ctx, dtype);
  const n = pixelCount(img.shape);
  const out = acquireStorage(img.ctx, n * bytesPerElement(dtype), entry === 'to_gray' ? 'gray' : 'luma');
  plan.encode(rec, entry, n, img.channels, img.buffer, out, out);
  return new GpuImage(img.ctx, out, [...img.shape] as Shape, 1, dtype);
}

/**
 * A new resident colour image (pooled) shaped like `colour`: the processed Y plane `y` with `colour`'s chroma put
 * back, as cv2.cvtColor(COLOR_YCrCb2RGB) of (y, Cr, Cb of `colour`); alpha copied. `y` has `colour`'s shape and dtype.
 */
export async function fromLumaGpu(colour: GpuImage, y: GpuImage, rec: Recording): Promise<GpuImage> {
  const dtype = checkColour(colour, 'YCrCb → RGB');
  if (y.channels !== 1 || y.dtype !== dtype || y.shape.join() !== colour.shape.join()) {
    throw new UnsupportedDtypeError(`YCrCb → RGB: the Y plane is ${y.shape.join('×')}×${y.channels} ${y.dtype}, the colour image ${colour.shape.join('×')} ${dtype}`);
  }
  const plan = await ColourGpuPlan.prepare(colour.ctx, dtype);
  const out = acquireStorage(colour.ctx, colour.byteLength, 'colour');
  plan.encode(rec, 'from_luma', pixelCount(colour.shape), colour.channels, colour.buffer, y.buffer, out);
  const g = new GpuImage(colour.ctx, out, [...colour.shape] as Shape, colour.channels, dtype);
  if (colour.geometry) g.geometry = colour.geometry;
  return g;
}

/** A new resident plane (pooled): channel `k` of `img` (the 'planes' colour rule: an operation on each channel alone). */
export async function channelGpu(img: GpuImage, k: number, rec: Recording): Promise<GpuImage> {
  const dtype = checkColour(img, 'a channel');
  const plan = await ColourGpuPlan.prepare(img.ctx, dtype);
  const n = pixelCount(img.shape);
  const out = acquireStorage(img.ctx, n * bytesPerElement(dtype), 'channel');
  plan.encode(rec, 'to_channel', n, img.channels, img.buffer, out, out, k);
  return new GpuImage(img.ctx, out, [...img.shape] as Shape, 1, dtype);
}

/**
 * A new resident image (pooled) shaped like `colour` whose channel k is `planes[k]` (channelGpu's inverse, after
 * each plane was processed): one plane per channel, each of `colour`'s shape and dtype.
 */
export async function mergeChannelsGpu(colour: GpuImage, planes: GpuImage[], rec: Recording): Promise<GpuImage> {
  const dtype = checkColour(colour, 'channels merged');
  if (planes.length !== colour.channels || planes.some((y) => y.channels !== 1 || y.dtype !== dtype || y.shape.join() !== colour.shape.join())) {
    throw new UnsupportedDtypeError(`channels merged: ${planes.length} plane(s) for ${colour.channels} channel(s) of ${colour.shape.join('×')} ${dtype}`);
  }
  const plan = await ColourGpuPlan.prepare(colour.ctx, dtype);
  const out = acquireStorage(colour.ctx, colour.byteLength, 'colour');
  planes.forEach((y, k) => plan.encode(rec, 'set_channel', pixelCount(colour.shape), colour.channels, colour.buffer, y.buffer, out, k, k === 0));
  const g = new GpuImage(colour.ctx, out, [...colour.shape] as Shape, colour.channels, dtype);
  if (colour.geometry) g.geometry = colour.geometry;
  return g;
}

/**
 * A new resident image (pooled) of `channels` equal channels, each the 8- or 16-bit plane `img`: a gray photo as
 * cv2.imread(IMREAD_COLOR) returns it (BGR/RGB alike: every channel the same), for the operations that take colour.
 */
export async function replicateGpu(img: GpuImage, channels: 3 | 4, rec: Recording): Promise<GpuImage> {
  if (img.channels !== 1 || img.dtype === 'float32') throw new UnsupportedDtypeError(`gray as colour on the GPU takes an 8- or 16-bit plane, got ${img.channels} channel(s) ${img.dtype}`);
  const plan = await ColourGpuPlan.prepare(img.ctx, img.dtype);
  const n = pixelCount(img.shape);
  const out = acquireStorage(img.ctx, n * channels * bytesPerElement(img.dtype), 'colour');
  plan.encode(rec, 'replicate', n, channels, img.buffer, img.buffer, out);
  const g = new GpuImage(img.ctx, out, [...img.shape] as Shape, channels, img.dtype);
  if (img.geometry) g.geometry = img.geometry;
  return g;
}

/** replicateGpu submitted on its own (runGpu, not waited for), `img` released: a gray photo decoded on the GPU made colour. */
export async function replicatedGpu(img: GpuImage, channels: 3 | 4): Promise<GpuImage> {
  const r = await runGpu<Image, GpuImage>(img.ctx, img, 'gray as colour', { wait: false }, (x, rec) => replicateGpu(x, channels, rec));
  img.release();
  return r.output as GpuImage;
}

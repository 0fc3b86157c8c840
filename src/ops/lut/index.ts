import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuImage } from '../../core/gpu/gpu-image.js';
import type { Image } from '../../core/image.js';
import { defineOp, type RunOptions } from '../../core/op.js';
import type { ParamSpec } from '../../core/params.js';
import type { OpResult } from '../../core/timings.js';
import { applyLutCpu } from './cpu.js';
import { ApplyLutGpuPlan } from './gpu.js';

export const applyLutParams = [
  { name: 'lut', kind: 'table', doc: 'the table: 2^bits entries (256 for 8-bit images, 65536 for 16-bit), each within the dtype\'s range' },
] as const satisfies readonly ParamSpec[];

/** Where applyLut runs (the table is its argument). */
export type ApplyLutOptions = RunOptions;

/**
 * out[i] = lut[in[i]], declared like every operation (validation, both paths, timings, GpuImage in → GpuImage out).
 * Not a family of ops/index.ts: a table has no command-line form, so it is no CLI command or pipeline stage; equalize
 * and the global thresholds apply their tables through its plans.
 */
const applyLutOp = defineOp({
  name: 'applyLut',
  summary: 'a look-up table applied to every pixel of a gray 8/16-bit image',
  params: applyLutParams,
  input: { dtypes: ['uint8', 'uint16'], colour: 'channels', volumes: true }, // value by value: any shape
  light: true,
  check: (p, img) => {
    if (img.channels !== 1) throw new InvalidArgumentError('applyLut needs one gray channel');
    const bins = img.dtype === 'uint8' ? 256 : 65536;
    if (!p.lut) throw new InvalidArgumentError('applyLut: lut must be a Uint32Array');
    if (p.lut.length !== bins) throw new InvalidArgumentError(`applyLut: a ${img.dtype} image needs a LUT of ${bins} entries, got ${p.lut.length}`);
  },
  cpu: (img, p, { pool, out }) => applyLutCpu(img, p.lut!, pool, out),
  gpu: async (input, rec, p, _extra, opts) => {
    const plan = await ApplyLutGpuPlan.prepare(input.ctx, input.dtype as 'uint8' | 'uint16', undefined, opts.inPlace);
    return plan.image(rec, input, rec.storageFrom(p.lut!, 'lut'), 'lut output');
  },
});

/** out[i] = lut[in[i]] for a gray 8/16-bit image; `lut` has 2^bits entries, each within the dtype's range. */
export function applyLut(src: Image, lut: Uint32Array, opts?: ApplyLutOptions): Promise<OpResult<Image>>;
export function applyLut(src: GpuImage, lut: Uint32Array, opts?: ApplyLutOptions): Promise<OpResult<GpuImage>>;
export function applyLut(src: Image | GpuImage, lut: Uint32Array, opts?: ApplyLutOptions): Promise<OpResult<Image | GpuImage>>;
export function applyLut(src: Image | GpuImage, lut: Uint32Array, opts: ApplyLutOptions = {}): Promise<OpResult<Image | GpuImage>> {
  return applyLutOp(src, { ...opts, lut });
}
applyLut.op = applyLutOp.op;

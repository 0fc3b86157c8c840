import { inlinePool, type CpuPool } from '../../core/cpu/pool.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GpuContext } from '../../core/gpu/context.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { runGpu, type GpuRunOptions } from '../../core/gpu/run.js';
import { requireDtype, validateImage, type Image } from '../../core/image.js';
import { makeTimings, now, type OpResult } from '../../core/timings.js';
import { applyLutCpu } from './cpu.js';
import { ApplyLutGpuPlan } from './gpu.js';

export interface ApplyLutOptions extends GpuRunOptions {
  gpu?: GpuContext;
  pool?: CpuPool;
}

/** out[i] = lut[in[i]] for a gray 8/16-bit image; `lut` has 2^bits entries, each within the dtype's range. */
export async function applyLut(src: Image | GpuImage, lut: Uint32Array, opts: ApplyLutOptions = {}): Promise<OpResult<Image | GpuImage>> {
  const t0 = now();
  if (!(src instanceof GpuImage)) validateImage(src);
  requireDtype(src, ['uint8', 'uint16'], 'applyLut');
  const bins = src.dtype === 'uint8' ? 256 : 65536;
  if (src.channels !== 1) throw new InvalidArgumentError('applyLut needs one gray channel');
  if (lut.length !== bins) throw new InvalidArgumentError(`applyLut: a ${src.dtype} image needs a LUT of ${bins} entries, got ${lut.length}`);
  const gpu = src instanceof GpuImage ? src.ctx : opts.gpu;
  if (gpu) {
    return runGpu(gpu, src, 'applyLut', opts, async (input, rec) => {
      const plan = await ApplyLutGpuPlan.prepare(gpu, input.dtype as 'uint8' | 'uint16');
      return plan.image(rec, input, rec.storageFrom(lut, 'lut'), 'lut output');
    }) as Promise<OpResult<Image | GpuImage>>;
  }
  const tk = now();
  const output = await applyLutCpu(src as Image, lut, opts.pool ?? inlinePool);
  return { output, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: [{ name: 'applyLut', ms: now() - tk }], kernelSource: 'cpu', total: now() - t0 }) };
}

import { cpuTuning, forBlocks, shareable, writableByWorkers, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, type Image } from '../../core/image.js';
import { applyLutTask } from './cpu-kernels.js';

/** `out` (or a new image) with every pixel mapped through `lut` (8/16-bit, same dtype), split over the pool's workers. */
export async function applyLutCpu(img: Image, lut: Uint32Array, pool: CpuPool, out?: Image): Promise<Image> {
  const native = pool.native;
  if (native && img.dtype === 'uint8') {
    // Native threads write any memory: no shared copy of the input, the output written in place.
    const dst = (out?.data ?? allocPixels('uint8', img.data.length)) as Uint8Array;
    native.applyLut8(img.data as Uint8Array, dst, Uint8Array.from(lut), pool.size);
    return out ?? { data: dst, shape: [...img.shape] as Image['shape'], channels: img.channels, dtype: img.dtype };
  }
  const src = shareable(pool, img.data as Uint8Array | Uint16Array);
  // Workers can only write into shared memory: a caller's non-shared `out` gets the result copied in.
  const direct = out && writableByWorkers(pool, out.data);
  const dst = (direct ? out.data : allocPixels(img.dtype, src.length)) as Uint8Array | Uint16Array;
  const table = img.dtype === 'uint8' ? Uint8Array.from(lut) : Uint16Array.from(lut);
  await forBlocks(pool, src.length, cpuTuning.pixelBlock, applyLutTask, { src, dst, lut: table });
  if (out) {
    if (!direct) out.data.set(dst);
    return out;
  }
  return { data: dst, shape: [...img.shape] as Image['shape'], channels: img.channels, dtype: img.dtype };
}

import { applyLutCpu } from '../lut/cpu.js';
import { allocPixels, type Image } from '../../core/image.js';
import type { CpuPool } from '../../core/cpu/pool.js';
import { gammaF32, gammaLut16, gammaLut8 } from './lut.js';

/** Gamma correction on the CPU: 8/16-bit through the LUT (on the pool), float32 value by value. */
export async function gammaCpu(img: Image, gamma: number, gain: number, pool: CpuPool, out?: Image): Promise<Image> {
  if (img.dtype !== 'float32') return applyLutCpu(img, img.dtype === 'uint8' ? gammaLut8(gamma, gain) : gammaLut16(gamma, gain), pool, out);
  const src = img.data as Float32Array;
  const dst = (out?.data ?? allocPixels('float32', src.length)) as Float32Array;
  const g = Math.fround(gamma), k = Math.fround(gain);
  for (let i = 0; i < src.length; i++) dst[i] = gammaF32(src[i], g, k);
  return out ?? { ...img, data: dst, shape: [...img.shape] as Image['shape'] };
}

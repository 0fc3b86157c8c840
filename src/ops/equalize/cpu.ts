import type { CpuPool } from '../../core/cpu/pool.js';
import type { Image } from '../../core/image.js';
import { pixelCount } from '../../core/image.js';
import { histogramCpu } from '../histogram/cpu.js';
import { applyLutCpu } from '../lut/cpu.js';
import { equalizeLut } from './lut.js';

/** Histogram equalization on the CPU: parallel histogram, OpenCV's LUT, parallel LUT application. */
export async function equalizeCpu(img: Image, pool: CpuPool, out?: Image): Promise<Image> {
  const hist = await histogramCpu(img, pool);
  return applyLutCpu(img, equalizeLut(hist, pixelCount(img.shape)), pool, out);
}

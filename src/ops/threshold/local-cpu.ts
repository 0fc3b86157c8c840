import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, type Image } from '../../core/image.js';
import { isodataRowsTask } from './adaptive-kernels.js';
import { boxThresholdTask, gaussianKernel, gaussThresholdTask } from './local-kernels.js';

/**
 * Rows per worker band below which splitting costs more than it gains: a quarter megapixel, so that a 4K image
 * (8.3 MP) is split 16 ways. At a megapixel per band it was split only 7 ways (floor(2160 / 273)) and 9 of the 16
 * threads idled; each band pays the window's rows once more to fill its ring (5 of 135 rows at 4K, window 11).
 */
const bandRows = (w: number) => Math.max(1, Math.ceil((1 << 18) / w));

export type LocalMethod = 'mean' | 'gaussian';

/**
 * cv2.adaptiveThreshold(src, maxv, ADAPTIVE_THRESH_{MEAN,GAUSSIAN}_C, THRESH_BINARY, window, offset) on the
 * CPU: one fused pass per row band on the worker pool (local-kernels.ts).
 */
export async function localThresholdCpu(img: Image, method: LocalMethod, window: number, offset: number, pool: CpuPool): Promise<Image> {
  const [h, w] = img.shape as [number, number];
  const src = shareable(pool, img.data as Uint8Array);
  const dst = allocPixels('uint8', src.length) as Uint8Array;
  const idelta = Math.ceil(offset);
  const r = (window - 1) / 2;
  const band = bandRows(w);
  if (method === 'mean') await forChunks(pool, h, band, boxThresholdTask, { src, w, h, r, idelta, maxv: 255, dst });
  else await forChunks(pool, h, band, gaussThresholdTask, { src, w, h, kernel: gaussianKernel(window), idelta, maxv: 255, dst });
  return { data: dst, shape: [h, w], channels: 1, dtype: 'uint8' };
}

/** Adaptive isodata segmentation on the CPU, row bands on the worker pool (see adaptive-kernels.ts). */
export async function adaptiveCpu(img: Image, window: number, contrast: number, fallback: number, pool: CpuPool): Promise<Image> {
  const [h, w] = img.shape as [number, number];
  const src = shareable(pool, img.data as Uint8Array);
  const dst = allocPixels('uint8', src.length) as Uint8Array;
  const band = Math.max(1, Math.ceil((1 << 16) / w));
  await forChunks(pool, h, band, isodataRowsTask, { src, w, h, r: (window - 1) / 2, contrast, fallback, out: dst });
  return { data: dst, shape: [h, w], channels: 1, dtype: 'uint8' };
}

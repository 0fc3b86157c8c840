import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, type Image } from '../../core/image.js';
import { gaussianKernel } from './local-kernels.js';

/** Rows per worker band below which splitting costs more than it gains (about a megapixel per band). */
const bandRows = (w: number) => Math.max(1, Math.ceil((1 << 20) / w));

export type LocalMethod = 'mean' | 'gaussian';

/**
 * cv2.adaptiveThreshold(src, maxv, ADAPTIVE_THRESH_{MEAN,GAUSSIAN}_C, THRESH_BINARY, window, offset) on the
 * CPU: two separable passes over row bands on the worker pool.
 */
export async function localThresholdCpu(img: Image, method: LocalMethod, window: number, offset: number, pool: CpuPool): Promise<Image> {
  const [h, w] = img.shape as [number, number];
  const src = shareable(pool, img.data as Uint8Array);
  const dst = allocPixels('uint8', src.length) as Uint8Array;
  const idelta = Math.ceil(offset);
  const r = (window - 1) / 2;
  const band = bandRows(w);
  if (method === 'mean') {
    const rowSums = shareable(pool, new Uint32Array(src.length));
    await forChunks(pool, h, band, 'boxRowSums', (y0, y1) => [src, w, r, rowSums, y0, y1]);
    await forChunks(pool, h, band, 'boxColsBinarize', (y0, y1) => [rowSums, src, w, h, r, idelta, 255, dst, y0, y1]);
  } else {
    const kernel = gaussianKernel(window);
    const rows = shareable(pool, new Float32Array(src.length));
    await forChunks(pool, h, band, 'gaussRows', (y0, y1) => [src, w, kernel, rows, y0, y1]);
    await forChunks(pool, h, band, 'gaussColsBinarize', (y0, y1) => [rows, src, w, h, kernel, idelta, 255, dst, y0, y1]);
  }
  return { data: dst, shape: [h, w], channels: 1, dtype: 'uint8' };
}

/** Adaptive isodata segmentation on the CPU, row bands on the worker pool (see adaptive-kernels.ts). */
export async function adaptiveCpu(img: Image, window: number, contrast: number, fallback: number, pool: CpuPool): Promise<Image> {
  const [h, w] = img.shape as [number, number];
  const src = shareable(pool, img.data as Uint8Array);
  const dst = allocPixels('uint8', src.length) as Uint8Array;
  const band = Math.max(1, Math.ceil((1 << 16) / w));
  await forChunks(pool, h, band, 'adaptiveIsodataRows', (y0, y1) => [src, w, h, (window - 1) / 2, contrast, fallback, dst, y0, y1]);
  return { data: dst, shape: [h, w], channels: 1, dtype: 'uint8' };
}

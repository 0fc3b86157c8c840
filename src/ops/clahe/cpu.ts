import { forChunks, shareable, writableByWorkers, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, intoOut, type Image } from '../../core/image.js';
import { axisTable, type ClaheBorder, type TiledGeometry, type WindowGeometry } from './plan.js';

type Pixels = Uint8Array | Uint16Array;

/** The destination pixels: the caller's `out` when workers can write into it, else fresh shared memory. */
function destination(img: Image, pool: CpuPool, out?: Image): Pixels {
  return (out && writableByWorkers(pool, out.data) ? out.data : allocPixels(img.dtype, img.data.length)) as Pixels;
}

function finish(img: Image, dst: Pixels, out?: Image): Image {
  return intoOut({ data: dst, shape: [...img.shape] as Image['shape'], channels: 1, dtype: img.dtype }, out);
}

/** Tiled CLAHE on the CPU: tile LUTs spread over the workers, then interpolation by row bands. */
export async function claheTiledCpu(img: Image, g: TiledGeometry, pool: CpuPool, out?: Image): Promise<Image> {
  const src = shareable(pool, img.data as Pixels);
  const tiles = g.tilesX * g.tilesY;
  const lut = allocPixels(img.dtype, tiles * g.bins) as Pixels;
  await forChunks(pool, tiles, 1, 'claheTileLuts', (t0, t1) => [src, g.width, g.height, g.tilesX, g.tileW, g.tileH, g.bins, g.clipLimit, g.lutScale, lut, t0, t1]);
  const xs = axisTable(g.width, g.tileW, g.tilesX), ys = axisTable(g.height, g.tileH, g.tilesY);
  const dst = destination(img, pool, out);
  const rowsPerChunk = Math.max(1, Math.ceil((1 << 18) / g.width));
  await forChunks(pool, g.height, rowsPerChunk, 'claheInterpolateRows', (y0, y1) => [src, dst, g.width, g.tilesX, g.bins, lut, xs.weights, xs.tiles, ys.weights, ys.tiles, y0, y1]);
  return finish(img, dst, out);
}

/** Sliding-window CLAHE on the CPU: row bands on the workers, each with its own moving histogram. */
export async function claheWindowCpu(img: Image, g: WindowGeometry, border: ClaheBorder, pool: CpuPool, out?: Image): Promise<Image> {
  const src = shareable(pool, img.data as Uint8Array);
  const [h, w] = img.shape as [number, number];
  const dst = destination(img, pool, out);
  // Each row costs O(w·r): a few rows already outweigh a thread hand-off.
  await forChunks(pool, h, Math.max(1, Math.ceil(4096 / w)), 'claheWindowRows', (y0, y1) => [src, dst, w, h, g.radius, border, g.clipLimit, g.area, g.lutScale, y0, y1]);
  return finish(img, dst, out);
}

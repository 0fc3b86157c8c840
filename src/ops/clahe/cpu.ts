import { forChunks, shareable, writableByWorkers, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, intoOut, type Image } from '../../core/image.js';
import { interpolateTask, tileLutsTask, windowRowsTask } from './cpu-kernels.js';
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
  await forChunks(pool, tiles, 1, tileLutsTask, {
    src, width: g.width, height: g.height, tilesX: g.tilesX, tileW: g.tileW, tileH: g.tileH, bins: g.bins, clipLimit: g.clipLimit, scale: g.lutScale, lut,
  });
  const xs = axisTable(g.width, g.tileW, g.tilesX), ys = axisTable(g.height, g.tileH, g.tilesY);
  const dst = destination(img, pool, out);
  if (pool.native) {
    // Native threads: 35 ms of CPU for 12 MP where the JavaScript loop takes 207, the same bytes (float32 steps, no FMA).
    pool.native.claheInterpolate(src, dst, g.width, g.tilesX, g.bins, lut, xs.weights, xs.tiles, ys.weights, ys.tiles, pool.size);
    return finish(img, dst, out);
  }
  const rowsPerChunk = Math.max(1, Math.ceil((1 << 18) / g.width));
  await forChunks(pool, g.height, rowsPerChunk, interpolateTask, {
    src, dst, width: g.width, tilesX: g.tilesX, bins: g.bins, lut, xw: xs.weights, xt: xs.tiles, yw: ys.weights, yt: ys.tiles,
  });
  return finish(img, dst, out);
}

/** Sliding-window CLAHE on the CPU: row bands on the workers, each with its own moving histogram. */
export async function claheWindowCpu(img: Image, g: WindowGeometry, border: ClaheBorder, pool: CpuPool, out?: Image): Promise<Image> {
  const src = shareable(pool, img.data as Uint8Array);
  const [h, w] = img.shape as [number, number];
  const dst = destination(img, pool, out);
  // Each row costs O(w·r): a few rows already outweigh a thread hand-off.
  await forChunks(pool, h, Math.max(1, Math.ceil(4096 / w)), windowRowsTask, {
    src, dst: dst as Uint8Array, width: w, height: h, radius: g.radius, border, clipLimit: g.clipLimit, area: g.area, scale: g.lutScale,
  });
  return finish(img, dst, out);
}

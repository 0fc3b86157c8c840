import { borderParam } from '../../core/border.js';
import { CPU_PATH, GpuLimitError, InvalidArgumentError, optionRef, UnsupportedDtypeError } from '../../core/errors.js';
import { fmtBytes, type GpuContext } from '../../core/gpu/context.js';
import { maxBinding } from '../../core/gpu/limits.js';
import { plane2D, type Shape } from '../../core/image.js';
import { recordInSlabs, slabsFor, type SlabSpec } from '../../core/gpu/slabs.js';
import { defineOp, type OpOptions } from '../../core/op.js';
import type { ParamSpec, ResolvedOf, Size } from '../../core/params.js';
import { now } from '../../core/timings.js';
import { claheTiledCpu, claheWindowCpu } from './cpu.js';
import { CLAHE_SCHEMES, ClaheTiledGpuPlan, ClaheWindowGpuPlan, tileBands } from './gpu.js';
import { CLAHE_BORDERS, tiledGeometry, windowGeometry, type ClaheDtype } from './plan.js';

export { CLAHE_SCHEMES, type ClaheScheme } from './gpu.js';
export { CLAHE_BORDERS, type ClaheBorder } from './plan.js';

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const claheParams = [
  { name: 'tiles', kind: 'size', default: { width: 8, height: 8 }, doc: 'tiled CLAHE: tile grid columns x rows (OpenCV tileGridSize)' },
  { name: 'clip', kind: 'float', default: 2, doc: 'clip limit, relative to a uniform histogram (OpenCV clipLimit); must be > 0' },
  { name: 'window', kind: 'int', min: 1, doc: 'sliding-window CLAHE instead of tiles: radius R of the (2R+1)² window centred on every pixel' },
  borderParam(CLAHE_BORDERS, 'reflect101', 'sliding window: mirror without (reflect101, dcb|abcd) or with (reflect, dcba|abcd) the edge pixel'),
  { name: 'impl', aliases: ['scheme'], kind: 'enum', choices: CLAHE_SCHEMES, default: 'columns', doc: 'sliding window, GPU: column histograms (cost independent of R) or naive recount' },
] as const satisfies readonly ParamSpec[];

/** `tiles`, `clip`, `window`, `border`, `impl` (or its old name `scheme`), and where to run. */
export type ClaheOptions = OpOptions<typeof claheParams>;
type Params = ResolvedOf<typeof claheParams>;

/** Checks the parameters against the image (and the device) before any work starts. */
function check(p: Params, img: { shape: Shape; dtype: string }, gpu?: GpuContext): void {
  const [h, w] = plane2D(img.shape, 'clahe');
  if (!(p.clip > 0)) throw new InvalidArgumentError(`clahe: clip must be > 0, got ${p.clip}`);
  if (p.window !== undefined) {
    if (img.dtype !== 'uint8') throw new UnsupportedDtypeError(`sliding-window clahe supports 8-bit images (a 16-bit window histogram has 65536 bins); use tiled clahe (${optionRef('tiles')}, no ${optionRef('window')}) for ${img.dtype}`);
    if (p.window >= Math.min(h, w)) throw new InvalidArgumentError(`clahe: window radius ${p.window} must be smaller than the image (${w}×${h}): at most ${Math.min(h, w) - 1}`);
  } else {
    checkTileGrid(p.tiles, img.dtype as ClaheDtype);
  }
  if (gpu) checkDevice(gpu, p, h, w, img.dtype as ClaheDtype);
}

/**
 * The largest tile grids: their LUTs (8-bit: the interleaved interpolation cells, 1 KiB per cell) must fit
 * 128 MiB, the smallest storage binding WebGPU guarantees, so that every adapter binds them whole — 16-bit at
 * most 1024 tiles (32×32), 8-bit at most 131072 cells, (tilesX + 1)·(tilesY + 1) (e.g. 361×361). The CPU path
 * keeps the same limits (one meaning for the parameters).
 */
const MAX_LUT_BYTES = 128 << 20;

function checkTileGrid(tiles: Size, dtype: ClaheDtype): void {
  const bytes = dtype === 'uint8' ? (tiles.width + 1) * (tiles.height + 1) * 1024 : tiles.width * tiles.height * 65536 * 2;
  if (bytes > MAX_LUT_BYTES) {
    const most = dtype === 'uint8' ? 'at most 131072 interpolation cells, (tilesX + 1)·(tilesY + 1), e.g. 361x361' : 'at most 1024 tiles, e.g. 32x32';
    throw new InvalidArgumentError(`clahe: a ${tiles.width}x${tiles.height} tile grid of ${dtype} LUTs needs ${bytes} bytes; ${most}`);
  }
}

/** Sliding-window CLAHE beyond one storage binding runs in row slabs with the radius as halo (core/gpu/slabs.ts). */
function windowSlabs(radius: number, width: number): SlabSpec {
  return { halo: radius, unitBytes: Math.max(width, 16), what: `clahe ${optionRef('window')}` };
}

/** Before any upload: whether the work fits the device, whole or split (else a GpuLimitError). */
function checkDevice(ctx: GpuContext, p: Params, h: number, w: number, dtype: ClaheDtype): void {
  if (p.window !== undefined) {
    slabsFor(ctx, [h, w], 'uint8', windowSlabs(p.window, w));
  } else if (!tileBands(ctx, tiledGeometry(h, w, p.tiles.width, p.tiles.height, p.clip, dtype), dtype)) {
    throw new GpuLimitError(`clahe: one tile of this ${w}×${h} image with a ${p.tiles.width}x${p.tiles.height} grid does not fit this adapter's ${fmtBytes(maxBinding(ctx))} storage binding; use ${CPU_PATH}`);
  }
}

/**
 * Contrast-limited adaptive histogram equalization of an 8/16-bit image.
 * - Tiled (default): bit-identical to `cv2.createCLAHE(clip, tiles).apply()` — OpenCV's REFLECT_101 padding
 *   to a multiple of the grid, clip limit max((int)(clip·area/bins), 1), excess redistribution with its
 *   residual rule, per-tile LUTs and float32 bilinear interpolation; 16-bit with 65536 bins, as OpenCV.
 * - Sliding window (`window: R`, 8-bit): every pixel gets the LUT value at its own value of OpenCV's tile rule
 *   applied to the (2R+1)² window centred on it, mirrored at the borders (`border`). CPU == GPU bit for bit.
 * Colour host images are processed on the Y of OpenCV's YCrCb (cv2.COLOR_RGB2YCrCb) and converted back with
 * their chroma (alpha kept); 16-bit stays 16-bit. A GpuImage input stays on its device (gray only).
 */
export const clahe = defineOp({
  name: 'clahe',
  summary: 'contrast-limited adaptive equalization: tiled (bit-identical to cv2.createCLAHE) or --window R per pixel; colour on YCrCb Y',
  params: claheParams,
  input: { dtypes: ['uint8', 'uint16'], colour: 'luma' },
  check,
  cpu: async (img, p, { pool, out }) => {
    const [h, w] = plane2D(img.shape, 'clahe');
    const tk = now();
    const output = p.window !== undefined
      ? await claheWindowCpu(img, windowGeometry(p.window, p.clip), p.border, pool, out)
      : await claheTiledCpu(img, tiledGeometry(h, w, p.tiles.width, p.tiles.height, p.clip, img.dtype as ClaheDtype), pool, out);
    return { output, kernels: [{ name: p.window !== undefined ? 'clahe.window' : 'clahe.tiled', ms: now() - tk }] };
  },
  gpu: async (input, rec, p) => {
    const [h, w] = plane2D(input.shape, 'clahe');
    if (p.window !== undefined) {
      const plan = await ClaheWindowGpuPlan.prepare(input.ctx, windowGeometry(p.window, p.clip), p.border, p.impl);
      return recordInSlabs(rec, input, windowSlabs(p.window, w), async (slab) => plan.encode(rec, slab));
    }
    const dtype = input.dtype as ClaheDtype;
    return (await ClaheTiledGpuPlan.prepare(input.ctx, dtype)).encode(rec, input, tiledGeometry(h, w, p.tiles.width, p.tiles.height, p.clip, dtype));
  },
});

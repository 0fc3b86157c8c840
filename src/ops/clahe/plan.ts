/**
 * The derived scalars and tables of CLAHE, computed once on the host and shared by the CPU and GPU paths
 * (the lesson of OpenCV's clahe.cpp: one place decides clip limit, LUT scale, padding and interpolation
 * weights, so the two paths cannot drift). All float values are float32, as OpenCV computes them.
 */

import { reflect101Index, reflectIndex } from '../../core/border.js';

export type ClaheDtype = 'uint8' | 'uint16';
export const CLAHE_BORDERS = ['reflect101', 'reflect'] as const;
/** reflect101: mirror without repeating the edge (dcb|abcd, OpenCV BORDER_REFLECT_101, scipy 'mirror');
 *  reflect: mirror repeating the edge (dcba|abcd, OpenCV BORDER_REFLECT, scipy 'reflect'). */
export type ClaheBorder = (typeof CLAHE_BORDERS)[number];

const f32 = Math.fround;

/** OpenCV's absolute clip limit: max((int)(clip · area / bins), 1); 0 (no clipping) when clip ≤ 0. */
export function clipLimitAbs(clip: number, area: number, bins: number): number {
  if (!(clip > 0)) return 0;
  return Math.max(Math.trunc((clip * area) / bins), 1);
}

/** OpenCV's LUT scale (bins − 1) / area, as the float32 division C++ performs. */
export function lutScale(bins: number, area: number): number {
  return f32(f32(bins - 1) / f32(area));
}

/** Mirror index for the sliding window (r < min(h, w), so at most one reflection is ever needed). */
export function mirror(p: number, n: number, border: ClaheBorder): number {
  return border === 'reflect' ? reflectIndex(p, n) : reflect101Index(p, n);
}

/** Tiled CLAHE geometry: OpenCV pads bottom/right with REFLECT_101 unless both sides divide evenly. */
export interface TiledGeometry {
  width: number;
  height: number;
  tilesX: number;
  tilesY: number;
  tileW: number;
  tileH: number;
  bins: number;
  clipLimit: number;
  lutScale: number;
}

export function tiledGeometry(height: number, width: number, tilesX: number, tilesY: number, clip: number, dtype: ClaheDtype): TiledGeometry {
  const bins = dtype === 'uint8' ? 256 : 65536;
  // OpenCV: copyMakeBorder(…, tilesY − H % tilesY, …, tilesX − W % tilesX) unless both divide — so one side
  // can get a whole extra tile of padding when only the other does not divide.
  const even = width % tilesX === 0 && height % tilesY === 0;
  const padW = even ? width : width + tilesX - (width % tilesX);
  const padH = even ? height : height + tilesY - (height % tilesY);
  const tileW = padW / tilesX, tileH = padH / tilesY;
  const area = tileW * tileH;
  return { width, height, tilesX, tilesY, tileW, tileH, bins, clipLimit: clipLimitAbs(clip, area, bins), lutScale: lutScale(bins, area) };
}

/**
 * OpenCV's interpolation weights: per column txf = x·(1/tileW) − 0.5 in float32, tx1 = floor, xa = txf − tx1,
 * xa1 = 1 − xa, tile indices clamped; the same per row. Stored as one Float32Array per axis:
 * [xa, xa1] pairs in `weights`, [t1, t2] tile index pairs in `tiles`.
 */
export interface AxisTable {
  weights: Float32Array;
  tiles: Uint32Array;
}

export function axisTable(n: number, tileSize: number, tileCount: number): AxisTable {
  const inv = f32(1 / tileSize);
  const weights = new Float32Array(2 * n);
  const tiles = new Uint32Array(2 * n);
  for (let i = 0; i < n; i++) {
    const t = f32(f32(i * inv) - 0.5);
    const t1 = Math.floor(t);
    const a = f32(t - t1);
    weights[2 * i] = a;
    weights[2 * i + 1] = f32(1 - a);
    tiles[2 * i] = Math.max(t1, 0);
    tiles[2 * i + 1] = Math.min(t1 + 1, tileCount - 1);
  }
  return { weights, tiles };
}

/** Sliding-window CLAHE constants for radius r: window area (2r+1)², clip limit (area when not clipping), LUT scale. */
export interface WindowGeometry {
  radius: number;
  area: number;
  clipLimit: number;
  lutScale: number;
}

export function windowGeometry(radius: number, clip: number): WindowGeometry {
  const area = (2 * radius + 1) ** 2;
  const c = clipLimitAbs(clip, area, 256);
  // A limit of `area` clips nothing (no bin can exceed the window's pixel count): one code path for both.
  return { radius, area, clipLimit: c === 0 ? area : Math.min(c, area), lutScale: lutScale(256, area) };
}

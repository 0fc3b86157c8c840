import { borderIndex, type BorderMode } from '../../core/border.js';
import { CPU_PATH, InvalidArgumentError } from '../../core/errors.js';
import { planRowSlabs } from '../../core/gpu/slabs.js';
import type { ConvKernel } from './kernel.js';

/**
 * Where one output axis reads: output o reads input positions o + off + j for the kernel's taps j = 0…k−1; a
 * position outside [0, nIn) goes through the border rule. [lo, hi) is the part of the input that is real data
 * (a slab's input has gathered border planes around it: for mode 'constant' those count as outside).
 */
export interface AxisGeo {
  nIn: number;
  nOut: number;
  off: number;
  lo: number;
  hi: number;
}
/** [z, y, x] */
export type Geo3 = [AxisGeo, AxisGeo, AxisGeo];

/**
 * The geometry of a kernel over a whole [d, h, w] volume: same size out, or shrunk for 'valid'. A kernel larger
 * than the image reads the border rule at any distance (as scipy.ndimage and cv2.filter2D do); only 'valid' has
 * no output then, and refuses it.
 */
export function wholeGeometry(shape: [number, number, number], k: ConvKernel, mode: BorderMode): Geo3 {
  return [0, 1, 2].map((a) => {
    const n = shape[a], kk = k.size[a];
    if (kk > n && mode === 'valid') throw new InvalidArgumentError(`border 'valid': the kernel is larger than the image along ${'zyx'[a]} (${kk} taps, ${n} pixels), no output lies inside; use another border`);
    return mode === 'valid' ? { nIn: n, nOut: n - kk + 1, off: 0, lo: 0, hi: n } : { nIn: n, nOut: n, off: -k.anchor[a], lo: 0, hi: n };
  }) as Geo3;
}

/** For each output position and tap along one axis, the input index it reads (−1: the constant value). */
export function tapIndex(g: AxisGeo, k: number, mode: BorderMode): Int32Array {
  const t = new Int32Array(g.nOut * k);
  for (let o = 0; o < g.nOut; o++) {
    for (let j = 0; j < k; j++) {
      const p = o + g.off + j;
      t[o * k + j] = mode === 'constant' && (p < g.lo || p >= g.hi) ? -1 : borderIndex(p, g.nIn, mode);
    }
  }
  return t;
}

/** One slab of a volume split along `axis` (0 = z, 1 = y): output planes [s0, s1), input planes gathered for them. */
export interface Slab {
  s0: number;
  s1: number;
  /** global input plane of each gathered plane (−1: a plane of the constant value) */
  planes: Int32Array;
  /** per component: its geometry inside the slab */
  geos: Geo3[];
}

/**
 * Splits a filter over a volume into slabs along `axis` so that each slab's input (with its halo planes) and
 * output fit in `maxBytes` (dask's map_overlap): halo planes are gathered through the border rule, so the
 * kernels see only in-range planes and the border is applied at the volume's true edges only. The cut is the one
 * slab planner's (core/gpu/slabs.ts planRowSlabs, which device slabs use too), asked for slabs of at most
 * `own` output planes; what differs is only what each slab reads: gathered planes here ('wrap' and 'valid'
 * included), the clipped range of a resident image there.
 */
export function planSlabs(geos: Geo3[], ks: ConvKernel[], mode: BorderMode, axis: 0 | 1, planeBytesIn: number, planeBytesOut: number, maxBytes: number): Slab[] {
  const g0 = geos[0][axis];
  const offMin = Math.min(...geos.map((g) => g[axis].off));
  const endMax = Math.max(...geos.map((g, c) => g[axis].off + ks[c].size[axis] - 1));
  const haloPlanes = endMax - offMin;
  const own = Math.min(Math.floor((maxBytes / planeBytesIn) - haloPlanes), Math.floor(maxBytes / planeBytesOut));
  // No halo for the planner to keep: the halo planes are gathered below, so a budget of `own` units is `own` per slab.
  const cuts = own < 1 ? undefined : planRowSlabs(g0.nOut, 0, own, 1);
  if (!cuts) throw new InvalidArgumentError(`one ${axis === 0 ? 'plane' : 'row'} of this volume with its halo does not fit the GPU's ${maxBytes}-byte buffer limit; use ${CPU_PATH}`);
  const slabs: Slab[] = [];
  for (const { y0: s0, y1: s1 } of cuts) {
    const first = s0 + offMin, count = s1 - 1 + endMax - first + 1;
    const planes = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const p = first + i;
      planes[i] = mode === 'constant' && (p < 0 || p >= g0.nIn) ? -1 : borderIndex(p, g0.nIn, mode);
    }
    const slabGeos = geos.map((g) => {
      const c = g.map((a) => ({ ...a })) as Geo3;
      c[axis] = { nIn: count, nOut: s1 - s0, off: g[axis].off - offMin, lo: Math.max(0, -first), hi: Math.min(count, g0.nIn - first) };
      return c;
    });
    slabs.push({ s0, s1, planes, geos: slabGeos });
  }
  return slabs;
}

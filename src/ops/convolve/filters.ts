import { InvalidArgumentError } from '../../core/errors.js';
import type { Geometry } from '../../core/image.js';
import { denseKernel, separableKernel, type ConvKernel } from './kernel.js';
import type { NonFiniteRule } from './nonfinite.js';

/**
 * Named filters as kernels. A filter is one kernel, or several whose outputs combine into a gradient magnitude
 * √(Σ cᵢ²) (sobel, prewitt, roberts). Definitions are scipy.ndimage's (which equal OpenCV's in 2D):
 * - sobel-A (A = x, y, z): correlate1d [-1, 0, 1] along A, [1, 2, 1] along every other axis (scipy.ndimage.sobel;
 *   in 2D = cv2.Sobel ksize 3). ITK's 3D Sobel smooths with a non-separable plane instead: not this one.
 * - prewitt-A: [-1, 0, 1] along A, [1, 1, 1] along the others (scipy.ndimage.prewitt).
 * - roberts (2D): √(r₊² + r₋²), r₊ = [[1, 0], [0, -1]], r₋ = [[0, 1], [-1, 0]], anchored at their top-left tap.
 * - gauss:S[,Sy[,Sz]][mm]: scipy.ndimage.gaussian_filter, sigma per axis in x, y, z order (one value for all),
 *   radius ⌊truncate·σ + 0.5⌋; in voxels, or millimetres with the `mm` suffix (needs the volume's spacing).
 * - box:N or box:WxH[xD]: the mean over the window (scipy uniform_filter, cv2.blur), anchor ⌊N/2⌋.
 * - laplace: Σ_A of [1, -2, 1] along A (scipy.ndimage.laplace; cv2.Laplacian ksize 1 in 2D), one dense kernel.
 */
export interface FilterPlan {
  name: string;
  components: ConvKernel[];
  combine: 'single' | 'magnitude';
  /** box:… filters: the window size per axis [z,] y, x (box.ts rounds them back to 16 bits as cv2.blur does). */
  box?: number[];
  /** gauss:… filters: sigma per axis ([y, x] or [z, y, x]) in voxels (gauss8.ts: cv2's fixed-point Gaussian of 8-bit images). */
  gauss?: number[];
  /** How NaN and ±inf spread in scipy's version of the filter, where the fast paths differ (nonfinite.ts). */
  nonFinite?: NonFiniteRule;
}

type Axis = 'x' | 'y' | 'z';

/** The [z, y, x] vectors of a derivative along `axis` with `smooth` along the other axes (2D: no z). */
function derivative(axis: Axis, smooth: number[], rank: number, name: string): ConvKernel {
  const d = [-1, 0, 1];
  const order = rank === 3 ? (['z', 'y', 'x'] as const) : (['y', 'x'] as const);
  if (!(order as readonly Axis[]).includes(axis)) throw new InvalidArgumentError(`${name}: a 2D image has no z axis (use a volume)`);
  return separableKernel(order.map((a) => (a === axis ? d : smooth)));
}

/** scipy.ndimage's Gaussian weights: exp(−x²/2σ²) over [−r, r], r = ⌊truncate·σ + 0.5⌋, normalized to sum 1. */
export function gaussianWeights(sigma: number, truncate: number): number[] {
  if (sigma <= 1e-15) return [1];
  const r = Math.floor(truncate * sigma + 0.5);
  const w: number[] = [];
  for (let x = -r; x <= r; x++) w.push(Math.exp((-0.5 / (sigma * sigma)) * x * x));
  const s = w.reduce((a, b) => a + b, 0);
  return w.map((v) => v / s);
}

function parseNumbers(text: string, name: string): number[] {
  const v = text.split(/[,x×]/).map((t) => Number(t.trim()));
  if (v.length === 0 || v.some((n) => !Number.isFinite(n) || n < 0)) throw new InvalidArgumentError(`${name}: expected non-negative numbers, got '${text}'`);
  return v;
}

/** Per-axis values given in x, y, z order (one value for all) as [z, y, x] for `rank` axes. */
function perAxis(v: number[], rank: number, name: string): number[] {
  if (v.length !== 1 && v.length !== rank) throw new InvalidArgumentError(`${name}: give one value or ${rank} (x, y${rank === 3 ? ', z' : ''})`);
  const xyz = v.length === 1 ? Array<number>(rank).fill(v[0]) : v;
  return xyz.slice().reverse();
}

export interface FilterContext {
  rank: 2 | 3;
  geometry?: Geometry;
  /** Gaussian truncation in sigmas. @default 4 */
  truncate?: number;
}

/** Parses a filter spec (see FilterPlan) for an image of rank 2 or 3. `kernel:FILE` is resolved by the caller. */
export function parseFilter(spec: string, ctx: FilterContext): FilterPlan {
  const { rank } = ctx;
  const name = spec.trim().toLowerCase();
  const [head, arg] = name.split(':', 2) as [string, string | undefined];
  const axes = rank === 3 ? (['x', 'y', 'z'] as const) : (['x', 'y'] as const);
  const grad = (smooth: number[], family: string): FilterPlan => {
    const m = new RegExp(`^${family}(?:-([xyz]))?$`).exec(head);
    if (!m) throw new InvalidArgumentError(`unknown filter '${spec}'`);
    if (m[1]) return { name, components: [derivative(m[1] as 'x', smooth, rank, spec)], combine: 'single', nonFinite: 'taps' };
    return { name, components: axes.map((a) => derivative(a, smooth, rank, spec)), combine: 'magnitude', nonFinite: 'taps' };
  };
  if (head.startsWith('sobel')) return grad([1, 2, 1], 'sobel');
  if (head.startsWith('prewitt')) return grad([1, 1, 1], 'prewitt');
  if (head === 'roberts') {
    if (rank !== 2) throw new InvalidArgumentError('roberts is defined for 2D images');
    return { name, combine: 'magnitude', components: [denseKernel([1, 0, 0, -1], [2, 2], [0, 0], 'roberts'), denseKernel([0, 1, -1, 0], [2, 2], [0, 0], 'roberts')] };
  }
  if (head === 'laplace') {
    const w = rank === 2 ? [0, 1, 0, 1, -4, 1, 0, 1, 0] : laplace3d();
    return { name, combine: 'single', components: [denseKernel(w, rank === 2 ? [3, 3] : [3, 3, 3], undefined, 'laplace')] };
  }
  if (head === 'gauss' || head === 'gaussian') {
    if (!arg) throw new InvalidArgumentError(`${spec}: give the sigma, e.g. gauss:2 or gauss:1.5mm`);
    const mm = arg.endsWith('mm');
    const sig = perAxis(parseNumbers(mm ? arg.slice(0, -2) : arg, spec), rank, spec);
    let vox = sig;
    if (mm) {
      if (!ctx.geometry) throw new InvalidArgumentError(`${spec}: sigma in millimetres needs the voxel spacing (a DICOM or NIfTI input); give it in voxels instead`);
      const sp = ctx.geometry.spacing; // x, y, z
      vox = sig.map((s, i) => s / sp[rank - 1 - i]);
    }
    const truncate = ctx.truncate ?? 4;
    return { name, combine: 'single', components: [separableKernel(vox.map((s) => gaussianWeights(s, truncate)), undefined, spec)], gauss: vox };
  }
  if (head === 'box' || head === 'mean') {
    if (!arg) throw new InvalidArgumentError(`${spec}: give the size, e.g. box:5 or box:5x3`);
    const n = perAxis(parseNumbers(arg, spec), rank, spec);
    if (n.some((k) => !Number.isInteger(k) || k < 1)) throw new InvalidArgumentError(`${spec}: box sizes are integers ≥ 1`);
    return { name, combine: 'single', components: [separableKernel(n.map((k) => Array<number>(k).fill(1 / k)), n.map((k) => Math.floor(k / 2)), spec)], box: n, nonFinite: 'running' };
  }
  throw new InvalidArgumentError(`unknown filter '${spec}' (sobel[-x|-y|-z], prewitt[-x|-y|-z], roberts, gauss:SIGMA[mm], box:N, laplace, kernel:FILE)`);
}

function laplace3d(): number[] {
  const w = new Array<number>(27).fill(0);
  w[13] = -6;
  for (const i of [4, 10, 12, 14, 16, 22]) w[i] = 1;
  return w;
}

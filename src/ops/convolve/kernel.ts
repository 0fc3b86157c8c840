import { InvalidArgumentError } from '../../core/errors.js';

/**
 * A correlation kernel in one internal form: output(o) = Σ_j weights[j] · input(o + j − anchor), per axis, taps in
 * z, y, x order (x fastest). 2D kernels have size[0] = 1. Weights are float32 (scipy computes with float64
 * weights: the difference is below float32 rounding of the result). When the kernel is the outer product of one
 * vector per axis (`factors`), separable implementations may run it as one 1-D pass per axis.
 */
export interface ConvKernel {
  /** [kz, ky, kx] */
  size: [number, number, number];
  /** [az, ay, ax]: the tap aligned with the output position */
  anchor: [number, number, number];
  /** kz·ky·kx weights, x fastest */
  weights: Float32Array;
  /** [z, y, x] vectors whose outer product is `weights` (rank-1 kernels) */
  factors?: [Float32Array, Float32Array, Float32Array];
}

function checkFinite(w: ArrayLike<number>, what: string): void {
  for (let i = 0; i < w.length; i++) {
    if (!Number.isFinite(w[i])) throw new InvalidArgumentError(`${what}: weight ${i} is ${w[i]}; kernel weights must be finite`);
  }
}

function defaultAnchor(k: number, given: number | undefined, axis: string, what: string): number {
  if (given !== undefined) {
    if (!Number.isInteger(given) || given < 0 || given >= k) throw new InvalidArgumentError(`${what}: anchor ${given} along ${axis} is outside the kernel's ${k} taps`);
    return given;
  }
  if (k % 2 === 0) throw new InvalidArgumentError(`${what}: an even kernel size (${k} along ${axis}) needs an explicit anchor`);
  return (k - 1) / 2;
}

/**
 * A kernel from dense weights shaped [ky, kx] or [kz, ky, kx]; `anchor` (same order) defaults to the centre and
 * must be given for even sizes. Rank-1 kernels get their factors detected (separable implementations apply).
 */
export function denseKernel(weights: ArrayLike<number>, shape: number[], anchor?: number[], what = 'kernel'): ConvKernel {
  if (shape.length !== 2 && shape.length !== 3) throw new InvalidArgumentError(`${what}: a kernel is 2D [ky, kx] or 3D [kz, ky, kx], got shape [${shape.join(', ')}]`);
  const size = (shape.length === 2 ? [1, ...shape] : [...shape]) as [number, number, number];
  if (size.some((n) => !Number.isInteger(n) || n < 1)) throw new InvalidArgumentError(`${what}: invalid kernel shape [${shape.join(', ')}]`);
  const n = size[0] * size[1] * size[2];
  if (weights.length !== n) throw new InvalidArgumentError(`${what}: ${weights.length} weights for shape [${shape.join(', ')}] (needs ${n})`);
  checkFinite(weights, what);
  const a = anchor ? (anchor.length === 2 ? [0, ...anchor] : anchor) : [];
  const k: ConvKernel = {
    size,
    anchor: [defaultAnchor(size[0], size[0] === 1 ? 0 : a[0], 'z', what), defaultAnchor(size[1], a[1], 'y', what), defaultAnchor(size[2], a[2], 'x', what)],
    // scipy.ndimage.correlate leaves out weights |w| ≤ DBL_EPSILON (a NaN under one does not spread): they are 0 here.
    weights: Float32Array.from(weights, (v) => (Math.abs(v) <= 2 ** -52 ? 0 : v)),
  };
  const f = rankOneFactors(k.weights, size);
  if (f) k.factors = f;
  return k;
}

/** A separable kernel from one vector per axis, given as [y, x] or [z, y, x] (anchors in the same order). */
export function separableKernel(vectors: ArrayLike<number>[], anchor?: number[], what = 'kernel'): ConvKernel {
  if (vectors.length !== 2 && vectors.length !== 3) throw new InvalidArgumentError(`${what}: give one vector per axis ([y, x] or [z, y, x])`);
  const v = (vectors.length === 2 ? [[1], ...vectors] : vectors).map((x) => Float32Array.from(x)) as [Float32Array, Float32Array, Float32Array];
  v.forEach((x, i) => checkFinite(x, `${what} (${'zyx'[i]} vector)`));
  const a = anchor ? (anchor.length === 2 ? [0, ...anchor] : anchor) : [];
  const size = v.map((x) => x.length) as [number, number, number];
  if (size.some((n) => n < 1)) throw new InvalidArgumentError(`${what}: empty kernel vector`);
  const weights = new Float32Array(size[0] * size[1] * size[2]);
  for (let z = 0, i = 0; z < size[0]; z++) for (let y = 0; y < size[1]; y++) for (let x = 0; x < size[2]; x++, i++) weights[i] = v[0][z] * v[1][y] * v[2][x];
  return {
    size,
    anchor: [defaultAnchor(size[0], size[0] === 1 ? 0 : a[0], 'z', what), defaultAnchor(size[1], a[1], 'y', what), defaultAnchor(size[2], a[2], 'x', what)],
    weights,
    factors: v,
  };
}

/**
 * Factors w[z][y][x] = fz[z]·fy[y]·fx[x] when the kernel is rank 1 (to float32 precision, relative to its
 * largest weight), else undefined. The pivot is the largest weight, so the division is well conditioned.
 */
export function rankOneFactors(w: Float32Array, size: [number, number, number]): [Float32Array, Float32Array, Float32Array] | undefined {
  const [kz, ky, kx] = size;
  let p = 0;
  for (let i = 1; i < w.length; i++) if (Math.abs(w[i]) > Math.abs(w[p])) p = i;
  const pv = w[p];
  if (pv === 0) return undefined;
  const pz = Math.floor(p / (ky * kx)), py = Math.floor(p / kx) % ky, px = p % kx;
  const fx = new Float32Array(kx), fy = new Float32Array(ky), fz = new Float32Array(kz);
  for (let x = 0; x < kx; x++) fx[x] = w[(pz * ky + py) * kx + x];
  for (let y = 0; y < ky; y++) fy[y] = w[(pz * ky + y) * kx + px] / pv;
  for (let z = 0; z < kz; z++) fz[z] = w[(z * ky + py) * kx + px] / pv;
  const tol = 1e-6 * Math.abs(pv);
  for (let z = 0, i = 0; z < kz; z++) for (let y = 0; y < ky; y++) for (let x = 0; x < kx; x++, i++) {
    if (Math.abs(fz[z] * fy[y] * fx[x] - w[i]) > tol) return undefined;
  }
  return [fz, fy, fx];
}

/**
 * The correlation kernel equivalent to convolving with `k` (scipy.ndimage.convolve): the weights reversed along
 * every axis, the anchor mirrored (k − 1 − a), so that convolve(x, k) = correlate(x, flip(k)) with scipy's origins.
 */
export function flipKernel(k: ConvKernel): ConvKernel {
  const [kz, ky, kx] = k.size;
  const n = k.weights.length;
  const weights = new Float32Array(n);
  for (let i = 0; i < n; i++) weights[i] = k.weights[n - 1 - i];
  const out: ConvKernel = { size: k.size, anchor: [kz - 1 - k.anchor[0], ky - 1 - k.anchor[1], kx - 1 - k.anchor[2]], weights };
  if (k.factors) out.factors = k.factors.map((f) => f.slice().reverse()) as [Float32Array, Float32Array, Float32Array];
  return out;
}

/** Parses a kernel file's JSON: a nested array (2D or 3D), or { weights, anchor? } / { separable: [[..],[..]], anchor? }. */
export function kernelFromJson(text: string, what: string): ConvKernel {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(`${what}: not valid JSON (${(e as Error).message})`);
  }
  const obj = (Array.isArray(v) ? { weights: v } : v) as { weights?: unknown; separable?: unknown; anchor?: number[] };
  if (obj && Array.isArray(obj.separable)) return separableKernel(obj.separable as number[][], obj.anchor, what);
  const shape: number[] = [];
  let cur: unknown = obj?.weights;
  while (Array.isArray(cur)) {
    shape.push(cur.length);
    cur = cur[0];
  }
  if (shape.length < 2) throw new InvalidArgumentError(`${what}: expected a 2D or 3D nested array of numbers`);
  const flat = (obj.weights as unknown[]).flat(shape.length) as unknown[];
  if (flat.length !== shape.reduce((a, b) => a * b, 1) || flat.some((x) => typeof x !== 'number')) {
    throw new InvalidArgumentError(`${what}: a ragged array or one holding non-numbers`);
  }
  return denseKernel(flat as number[], shape, obj.anchor, what);
}

/** Whether a 1-D factor is the identity (one tap of weight 1): its pass is skipped (CPU and GPU). */
export function isIdentity(f: Float32Array): boolean {
  return f.length === 1 && f[0] === 1;
}

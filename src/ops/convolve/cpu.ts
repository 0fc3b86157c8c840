import type { BorderMode } from '../../core/border.js';
import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, type Image } from '../../core/image.js';
import { now, type KernelTime } from '../../core/timings.js';
import type { BoxRounding } from './box.js';
import { castSaturateTask, convDenseTask, convLinesTask, magnitudeTask } from './cpu-kernels.js';
import type { ConvImpl } from './gpu.js';
import { isIdentity, type ConvKernel } from './kernel.js';
import { hasNonFinite, nonFiniteClasses, patchNonFinite } from './nonfinite.js';
import { tapIndex, wholeGeometry, type Geo3 } from './plan.js';
import type { FilterRun } from './run.js';

type Pixels = Uint8Array | Uint16Array | Float32Array;

/**
 * The filter on the CPU: each component (1-D passes where the kernel is separable and `impl` allows it: auto,
 * separable, fused; else the dense kernel), NaN/±inf spread as scipy does, the magnitude, the cast. Returns the
 * output's data, the implementation that ran, and its one timed kernel.
 */
export async function filterCpu(img: Image, run: FilterRun, p: { border: BorderMode; cval: number; impl: ConvImpl }, pool: CpuPool): Promise<{ data: Pixels; impl: string; kernels: KernelTime[] }> {
  const { plan, shape, geos, outDtype, box } = run;
  const separable = p.impl === 'auto' || p.impl === 'separable' || p.impl === 'fused';
  const tk = now();
  const parts: Float32Array[] = [];
  for (const k of plan.components) parts.push((await correlateCpu(img.data, shape, k, p.border, p.cval, separable, pool)).data);
  if (plan.nonFinite && img.data instanceof Float32Array && hasNonFinite(img.data)) {
    const data = img.data;
    plan.components.forEach((k, c) => patchNonFinite(parts[c], nonFiniteClasses(data, shape, k, geos[c], p.border, plan.nonFinite!)));
  }
  let data: Pixels = plan.combine === 'magnitude' ? await magnitudeCpu(parts, pool) : parts[0];
  if (outDtype !== 'float32') data = await castCpu(data as Float32Array, outDtype, pool, box);
  const kernels: KernelTime[] = [{ name: `filter.${plan.name}`, ms: now() - tk }];
  const impl = plan.components.map((k) => (separable && k.factors ? 'separable' : 'dense')).join('+');
  return { data, impl, kernels };
}

/**
 * One kernel over a gray volume on the pool: per-axis 1-D passes x → y → z when `separable` (the kernel has
 * factors), else the dense kernel. Returns float32 data shaped by the geometry.
 */
export async function correlateCpu(src: Pixels, shape: [number, number, number], k: ConvKernel, mode: BorderMode, cval: number, separable: boolean, pool: CpuPool): Promise<{ data: Float32Array; shape: [number, number, number] }> {
  const geo = wholeGeometry(shape, k, mode);
  const out: [number, number, number] = [geo[0].nOut, geo[1].nOut, geo[2].nOut];
  const input = shareable(pool, src as Float32Array);
  if (separable && k.factors) return { data: await passesCpu(input, shape, geo, k, mode, cval, pool), shape: out };
  const dst = allocPixels('float32', out[0] * out[1] * out[2]) as Float32Array;
  const [iz, iy, ix] = [0, 1, 2].map((a) => tapIndex(geo[a], k.size[a], mode));
  const rows = out[0] * out[1];
  await forChunks(pool, rows, Math.max(1, Math.ceil(8192 / (out[2] * k.weights.length))), convDenseTask, {
    src: input, dst, hIn: shape[1], wIn: shape[2], hOut: out[1], wOut: out[2], kz: k.size[0], ky: k.size[1], kx: k.size[2], w: k.weights, iz, iy, ix, cval,
  });
  return { data: dst, shape: out };
}

/** x, then y, then z: each pass float32 in, float32 out (scipy's sequential correlate1d). */
async function passesCpu(src: Pixels, shape: [number, number, number], geo: Geo3, k: ConvKernel, mode: BorderMode, cval: number, pool: CpuPool): Promise<Float32Array> {
  let cur: Pixels = src;
  const dims = [...shape] as [number, number, number];
  for (const axis of [2, 1, 0]) {
    const f = k.factors![axis];
    if (isIdentity(f)) continue;
    const g = geo[axis];
    const inner = axis === 2 ? 1 : axis === 1 ? dims[2] : dims[1] * dims[2];
    const outer = axis === 0 ? 1 : axis === 1 ? dims[0] : dims[0] * dims[1];
    const idx = tapIndex(g, f.length, mode);
    const next = allocPixels('float32', outer * g.nOut * inner) as Float32Array;
    const lines = outer * g.nOut;
    await forChunks(pool, lines, Math.max(1, Math.ceil(16384 / (inner * f.length))), convLinesTask, { src: cur, dst: next, nIn: g.nIn, inner, nOut: g.nOut, w: f, idx, cval });
    dims[axis] = g.nOut;
    cur = next;
  }
  if (cur === src) {
    // An identity kernel: the float32 copy of the input.
    const copy = allocPixels('float32', src.length) as Float32Array;
    copy.set(src);
    return copy;
  }
  return cur as Float32Array;
}

/** √(Σ cᵢ²) of component results on the pool. */
export async function magnitudeCpu(parts: Float32Array[], pool: CpuPool): Promise<Float32Array> {
  const out = allocPixels('float32', parts[0].length) as Float32Array;
  await forChunks(pool, out.length, 1 << 18, magnitudeTask, { parts, out });
  return out;
}

/**
 * float32 → the input's integer dtype, rounded half to even and saturated (cv2's ddepth = -1 output); box window
 * sums are rounded as cv2.blur does (box.ts).
 */
export async function castCpu(src: Float32Array, dtype: 'uint8' | 'uint16', pool: CpuPool, box?: BoxRounding): Promise<Uint8Array | Uint16Array> {
  const out = allocPixels(dtype, src.length) as Uint8Array | Uint16Array;
  await forChunks(pool, out.length, 1 << 18, castSaturateTask, { src, dst: out, max: dtype === 'uint8' ? 255 : 65535, box });
  return out;
}


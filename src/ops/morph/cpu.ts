import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, asShape3D, type Image } from '../../core/image.js';
import { boxPasses, maskOffsets, neutral, type MorphBorder, type MorphPrimitive } from './plan.js';
import type { StructuringElement } from './se.js';

type Pixels = Uint8Array | Uint16Array | Float32Array;

/** One erosion or dilation (with its iterations) on the CPU pool. */
export async function primitiveCpu(img: Image, op: MorphPrimitive, se: StructuringElement, border: MorphBorder, iterations: number, pool: CpuPool): Promise<Image> {
  const [d, h, w] = asShape3D(img.shape);
  const isMin = op === 'erode';
  const fill = neutral(op, img.dtype);
  const b = border === 'opencv' ? 0 : 1;
  let cur = shareable(pool, img.data as Pixels);
  const fresh = () => allocPixels(img.dtype, cur.length) as Pixels;
  if (se.kind === 'box') {
    const { axes, repeat } = boxPasses(se, op, border, iterations, [d, h, w]);
    for (let it = 0; it < repeat; it++) {
      const [wx, wy, wz] = axes;
      if (wx) {
        const out = fresh();
        await forChunks(pool, d * h, Math.max(1, Math.ceil(65536 / w)), 'vhgwLines', (o0, o1) => [cur, out, w, 1, wx.k, wx.a, isMin, b, fill, o0, o1, 0, 1]);
        cur = out;
      }
      if (wy) {
        const out = fresh();
        // Split the contiguous x range over the workers: every worker walks all rows of its columns in order.
        await forChunks(pool, w, 64, 'vhgwLines', (i0, i1) => [cur, out, h, w, wy.k, wy.a, isMin, b, fill, 0, d, i0, i1]);
        cur = out;
      }
      if (wz) {
        const out = fresh();
        await forChunks(pool, h * w, 256, 'vhgwLines', (i0, i1) => [cur, out, d, h * w, wz.k, wz.a, isMin, b, fill, 0, 1, i0, i1]);
        cur = out;
      }
    }
    if (cur === img.data) cur = (cur as Uint8Array).slice() as Pixels; // a 1×1×1 box: a copy, never the input
  } else {
    const offsets = maskOffsets(se, op, border);
    for (let it = 0; it < iterations; it++) {
      const out = fresh();
      await forChunks(pool, d * h, Math.max(1, Math.ceil(16384 / (w * (offsets.length / 3)))), 'directMorph', (r0, r1) => [cur, out, d, h, w, offsets, isMin, b, fill, r0, r1]);
      cur = out;
    }
  }
  return { data: cur, shape: [...img.shape] as Image['shape'], channels: 1, dtype: img.dtype };
}

/** a − b elementwise (saturating at 0 for integers) on the pool. */
export async function subtractCpu(a: Image, b: Image, pool: CpuPool): Promise<Image> {
  const out = allocPixels(a.dtype, a.data.length) as Pixels;
  await forChunks(pool, out.length, 1 << 20, 'subtract', (s, e) => [a.data, b.data, out, s, e]);
  return { ...a, data: out, shape: [...a.shape] as Image['shape'] };
}

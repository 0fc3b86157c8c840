import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import { allocPixels, asShape3D, type Image } from '../../core/image.js';
import { directMorphTask, subtractTask, vhgwLinesTask } from './cpu-kernels.js';
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
  const line = (src: Pixels, dst: Pixels, win: { k: number; a: number }) => ({ src, dst, k: win.k, a: win.a, isMin, border: b, fill });
  if (se.kind === 'box') {
    const { axes, repeat } = boxPasses(se, op, border, iterations, [d, h, w]);
    for (let it = 0; it < repeat; it++) {
      const [wx, wy, wz] = axes;
      if (wx) {
        const out = fresh();
        await forChunks(pool, d * h, Math.max(1, Math.ceil(65536 / w)), vhgwLinesTask, { ...line(cur, out, wx), outer: d * h, n: w, inner: 1, split: 'outer' });
        cur = out;
      }
      if (wy) {
        const out = fresh();
        // Split the contiguous x range over the workers: every worker walks all rows of its columns in order.
        await forChunks(pool, w, 64, vhgwLinesTask, { ...line(cur, out, wy), outer: d, n: h, inner: w, split: 'inner' });
        cur = out;
      }
      if (wz) {
        const out = fresh();
        await forChunks(pool, h * w, 256, vhgwLinesTask, { ...line(cur, out, wz), outer: 1, n: d, inner: h * w, split: 'inner' });
        cur = out;
      }
    }
    if (cur === img.data) cur = (cur as Uint8Array).slice() as Pixels; // a 1×1×1 box: a copy, never the input
  } else {
    const offsets = maskOffsets(se, op, border);
    for (let it = 0; it < iterations; it++) {
      const out = fresh();
      await forChunks(pool, d * h, Math.max(1, Math.ceil(16384 / (w * (offsets.length / 3)))), directMorphTask, { src: cur, dst: out, d, h, w, offsets, isMin, border: b, fill });
      cur = out;
    }
  }
  return { data: cur, shape: [...img.shape] as Image['shape'], channels: 1, dtype: img.dtype };
}

/** a − b elementwise (saturating at 0 for integers) on the pool. */
export async function subtractCpu(a: Image, b: Image, pool: CpuPool): Promise<Image> {
  const out = allocPixels(a.dtype, a.data.length) as Pixels;
  await forChunks(pool, out.length, 1 << 20, subtractTask, { a: a.data as Pixels, b: b.data as Pixels, dst: out });
  return { ...a, data: out, shape: [...a.shape] as Image['shape'] };
}

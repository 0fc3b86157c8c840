import { cpuTuning, forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import type { Image } from '../../core/image.js';

/** Histogram of a gray 8/16-bit image on the CPU: workers each count a slice, then the slices are summed. */
export async function histogramCpu(img: Image, pool: CpuPool, bins?: number, mask?: Uint8Array): Promise<Uint32Array> {
  const bits = img.dtype === 'uint8' ? 8 : 16;
  const nbins = bins ?? 1 << bits;
  const data = shareable(pool, img.data as Uint8Array | Uint16Array);
  const m = mask ? shareable(pool, mask) : undefined;
  const parts = await forChunks<Uint32Array>(pool, data.length, cpuTuning.pixelChunk, 'histogram', (s, e) => [data, s, e, nbins, bits, m]);
  if (parts.length === 1) return parts[0];
  const out = new Uint32Array(nbins);
  for (const p of parts) for (let b = 0; b < nbins; b++) out[b] += p[b];
  return out;
}

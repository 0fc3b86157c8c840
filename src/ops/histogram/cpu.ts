import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import type { Image } from '../../core/image.js';

/** Pixels per worker chunk below which splitting costs more than it gains. */
const MIN_CHUNK = 1 << 20;

/** Full-range histogram of a gray 8/16-bit image on the CPU (workers each count a slice, then sum). */
export async function histogramCpu(img: Image, pool: CpuPool): Promise<Uint32Array> {
  const bins = img.dtype === 'uint8' ? 256 : 65536;
  const data = shareable(pool, img.data as Uint8Array | Uint16Array);
  const parts = await forChunks<Uint32Array>(pool, data.length, MIN_CHUNK, 'histogram', (s, e) => [data, s, e, bins]);
  if (parts.length === 1) return parts[0];
  const out = new Uint32Array(bins);
  for (const p of parts) for (let b = 0; b < bins; b++) out[b] += p[b];
  return out;
}

import { cpuTuning, forBlocks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import type { Image } from '../../core/image.js';
import { histogramTask } from './cpu-kernels.js';

/** Histogram of a gray 8/16-bit image on the CPU: workers take blocks and count them, then their partial histograms are summed. */
export async function histogramCpu(img: Image, pool: CpuPool, bins?: number, mask?: Uint8Array): Promise<Uint32Array> {
  const bits = img.dtype === 'uint8' ? 8 : 16;
  const nbins = bins ?? 1 << bits;
  const native = pool.native;
  if (native && bits === 8 && nbins === 256 && !mask) {
    const out = new Uint32Array(256);
    native.histogram8(img.data as Uint8Array, out, pool.size);
    return out;
  }
  const data = shareable(pool, img.data as Uint8Array | Uint16Array);
  const m = mask ? shareable(pool, mask) : undefined;
  // Blocks of at least 8 pixels per bin: each block's partial histogram is allocated and summed.
  const block = Math.max(cpuTuning.pixelBlock, nbins * 8);
  const parts = await forBlocks(pool, data.length, block, histogramTask, { data, bins: nbins, bits, mask: m }, true);
  if (parts.length === 1) return parts[0];
  const out = new Uint32Array(nbins);
  for (const p of parts) for (let b = 0; b < nbins; b++) out[b] += p[b];
  return out;
}

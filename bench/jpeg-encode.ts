/**
 * JPEG encode of a resident photo, the GPU path (encodeJpegGpu: colour conversion, downsampling, DCT and
 * quantization on the GPU, coefficients downloaded, libjpeg's entropy coding on a CPU thread — the hybrid), the
 * GPU path with entropy coding on the GPU too (entropy: 'gpu': only the coded bytes downloaded), and the CPU path
 * (encodeJpegFromGpu's 'cpu': the pixels downloaded into mapped memory, libjpeg-turbo's whole encode on a CPU thread):
 * `node dist/bench/jpeg-encode.js [--sizes 1,6,12,24] [--reps 10] [--inflight 16] [--quality 95] [--json FILE]`.
 * Photos: test/fixtures/images/chelsea.png mirror-tiled to each size in megapixels (3:2) — a real photograph's
 * detail in every block (resized up, it would be smooth and cheap to entropy-code) —, colour 4:2:0 and its gray. Per photo: medians of `reps` of each phase of the GPU path (GPU wall and its kernels' timestamps,
 * download, entropy coding; with GPU entropy coding its two halves), end to end on the three paths (unprofiled: no waits between phases), the CPU path's
 * download and encode apart; and images/s with `inflight` encodes of each path in flight at once on libuv's
 * threads (set UV_THREADPOOL_SIZE to the cores). Checks that the three paths give the same bytes.
 */
import { writeFileSync } from 'node:fs';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import type { Image } from '../src/core/image.js';
import { readImage } from '../src/io/index.js';
import { jpegEncoder } from '../src/io/jpeg.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { encodeJpegGpu, type JpegEncodePhases, type JpegGpuEncodeOptions } from '../src/node/jpeg-encode-gpu.js';
import { encodeJpegFromGpu } from '../src/node/jpeg-gpu.js';
import { mirrorTiled } from '../test/helpers/fixtures.js';
import { stat, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const sizes = arg('sizes', '1,6,12,24').split(',').map(Number);
const reps = Number(arg('reps', '10'));
const inflight = Number(arg('inflight', '16'));
const quality = Number(arg('quality', '95'));
const jsonOut = arg('json', '');

/** chelsea.png mirror-tiled to `mp` megapixels (3:2), RGB or its gray (OpenCV's), in shared memory as readImage gives it. */
async function photo(mp: number, channels: 1 | 3): Promise<Image> {
  const h = Math.round(Math.sqrt((mp * 1e6) / 1.5)), w = Math.round(h * 1.5);
  return mirrorTiled(await readImage('test/fixtures/images/chelsea.png', { gray: channels === 1 }), h, w);
}

async function median(fn: () => Promise<number>): Promise<number> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) xs.push(await fn());
  return stat(xs).median;
}

/** Images/s with `inflight` encodes running at once, over `inflight * 2` encodes (one round of warm-up first). */
async function throughput(encode: () => Promise<unknown>): Promise<number> {
  await Promise.all(Array.from({ length: inflight }, encode));
  const n = inflight * 2, t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (next++ < n) await encode();
  }));
  return n / ((performance.now() - t0) / 1000);
}

const ctx = await createNodeGpuContext();
const rows: Record<string, unknown>[] = [];
for (const mp of sizes) {
  for (const channels of [3, 1] as const) {
    const host = await photo(mp, channels);
    const img = await GpuImage.upload(ctx, host);
    if (rows.length === 0) await warmUp(ctx, host.channels === 1 ? host : await photo(1, 1));
    const hybrid = (o: JpegGpuEncodeOptions = {}) => encodeJpegGpu(img, { quality, async: true, entropy: 'cpu', ...o });
    const gpuEntropy = (o: JpegGpuEncodeOptions = {}) => encodeJpegGpu(img, { quality, entropy: 'gpu', ...o });
    const gpuBytes = Buffer.from(await hybrid());
    const gpuEntropyBytes = Buffer.from(await gpuEntropy());
    const cpuBytes = await encodeJpegFromGpu(img, quality, { jpeg: 'cpu', async: true });
    const same = !!cpuBytes && gpuBytes.equals(cpuBytes) && gpuEntropyBytes.equals(cpuBytes);
    // The GPU paths' phases (each waited for), and end to end on the three paths.
    const phasesOf = async (encode: (o: JpegGpuEncodeOptions) => Promise<unknown>) => {
      const phases: JpegEncodePhases[] = [];
      await median(async () => {
        const p = {} as JpegEncodePhases;
        await encode({ phases: p });
        phases.push(p);
        return 0;
      });
      if (phases.some((p) => p.entropyPath !== phases[0].entropyPath)) throw new Error('the entropy path changed between runs');
      return { path: phases[0].entropyPath, ph: (k: 'gpu' | 'kernels' | 'download' | 'entropy') => stat(phases.map((p) => p[k])).median };
    };
    const { ph } = await phasesOf(hybrid);
    const ge = await phasesOf(gpuEntropy);
    const endToEnd = (encode: () => Promise<unknown>) => median(async () => { const t = performance.now(); await encode(); return performance.now() - t; });
    const gpuEnd = await endToEnd(hybrid);
    const gpuEntropyEnd = await endToEnd(gpuEntropy);
    const cpuEnd = await median(async () => { const t = performance.now(); await encodeJpegFromGpu(img, quality, { jpeg: 'cpu', async: true }); return performance.now() - t; });
    // The CPU path apart: the download into mapped memory, then libjpeg-turbo's encode of those pixels.
    const enc = jpegEncoder('uint8', channels)!;
    const [h, w] = host.shape;
    const cpuDownload = await median(async () => { const t = performance.now(); (await img.toHostView()).release(); return performance.now() - t; });
    const cpuEncode = await median(async () => { const t = performance.now(); await enc.encode(host.data as Uint8Array, w, h, quality, { async: true }); return performance.now() - t; });
    const row = {
      megapixels: +((w * h) / 1e6).toFixed(2), size: `${w}x${h}`, channels, quality, bytes_identical: same, jpeg_bytes: gpuBytes.length,
      gpu_path_ms: { gpu_wall: ph('gpu'), kernels: ph('kernels'), download_coefs: ph('download'), entropy: ph('entropy'), end_to_end: gpuEnd },
      // The GPU entropy path's `entropy_path` says where it coded ('cpu' where the coded bytes exceed a binding).
      gpu_entropy_path_ms: {
        entropy_path: ge.path, to_bit_total: ge.ph('gpu'), kernels: ge.ph('kernels'), pack_stuff_download: ge.ph('entropy'), end_to_end: gpuEntropyEnd,
      },
      cpu_path_ms: { download_pixels: cpuDownload, encode: cpuEncode, end_to_end: cpuEnd },
      images_per_s: {
        inflight,
        gpu: await throughput(() => hybrid()),
        gpu_entropy: await throughput(() => gpuEntropy()),
        cpu: await throughput(() => encodeJpegFromGpu(img, quality, { jpeg: 'cpu', async: true })),
      },
    };
    console.log(JSON.stringify(row));
    rows.push(row);
    img.release();
  }
}
const result = { adapter: ctx.adapter, uv_threadpool_size: process.env.UV_THREADPOOL_SIZE ?? '4 (default)', reps, rows };
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(result, null, 1));
ctx.destroy();
process.exit(0);

/**
 * Transfers and host→host small operations: `node dist/bench/transfer.js [--sizes 4k,8k] [--reps 20]`.
 * Per size (the photograph, 8-bit): the round trip (chunked upload + download into a reused array, and with the
 * download as a view of mapped memory), equalize host→host (reused output; view), the pipeline
 * `equalize | threshold --method otsu` host→host (copy; view), the round trip of an input produced in mapped upload
 * memory, a JPEG decoded then uploaded against decoded straight into upload memory, the CPU path (16 threads; reused output and fresh),
 * and cv2.equalizeHist / equalizeHist + THRESH_OTSU in the same run; sweeps of the upload chunk and of the threads per
 * host copy (native/copy.c). Medians. Writes bench/results/<out>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { transferTuning } from '../src/core/gpu/transfer.js';
import { createImage } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { encodeNpy, writeImage } from '../src/io/index.js';
import { decodeJpeg } from '../src/io/jpeg.js';
import { decodeJpegToGpu } from '../src/node/jpeg-gpu.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { copyTuning, nativeCopyBinding } from '../src/node/host-copy.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { equalize } from '../src/ops/equalize/index.js';
import { runOperation } from '../src/core/op.js';
import { parsePipeline, runChain, runPipeline } from '../src/ops/pipeline.js';
import { photoAt, repeat, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const sizes = arg('sizes', '4k,8k').split(',');
const reps = Number(arg('reps', '20'));
const outName = arg('out', 'transfer');
const SIZES: Record<string, [number, number]> = { '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320] };

const PY = `
import sys, time, statistics, numpy as np, cv2
img = np.load(sys.argv[1]); reps = int(sys.argv[2])
def t(f):
    f(); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)
print({"cv2.equalizeHist": t(lambda: cv2.equalizeHist(img)),
       "cv2.equalizeHist+otsu": t(lambda: cv2.threshold(cv2.equalizeHist(img), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)),
       "threads": cv2.getNumThreads()}.__repr__().replace("'", '"'))
`;

async function main(): Promise<void> {
  const gpu = await createNodeGpuContext();
  const pool = new NodeWorkerPool();
  await warmUp(gpu, await photoAt(1920, 1080));
  const steps = parsePipeline('equalize | threshold --method otsu');
  const rows = [];
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-transfer-'));
  for (const s of sizes) {
    const img = await photoAt(...SIZES[s]);
    const out = createImage(img.shape, 'uint8');
    const npy = join(dir, `${s}.npy`);
    writeFileSync(npy, encodeNpy(img));
    const time = async (f: () => Promise<void>) => (await repeat(reps, async () => { const t0 = now(); await f(); return now() - t0; })).median;
    const row: Record<string, unknown> = { size: s, bytes: img.data.length };
    row.roundTripCopy = await time(async () => { const d = await GpuImage.upload(gpu, img); await d.toHost(out); d.release(); });
    row.roundTripView = await time(async () => { const d = await GpuImage.upload(gpu, img); const v = await d.toHostView(); v.release(); d.release(); });
    // Input produced in mapped upload memory (GpuImage.staging): no host copy either way.
    row.roundTripStaged = await time(async () => { const st = await GpuImage.staging(gpu, img.shape, 'uint8'); const d = st.upload(); const v = await d.toHostView(); v.release(); d.release(); });
    // A JPEG of the image decoded (gray) into a host array and uploaded, against decoded into upload memory.
    const jpg = join(dir, `${s}.jpg`);
    await writeImage(jpg, img);
    const bytes = readFileSync(jpg);
    row.jpegDecodeThenUpload = await time(async () => { const d = await GpuImage.upload(gpu, decodeJpeg(bytes, jpg, true)!); await gpu.finish(); d.release(); });
    row.jpegDecodeToGpu = await time(async () => { const d = (await decodeJpegToGpu(gpu, bytes, jpg, true))!; await gpu.finish(); d.release(); });
    row.uploadOnly = await time(async () => { const d = await GpuImage.upload(gpu, img); await gpu.finish(); d.release(); });
    row.equalizeCopy = await time(async () => { await equalize(img, { gpu, out, profile: false }); });
    row.equalizeView = await time(async () => { (await runOperation(equalize.op, img, {}, { gpu, profile: false, view: true })).release?.(); });
    row.pipelineCopy = await time(async () => { await runPipeline(img, steps, { gpu }); });
    row.pipelineView = await time(async () => { (await runChain(img, steps, { gpu, view: true })).release?.(); });
    row.cpuEqualizeReusedOut = await time(async () => { await equalize(img, { pool, out }); });
    row.cpuEqualizeFresh = await time(async () => { await equalize(img, { pool }); });
    // The upload chunk size: none (one piece) and 2–32 MiB.
    const sweep: Record<string, unknown> = {};
    for (const chunk of [0, 2 << 20, 4 << 20, 8 << 20, 32 << 20]) {
      transferTuning.uploadChunk = chunk;
      sweep[chunk] = {
        upload: await time(async () => { const d = await GpuImage.upload(gpu, img); await gpu.finish(); d.release(); }),
        roundTripView: await time(async () => { const d = await GpuImage.upload(gpu, img); const v = await d.toHostView(); v.release(); d.release(); }),
      };
    }
    transferTuning.uploadChunk = undefined;
    row.chunkSweep = sweep;
    // Threads per host copy (native/copy.c; 'js' = TypedArray.set): into plain memory, and the transfers.
    const native = nativeCopyBinding();
    if (native) {
      const threadSweep: Record<string, unknown> = {};
      const plain = new Uint8Array(img.data.length);
      const defaultThreads = copyTuning.threads;
      for (const threads of [1, 2, 4, 6, 8, 12, 16]) {
        copyTuning.threads = threads;
        threadSweep[threads] = {
          plainCopy: await time(async () => native.copy(plain, img.data as Uint8Array, threads)),
          upload: await time(async () => { const d = await GpuImage.upload(gpu, img); await gpu.finish(); d.release(); }),
          roundTripView: await time(async () => { const d = await GpuImage.upload(gpu, img); const v = await d.toHostView(); v.release(); d.release(); }),
          roundTripCopy: await time(async () => { const d = await GpuImage.upload(gpu, img); await d.toHost(out); d.release(); }),
          equalizeView: await time(async () => { (await runOperation(equalize.op, img, {}, { gpu, profile: false, view: true })).release?.(); }),
        };
      }
      copyTuning.threads = defaultThreads;
      row.copyThreads = defaultThreads;
      row.threadSweep = threadSweep;
    }
    const py = spawnSync('python3', ['-c', PY, npy, String(reps)], { encoding: 'utf8' });
    try { row.anchors = JSON.parse(py.stdout); } catch { row.anchors = { error: py.stderr.slice(-300) }; }
    console.log(JSON.stringify(row));
    rows.push(row);
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${outName}.json`, JSON.stringify({ date: new Date().toISOString(), adapter: gpu.adapter, cpuThreads: pool.size, reps, rows }, null, 2));
  await pool.close();
  gpu.destroy();
}

await main();

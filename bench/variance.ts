/**
 * Where the variance of one kernel's time comes from (issue 22): `node dist/bench/variance.js [--se rect:51x51] [--size 7680x4320] [--hold-clocks]`.
 * One 8K erosion, timed under conditions that differ in one thing each, every repetition printed (not a median)
 * so a ramp shows:
 * - `warm`: right after a second of GPU work; `idle2s`: after two seconds with the GPU idle (clock ramp);
 * - `cpuBusy`: after two seconds of CPU work on all cores, as the morphology bench's CPU rows do before its GPU ones;
 * - `freshPool`: the buffer pool emptied first, so every scratch buffer is new (allocation, Dawn's lazy zeroing);
 * - `poolCap`: batches whose scratch exceeds the pool's 1 GiB of kept buffers (some buffers are new every batch);
 * - `isolated`: one call per submission (morph() with a resident image), after idle and when warm.
 * --hold-clocks: the same with a CUDA context open beside it (common.ts holdClocks).
 * Prints one JSON line per condition: { condition, se, heldClocks, at, ms: [per repetition] }.
 */
import type { GpuContext } from '../src/core/gpu/context.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { kernelTotal } from '../src/core/timings.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { MorphGpu } from '../src/ops/morph/gpu.js';
import { morph, parseElement } from '../src/ops/morph/index.js';
import { holdClocks, photoAt, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const se = arg('se', 'rect:51x51');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `reps` batches of `batch` erosions, each in one pass with one timestamp pair: per-erosion ms of each batch. */
async function batches(gpu: GpuContext, dev: GpuImage, batch: number, reps: number): Promise<number[]> {
  const m = new MorphGpu(gpu, 'uint8');
  const el = parseElement(se);
  const out: number[] = [];
  for (let r = 0; r < reps; r++) {
    const timer = new KernelTimer(gpu, true);
    const rec = new Recording(gpu, timer, 'batch', true);
    for (let i = 0; i < batch; i++) await m.primitive(rec, await m.toAligned(rec, dev), 'erode', el, 'opencv', 1, 'auto');
    rec.submit();
    await gpu.finish();
    out.push(+((await timer.read()).reduce((a, k) => a + k.ms, 0) / batch).toFixed(4));
    timer.destroy();
  }
  return out;
}

async function isolated(dev: GpuImage, reps: number): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r < reps; r++) {
    const res = await morph(dev, { se, profile: false });
    res.output.release();
    out.push(+kernelTotal(res.timings).toFixed(4));
  }
  return out;
}

const gpu = await createNodeGpuContext();
const pool = new NodeWorkerPool();
const [w, h] = arg('size', '7680x4320').split('x').map(Number);
const img = await photoAt(w, h);
const dev = await GpuImage.upload(gpu, img);
const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
const emit = (condition: string, ms: number[]) => console.log(JSON.stringify({ condition, se, heldClocks: hold?.held ?? false, at: new Date().toISOString(), ms }));
await batches(gpu, dev, 2, 1); // pipelines compiled outside every measurement
await warmUp(gpu, img);
emit('warm', await batches(gpu, dev, 20, 7));
await sleep(2000);
emit('idle2s', await batches(gpu, dev, 20, 7));
for (const t0 = performance.now(); performance.now() - t0 < 2000;) await morph(img, { se: 'rect:3x3', pool });
emit('cpuBusy', await batches(gpu, dev, 20, 7));
await warmUp(gpu, img);
gpu.buffers.clear();
emit('freshPool', await batches(gpu, dev, 20, 7));
await warmUp(gpu, img);
emit('poolCap40', await batches(gpu, dev, 40, 7));
emit('warmAgain', await batches(gpu, dev, 20, 7));
await sleep(2000);
emit('isolatedAfterIdle', await isolated(dev, 10));
await warmUp(gpu, img);
emit('isolatedWarm', await isolated(dev, 10));
hold?.release();
dev.release();
await pool.close();
gpu.destroy();
process.exit(0);

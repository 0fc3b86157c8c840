/**
 * Where the wall time of one GPU detection goes (host side): `node dist/bench/detect-phases.js [WxH] [--tiled]`.
 * Times upload, recording + submission, the wait for the readback, grouping, and a whole runGpu with its kernel
 * passes, after a warm-up; `--tiled` uses the astronaut photograph repeated at its own size. Prints JSON lines.
 */
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { readClassifier } from '../src/io/classifier.js';
import { readImage } from '../src/io/index.js';
import { frame } from './detect-frame.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { Detector, finishDetections } from '../src/ops/detect/index.js';
import type { DetectGpu, ReductionSchedule } from '../src/ops/detect/gpu.js';

const [W, H] = (process.argv[2] ?? '1920x1080').split('x').map(Number);
const ctx = await createNodeGpuContext();
const c = await readClassifier('test/fixtures/detect/lbpcascade_frontalface.xml');
// The benchmark's frame (bench/detect-frame.ts), or with --tiled the astronaut photograph repeated at its own size.
let img = await frame(W, H);
if (process.argv.includes('--tiled')) {
  const src = await readImage('test/fixtures/detect/astronaut.png');
  const data = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data[y * W + x] = src.data[(y % 512) * 512 + (x % 512)];
  img = { data, shape: [H, W], channels: 1, dtype: 'uint8' };
}
if (process.argv.includes('--after-profiled')) {
  // As bench/detect.ts does: a detector timing each kernel in its own pass runs first.
  const prof = new Detector(c, { gpu: ctx, profile: true });
  for (let r = 0; r < 20; r++) await prof.runGpu(img, ctx);
  prof.close();
}
if (process.argv.includes('--like-bench')) {
  // bench/detect.ts's order before its one-pass loop: a profiled detector, its survivor curve, 20 profiled runs,
  // a second of profiled runs; left alive, as there (or closed, with --close).
  const prof = new Detector(c, { gpu: ctx, profile: true });
  await prof.runGpu(img, ctx);
  await prof.survivorCurve(img);
  for (let r = 0; r < 20; r++) await prof.runGpu(img, ctx);
  for (const t0 = performance.now(); performance.now() - t0 < 1000;) await prof.runGpu(img, ctx);
  if (process.argv.includes('--close')) prof.close();
}
const det = new Detector(c, { gpu: ctx, profile: false });
await det.runGpu(img, ctx);
const plan = (det as unknown as { plans: Map<string, { gpu: DetectGpu; staging: GPUBuffer; schedule: ReductionSchedule }> }).plans.values().next().value!;
for (let r = 0; r < 12; r++) {
  const t0 = performance.now();
  const dev = await GpuImage.upload(ctx, img);
  const t1 = performance.now();
  const rec = new Recording(ctx, new KernelTimer(ctx, false), 'detect', true);
  await plan.gpu.recordPyramid(rec, dev.buffer);
  await plan.gpu.recordDetect(rec, plan.schedule, plan.staging);
  rec.submit();
  const t2 = performance.now();
  const { hits } = await plan.gpu.readDetect(plan.staging, plan.schedule);
  const t3 = performance.now();
  const boxes = finishDetections(hits, det.levelsFor(W, H), W, H, {});
  const t4 = performance.now();
  await ctx.finish();
  const t5 = performance.now();
  const full = await det.runGpu(img, ctx);
  const t6 = performance.now();
  dev.release();
  if (r >= 4) console.log(JSON.stringify({ upload: t1 - t0, recordSubmit: t2 - t1, readbackWait: t3 - t2, group: t4 - t3, finish: t5 - t4, hits: hits.length, boxes: boxes.length, runGpu: t6 - t5, runGpuKernels: full.timings.kernels.map((k) => k.ms) }));
}
ctx.destroy();

/**
 * Where the wall time of one GPU detection goes (host side): `node dist/bench/detect-phases.js [WxH]`.
 * Times upload, recording + submission, the wait for the readback, decoding the hits and grouping, for a
 * resident and a host frame, after a warm-up. Prints JSON lines.
 */
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import { readClassifier } from '../src/io/classifier.js';
import { readImage } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { Detector, finishDetections } from '../src/ops/detect/index.js';
import type { DetectGpu, ReductionSchedule } from '../src/ops/detect/gpu.js';

const [W, H] = (process.argv[2] ?? '1920x1080').split('x').map(Number);
const ctx = await createNodeGpuContext();
const c = await readClassifier('test/fixtures/detect/lbpcascade_frontalface.xml');
const src = await readImage('test/fixtures/detect/astronaut.png');
const data = new Uint8Array(W * H);
for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data[y * W + x] = src.data[(y % 512) * 512 + (x % 512)];
const img = { data, shape: [H, W] as [number, number], channels: 1 as const, dtype: 'uint8' as const };
const det = new Detector(c, { gpu: ctx, profile: false });
await det.runGpu(img, ctx);
const plan = (det as unknown as { plans: Map<string, { gpu: DetectGpu; staging: GPUBuffer; schedule: ReductionSchedule }> }).plans.values().next().value!;
for (let r = 0; r < 8; r++) {
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
  console.log(JSON.stringify({ upload: t1 - t0, recordSubmit: t2 - t1, readbackWait: t3 - t2, group: t4 - t3, finish: t5 - t4, hits: hits.length, boxes: boxes.length, runGpu: t6 - t5, runGpuKernels: full.timings.kernels.map((k) => k.ms) }));
}
ctx.destroy();

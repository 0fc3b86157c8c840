/**
 * Detection throughput on video, end to end: `node dist/bench/detect-video.js [--size 1920x1080] [--frames 240]
 * [--depths 1,2,3,4] [--procs 3] [--hold-clocks] [--out h100-detect300-video]`.
 *
 * The video: `frames` RGB frames of a pan across the benchmark frame (bench/detect-frame.ts, 4 pixels a frame),
 * stored once as raw rgb24 in a file — what ffmpeg hands the CLI on its pipe (the GPU machine has no ffmpeg, so
 * "decoding" is reading that file, 4 frames ahead, on libuv's threads while the detector works). Each frame goes
 * host RGB → upload → kernels → readback → grouped boxes, through `Detector.submitGpu` with `depth` frames in flight
 * (1: one at a time). Per depth: frames per second over the whole sequence, and per frame the wait for the
 * reader, the time in submitGpu (upload, recording, submission), in the completion (readback wait, grouping) and
 * the frame's kernels (one timestamp pair, measured while the other frames are in flight: "pipelined"). Also the
 * kernels of one frame alone ("isolated": one frame submitted and read back at a time) and the boxes of every
 * frame at every depth against depth 1 (must be equal).
 *
 * Each of `procs` child processes measures everything; the JSON has each process's medians and, over processes,
 * the median and spread ((max − min) / median). `--hold-clocks` keeps a CUDA context open beside the run
 * (bench/common.ts holdClocks: the H100's clock otherwise ramps with the load of a Vulkan-only process).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuContext } from '../src/core/gpu/context.js';
import type { Image } from '../src/core/image.js';
import { now } from '../src/core/timings.js';
import { readClassifier } from '../src/io/classifier.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { Recording } from '../src/core/gpu/recording.js';
import { KernelTimer } from '../src/core/gpu/timer.js';
import type { DetectGpu, ReductionSchedule } from '../src/ops/detect/gpu.js';
import { Detector, finishDetections, type PendingDetection } from '../src/ops/detect/index.js';
import { holdClocks, stat } from './common.js';
import { frame } from './detect-frame.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const [W, H] = arg('size', '1920x1080').split('x').map(Number);
const FRAMES = Number(arg('frames', '240'));
const DEPTHS = arg('depths', '1,2,3,4').split(',').map(Number);
const CASCADE = 'test/fixtures/detect/lbpcascade_frontalface.xml';
const STEP = 4; // pixels the pan moves per frame
const AHEAD = 4; // frames the reader keeps read ahead
const videoFile = join(tmpdir(), `imgpu-detect-video-${W}x${H}-${FRAMES}.rgb`);

/** Writes the video (raw rgb24 frames of a pan) once. */
async function makeVideo(): Promise<void> {
  if (existsSync(videoFile)) return;
  const ww = W + FRAMES * STEP;
  const wide = (await frame(ww, H)).data as Uint8Array;
  const f = await open(`${videoFile}.tmp`, 'w');
  const rgb = new Uint8Array(W * H * 3);
  for (let k = 0; k < FRAMES; k++) {
    for (let y = 0; y < H; y++) {
      const row = y * ww + k * STEP;
      for (let x = 0; x < W; x++) {
        const v = wide[row + x], o = 3 * (y * W + x);
        // A gray picture as RGB: cv2's gray weights sum to 2^15, so the detector's gray is the picture itself.
        rgb[o] = v; rgb[o + 1] = v; rgb[o + 2] = v;
      }
    }
    await f.write(rgb);
  }
  await f.close();
  renameSync(`${videoFile}.tmp`, videoFile);
}

/**
 * The video's frames, read AHEAD frames ahead into a ring of buffers. A frame's buffer is read into again
 * AHEAD + 2 frames later: submitGpu has copied it to the GPU by then.
 */
class RawFrames {
  private readonly bytes = W * H * 3;
  private readonly ring = Array.from({ length: AHEAD + 2 }, () => new Uint8Array(this.bytes));
  private readonly reads: Promise<Image>[] = [];
  private next = 0;
  private constructor(private readonly fh: FileHandle) {}

  static async open(): Promise<RawFrames> {
    const r = new RawFrames(await open(videoFile, 'r'));
    for (let i = 0; i < AHEAD; i++) r.readAhead();
    return r;
  }

  private readAhead(): void {
    const k = this.next++;
    if (k >= FRAMES) return;
    const data = this.ring[k % this.ring.length];
    this.reads.push(this.fh.read(data, 0, this.bytes, k * this.bytes).then(() => ({ data, shape: [H, W], channels: 3, dtype: 'uint8' }) as Image));
  }

  /** The next frame (undefined after the last), and the next read started. */
  async frame(): Promise<Image | undefined> {
    const r = this.reads.shift();
    this.readAhead();
    return r;
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

interface DepthRow {
  depth: number;
  fps: number;
  /** per frame, medians (ms) */
  readerWait: number;
  submit: number;
  upload: number;
  complete: number;
  readback: number;
  kernelsPipelined: number;
  kernelsPipelinedMax: number;
  sameBoxesAsDepth1: boolean;
}

/** One pass over the video with `depth` frames in flight; the boxes of every frame as JSON. */
async function runDepth(ctx: GpuContext, det: Detector, depth: number): Promise<{ row: Omit<DepthRow, 'sameBoxesAsDepth1'>; boxes: string[] }> {
  const reader = await RawFrames.open();
  const wait: number[] = [], submit: number[] = [], upload: number[] = [], complete: number[] = [], readback: number[] = [], kernels: number[] = [];
  const boxes: string[] = [];
  const pending: PendingDetection[] = [];
  const completeOne = async () => {
    const tc = now();
    const r = await pending.shift()!();
    complete.push(now() - tc);
    readback.push(r.timings.download);
    upload.push(r.timings.upload);
    kernels.push(r.timings.kernels.reduce((s, k) => s + k.ms, 0));
    boxes.push(JSON.stringify(r.output.detections));
  };
  const t0 = now();
  for (;;) {
    const tw = now();
    const img = await reader.frame();
    if (!img) break;
    wait.push(now() - tw);
    const ts = now();
    pending.push(await det.submitGpu(img, ctx));
    submit.push(now() - ts);
    if (pending.length >= depth) await completeOne();
  }
  while (pending.length) await completeOne();
  const wall = now() - t0;
  await reader.close();
  const med = (xs: number[]) => stat(xs).median;
  return {
    row: { depth, fps: FRAMES / (wall / 1000), readerWait: med(wait), submit: med(submit), upload: med(upload), complete: med(complete), readback: med(readback), kernelsPipelined: med(kernels), kernelsPipelinedMax: Math.max(...kernels) },
    boxes,
  };
}

/** Kernels of one frame alone (submitted, read back, then the next): one timestamp pair per frame. */
async function isolatedKernels(ctx: GpuContext, det: Detector, n: number): Promise<number[]> {
  const reader = await RawFrames.open();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const img = (await reader.frame())!;
    const r = await (await det.submitGpu(img, ctx))();
    out.push(r.timings.kernels.reduce((s, k) => s + k.ms, 0));
    // An isolated call: the GPU idles between frames as it would between single images.
    await new Promise((done) => setTimeout(done, 5));
  }
  await reader.close();
  return out;
}

/**
 * The host side of one frame, phase by phase, one frame at a time (20 frames): upload, recording, encoder.finish,
 * queue.submit, the wait for the readback, grouping — as submitGpu does them, timed apart.
 */
async function phases(ctx: GpuContext, det: Detector): Promise<Record<string, number>> {
  const plan = (det as unknown as { plans: Map<string, { gpu: DetectGpu; schedule: ReductionSchedule }> }).plans.values().next().value!;
  const staging = plan.gpu.staging();
  const reader = await RawFrames.open();
  const t: Record<string, number[]> = { upload: [], record: [], finish: [], submit: [], readbackWait: [], group: [] };
  for (let i = 0; i < Math.min(20, FRAMES); i++) {
    const img = (await reader.frame())!;
    const t0 = now();
    const input = await GpuImage.upload(ctx, img);
    const t1 = now();
    const rec = new Recording(ctx, new KernelTimer(ctx, false), 'detect', true);
    // (recordPyramid + recordDetect where recordFrame does not exist: this bench run against an older build.)
    const gpu = plan.gpu as DetectGpu & Partial<Pick<DetectGpu, 'recordFrame'>>;
    if (gpu.recordFrame) await gpu.recordFrame(rec, input.buffer, plan.schedule, staging);
    else {
      await gpu.recordPyramid(rec, input.buffer);
      await gpu.recordDetect(rec, plan.schedule, staging);
    }
    const t2 = now();
    const cmd = rec.finish();
    const t3 = now();
    ctx.device.queue.submit([cmd]);
    const t4 = now();
    input.release();
    const { hits } = await plan.gpu.readDetect(staging, plan.schedule);
    const t5 = now();
    finishDetections(hits, det.levelsFor(W, H), W, H, {});
    const t6 = now();
    for (const [k, v] of Object.entries({ upload: t1 - t0, record: t2 - t1, finish: t3 - t2, submit: t4 - t3, readbackWait: t5 - t4, group: t6 - t5 })) t[k].push(v);
  }
  await reader.close();
  staging.destroy();
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, stat(v.slice(2)).median]));
}

async function child(): Promise<void> {
  const ctx = await createNodeGpuContext();
  const det = new Detector(await readClassifier(CASCADE), { gpu: ctx, profile: false });
  // The first frame calibrates the schedule; then a second of frames at depth 2 to warm up.
  const warm = await RawFrames.open();
  await det.runGpu((await warm.frame())!, ctx);
  await warm.close();
  for (const t = now(); now() - t < 1000 || process.argv.includes('--quick');) {
    await runDepth(ctx, det, 2);
    if (process.argv.includes('--quick')) break;
  }
  const rows: DepthRow[] = [];
  let reference: string[] | undefined;
  for (const depth of [1, ...DEPTHS.filter((d) => d !== 1)]) {
    const { row, boxes } = await runDepth(ctx, det, depth);
    reference ??= boxes;
    rows.push({ ...row, sameBoxesAsDepth1: boxes.every((b, i) => b === reference![i]) && boxes.length === reference.length });
  }
  const iso = await isolatedKernels(ctx, det, Math.min(30, FRAMES));
  const hostPhases = await phases(ctx, det);
  console.log(JSON.stringify({ adapter: ctx.adapter, kernelsIsolated: stat(iso.slice(1)).median, hostPhases, rows: rows.filter((r) => r.depth === 1 || DEPTHS.includes(r.depth)) }));
  det.close();
  ctx.destroy();
}

/** Median over processes and the spread (max − min) / median. */
function across(xs: number[]): { median: number; spread: number; perProcess: number[] } {
  const s = stat(xs);
  return { median: s.median, spread: (Math.max(...xs) - Math.min(...xs)) / s.median, perProcess: xs };
}

async function parent(): Promise<void> {
  const procs = Number(arg('procs', '3'));
  const out = arg('out', 'detect-video');
  await makeVideo();
  const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
  const results: { adapter: unknown; kernelsIsolated: number; hostPhases: Record<string, number>; rows: DepthRow[] }[] = [];
  try {
    for (let p = 0; p < procs; p++) {
      const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--child', ...process.argv.slice(2)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      try {
        results.push(JSON.parse(r.stdout.trim().split('\n').pop() ?? ''));
      } catch {
        throw new Error(`detect-video process ${p} failed: ${r.stderr.slice(-2000)}`);
      }
      console.error(`detect-video: process ${p + 1}/${procs}: ${results[p].rows.map((x) => `depth ${x.depth} ${x.fps.toFixed(0)} fps`).join(', ')}; kernels isolated ${results[p].kernelsIsolated.toFixed(3)} ms`);
    }
  } finally {
    hold?.release();
  }
  const keys = ['fps', 'readerWait', 'submit', 'upload', 'complete', 'readback', 'kernelsPipelined', 'kernelsPipelinedMax'] as const;
  const depths = results[0].rows.map((r) => r.depth);
  const table = depths.map((depth) => {
    const per = results.map((r) => r.rows.find((x) => x.depth === depth)!);
    const metrics = Object.fromEntries(keys.map((k) => [k, across(per.map((x) => x[k]))])) as Record<(typeof keys)[number], ReturnType<typeof across>>;
    return { depth, ...metrics, sameBoxesAsDepth1: per.every((x) => x.sameBoxesAsDepth1) };
  });
  const doc = {
    date: new Date().toISOString(), node: process.version, adapter: results[0].adapter, size: `${W}x${H}`, frames: FRAMES, channels: 3,
    video: `raw rgb24 file, a pan of ${STEP} px/frame across bench/detect-frame.ts's picture, read ${AHEAD} frames ahead`,
    holdClocks: hold?.held ?? false, processes: procs, kernelsIsolated: across(results.map((r) => r.kernelsIsolated)),
    hostPhases: Object.fromEntries(Object.keys(results[0].hostPhases).map((k) => [k, across(results.map((r) => r.hostPhases[k]))])), table,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${out}.json`, JSON.stringify(doc, null, 2));
  for (const t of table) console.log(`depth ${t.depth}: ${t.fps.median.toFixed(1)} fps (spread ${(100 * t.fps.spread).toFixed(0)}%), per frame: submit ${t.submit.median.toFixed(2)} ms, complete ${t.complete.median.toFixed(2)}, readback ${t.readback.median.toFixed(2)}, kernels ${t.kernelsPipelined.median.toFixed(3)}; same boxes ${t.sameBoxesAsDepth1}`);
  console.log(`kernels isolated ${doc.kernelsIsolated.median.toFixed(3)} ms (spread ${(100 * doc.kernelsIsolated.spread).toFixed(0)}%)`);
  console.log(`one frame at a time, host phases (ms): ${Object.entries(doc.hostPhases).map(([k, v]) => `${k} ${v.median.toFixed(3)}`).join(', ')}`);
}

if (process.argv.includes('--child')) await child();
else await parent();

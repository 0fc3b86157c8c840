import { InvalidArgumentError } from '../errors.js';
import type { Image } from '../image.js';
import { makeTimings, now, type OpResult } from '../timings.js';
import type { GpuContext } from './context.js';
import { GpuImage } from './gpu-image.js';
import { Recording } from './recording.js';
import { KernelTimer } from './timer.js';

/**
 * Whether a GPU call profiles when its options do not say (GpuRunOptions.profile): the one place this default is
 * decided — runGpu and the step runner (core/op.ts runSteps) both resolve it here, and hand the steps the result.
 */
export const PROFILE_BY_DEFAULT = false;

export interface GpuRunOptions {
  /**
   * Wait for the GPU between phases so upload, kernels and download are timed separately, and time every
   * kernel in its own pass. Off, the phases overlap as they would in production, the kernels share one
   * compute pass (one timestamp pair), and only `total` and the fused kernel time are exact. Off by default: the
   * two extra waits cost a host→host call about 0.6–1 ms (8K equalize on the H100: 3.9–4.6 ms profiled against
   * 3.0–4.4 ms, `bench/results/h100-hosthost-final.json`); the CLI's single-image report and the playground ask
   * for it to show each kernel.
   * @default false
   */
  profile?: boolean;
  /** Host image to download the result into (reused across calls: no fresh allocation per frame). */
  out?: Image;
  /**
   * For a resident (GpuImage) input: false submits the work and returns at once, without waiting for the GPU
   * and without kernel times — the output can feed the next operation immediately (the queue runs in order),
   * so a chain of operations waits once, when its result is downloaded. @default true
   */
  wait?: boolean;
  /**
   * For a host input: return the output as a view of the mapped readback memory instead of copying it into a
   * host array — valid until the result's `release()` is called. @default false
   */
  view?: boolean;
  /**
   * For a resident input with `wait: false`: record the work into this recording, left unsubmitted, instead of a
   * recording of its own — the caller records more after it (a batch's photo: the operation and its JPEG encode in
   * one submission) and submits. Any other call submits what this recording holds first (Recording.flush), then
   * runs as usual, so the queue keeps the order the work was asked in.
   */
  recording?: Recording;
}

/** A device-resident result that can be brought back to the host (GpuImage, GpuCounts). */
export interface DeviceResult<H> {
  toHost(into?: H): Promise<H>;
  release(): void;
}

/** Records an operation's GPU work for `input` (and any extra inputs) and returns its (pooled) output. */
export type GpuBody<R> = (input: GpuImage, rec: Recording, extra: GpuImage[]) => Promise<R>;

export interface RunSpec {
  /** Further host or device images the operation reads (e.g. a mask); host ones are uploaded and timed. */
  extra?: (Image | GpuImage)[];
  /** Bring the result to the host even when the input was resident (small results such as histograms). */
  alwaysDownload?: boolean;
}

/**
 * Runs one GPU operation on a host image (upload → kernels → download, each timed) or on a resident GpuImage
 * (kernels only, the output stays on the device), inside error scopes that turn WebGPU errors into typed ones.
 */
export async function runGpu<H, R extends DeviceResult<H>>(
  ctx: GpuContext, src: Image | GpuImage, name: string, opts: GpuRunOptions & { out?: H }, body: GpuBody<R>, spec: RunSpec = {},
): Promise<OpResult<H | R>> {
  const profile = opts.profile ?? PROFILE_BY_DEFAULT;
  const t0 = now();
  for (const x of [src, ...(spec.extra ?? [])]) {
    if (x instanceof GpuImage && x.ctx !== ctx) throw new InvalidArgumentError(`${name}: a GpuImage belongs to another GPU context`);
  }
  return ctx.scoped(name, async () => {
    let upload = 0, download = 0;
    const uploaded: GpuImage[] = [];
    const toDevice = async (x: Image | GpuImage): Promise<GpuImage> => {
      if (x instanceof GpuImage) {
        x.assertLive();
        return x;
      }
      const g = await GpuImage.upload(ctx, x);
      uploaded.push(g);
      return g;
    };
    const tu = now();
    const input = await toDevice(src);
    const extra = await Promise.all((spec.extra ?? []).map(toDevice));
    if (uploaded.length) {
      if (profile) await ctx.finish();
      upload = now() - tu;
    }
    const queued = opts.wait === false && src instanceof GpuImage && !spec.alwaysDownload;
    const shared = queued ? opts.recording : undefined;
    if (!shared) opts.recording?.flush();
    const timer = new KernelTimer(ctx, !queued);
    try {
      const tk = now();
      const rec = shared ?? new Recording(ctx, timer, name, !profile);
      const out = await body(input, rec, extra);
      if (!shared) rec.submit();
      if (queued) {
        for (const g of uploaded) g.release();
        return { output: out, timings: makeTimings({ backend: 'gpu', upload, download: 0, kernels: [{ name: `${name} (queued, not awaited)`, ms: 0 }], kernelSource: 'wallclock', total: now() - t0 }) };
      }
      let kernelWall: number | undefined;
      if (profile || !timer.enabled) {
        await ctx.finish();
        kernelWall = now() - tk;
      }
      // The timestamps are read back while the output downloads (two waits for the device overlap).
      const stampedP = timer.read();
      stampedP.catch(() => undefined); // awaited below; if the download throws first, no unhandled rejection
      let output: H | R = out;
      let release: (() => void) | undefined;
      if (opts.view && !(src instanceof GpuImage) && out instanceof GpuImage) {
        const td = now();
        const v = await out.toHostView();
        download = now() - td;
        out.release();
        output = v.image as H;
        release = v.release;
      } else if (!(src instanceof GpuImage) || spec.alwaysDownload) {
        const td = now();
        output = await out.toHost(opts.out);
        download = now() - td;
        out.release();
      }
      for (const g of uploaded) g.release();
      const stamped = await stampedP;
      const kernels = stamped.length ? stamped : [{ name: `${name} (all kernels, wall clock)`, ms: kernelWall ?? 0 }];
      const timings = makeTimings({
        backend: 'gpu', upload, download, kernels, kernelSource: stamped.length ? 'timestamp' : 'wallclock', total: now() - t0,
        ...(rec.pieces > 1 ? { slabs: rec.pieces } : {}),
      });
      return release ? { output, timings, release } : { output, timings };
    } finally {
      timer.destroy();
    }
  });
}

import { InvalidArgumentError } from '../errors.js';
import type { Image } from '../image.js';
import { makeTimings, now, type OpResult } from '../timings.js';
import type { GpuContext } from './context.js';
import { GpuImage } from './gpu-image.js';
import { Recording } from './recording.js';
import { KernelTimer } from './timer.js';

export interface GpuRunOptions {
  /**
   * Wait for the GPU between phases so upload, kernels and download are timed separately, and time every
   * kernel in its own pass. Off, the phases overlap as they would in production, the kernels share one
   * compute pass (one timestamp pair), and only `total` and the fused kernel time are exact.
   * @default true
   */
  profile?: boolean;
  /** Host image to download the result into (reused across calls: no fresh allocation per frame). */
  out?: Image;
}

/** Records an operation's GPU work for `input` and returns its (pooled) output. */
export type GpuBody = (input: GpuImage, rec: Recording) => Promise<GpuImage>;

/**
 * Runs one GPU operation on a host image (upload → kernels → download, each timed) or on a resident GpuImage
 * (kernels only, the output stays on the device), inside error scopes that turn WebGPU errors into typed ones.
 */
export async function runGpu(ctx: GpuContext, src: Image | GpuImage, name: string, opts: GpuRunOptions, body: GpuBody): Promise<OpResult<Image | GpuImage>> {
  const profile = opts.profile ?? true;
  const t0 = now();
  if (src instanceof GpuImage && src.ctx !== ctx) throw new InvalidArgumentError(`${name}: the GpuImage belongs to another GPU context`);
  return ctx.scoped(name, async () => {
    let upload = 0, download = 0;
    const onHost = !(src instanceof GpuImage);
    let input: GpuImage;
    if (src instanceof GpuImage) {
      src.assertLive();
      input = src;
    } else {
      const tu = now();
      input = await GpuImage.upload(ctx, src);
      if (profile) await ctx.finish();
      upload = now() - tu;
    }
    const timer = new KernelTimer(ctx, true);
    try {
      const tk = now();
      const rec = new Recording(ctx, timer, name, !profile);
      const out = await body(input, rec);
      rec.submit();
      let kernelWall: number | undefined;
      if (profile || !timer.enabled) {
        await ctx.finish();
        kernelWall = now() - tk;
      }
      let output: Image | GpuImage = out;
      if (onHost) {
        const td = now();
        output = await out.toHost(opts.out);
        download = now() - td;
        out.release();
        input.release();
      }
      const stamped = await timer.read();
      const kernels = stamped.length ? stamped : [{ name: `${name} (all kernels, wall clock)`, ms: kernelWall ?? 0 }];
      const timings = makeTimings({
        backend: 'gpu', upload, download, kernels, kernelSource: stamped.length ? 'timestamp' : 'wallclock', total: now() - t0,
      });
      return { output, timings };
    } finally {
      timer.destroy();
    }
  });
}

/**
 * Video frames and images to the GPU without a canvas round trip. A frame of a <video> (camera or file) or a
 * VideoFrame is imported as an external texture (no copy where the browser can share the decoder's memory); an
 * ImageBitmap, or a frame whose import failed, is copied into a texture with copyExternalImageToTexture (from
 * the video, else from an ImageBitmap of the frame: Chromium copies video frames only where its compositor shares
 * the GPU's memory, e.g. not on SwiftShader without --use-angle=swiftshader). A small
 * kernel then packs the texture's pixels as 8-bit RGBA into a storage buffer, the layout of a host RGBA image, so
 * the detector (which converts RGB(A) to gray as cv2 does) takes it as it takes an uploaded image. Where both
 * fail, the frame is drawn into a 2D canvas, read back and uploaded (the round trip the other two avoid); the
 * page says which path ran.
 */
import type { GpuContext } from '../src/browser.js';
import { GpuImage } from '../src/browser.js';
import { acquireStorage } from '../src/browser.js';
import { imageFrom, type Image } from '../src/browser.js';

export type UploadPath = 'importExternalTexture' | 'copyExternalImageToTexture' | 'createImageBitmap + copyExternalImageToTexture' | 'canvas';

/** What a frame can come from: a playing video element, a WebCodecs frame, or a decoded image. */
export type FrameSource = HTMLVideoElement | VideoFrame | ImageBitmap;

/** One packing kernel per texture type: each pixel's RGBA as 4 bytes (pack4x8unorm: round(v·255), exact for 8-bit textures). */
function packWgsl(external: boolean): string {
  return `
@group(0) @binding(0) var src: ${external ? 'texture_external' : 'texture_2d<f32>'};
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
override W: u32 = 1u;
override H: u32 = 1u;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x >= W || g.y >= H) { return; }
  dst[g.y * W + g.x] = pack4x8unorm(textureLoad(src, g.xy${external ? '' : ', 0'}));
}`;
}

/** A frame's pixels read through a 2D canvas as RGBA (the CPU path's input, and the last-resort GPU upload). */
export function readPixels(source: FrameSource, W: number, H: number): Image {
  const c = new OffscreenCanvas(W, H);
  const g = c.getContext('2d', { willReadFrequently: true })!;
  g.drawImage(source, 0, 0, W, H);
  const rgba = g.getImageData(0, 0, W, H).data;
  return imageFrom(new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.byteLength), [H, W], 4);
}

export interface Uploaded {
  image: GpuImage;
  path: UploadPath;
  ms: number;
}

/**
 * Uploads frames by the first path that works for their kind of source, remembering a path that failed (with
 * why) so that later frames do not try it again.
 */
export class FrameUploader {
  /** Paths that failed on this browser, with the reason (shown in the page). */
  readonly failed = new Map<UploadPath, string>();
  private texture?: GPUTexture;

  constructor(private readonly ctx: GpuContext) {}

  async upload(source: FrameSource, W: number, H: number): Promise<Uploaded> {
    const t0 = performance.now();
    for (const path of this.pathsFor(source)) {
      if (this.failed.has(path)) continue;
      try {
        const image = path === 'canvas' ? await GpuImage.upload(this.ctx, readPixels(source, W, H))
          : path === 'createImageBitmap + copyExternalImageToTexture' ? await this.packBitmap(source, W, H)
            : await this.pack(source, W, H, path === 'importExternalTexture');
        return { image, path, ms: performance.now() - t0 };
      } catch (e) {
        if (path === 'canvas') throw e;
        this.failed.set(path, (e as Error).message.split('\n')[0]);
      }
    }
    throw new Error('no upload path'); // unreachable: the canvas path is always tried last and throws its own error
  }

  /** External textures take video elements and VideoFrames only; an ImageBitmap is copied. */
  private pathsFor(source: FrameSource): UploadPath[] {
    return source instanceof ImageBitmap ? ['copyExternalImageToTexture', 'canvas']
      : ['importExternalTexture', 'copyExternalImageToTexture', 'createImageBitmap + copyExternalImageToTexture', 'canvas'];
  }

  private async packBitmap(source: FrameSource, W: number, H: number): Promise<GpuImage> {
    const bmp = await createImageBitmap(source, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
    try {
      return await this.pack(bmp, W, H, false);
    } finally {
      bmp.close();
    }
  }

  /** The texture the copy path writes into, kept while frames keep their size. */
  private copyTarget(W: number, H: number): GPUTexture {
    const t = this.texture;
    if (t && t.width === W && t.height === H) return t;
    t?.destroy();
    this.texture = this.ctx.device.createTexture({
      label: 'frame', size: [W, H], format: 'rgba8unorm',
      usage: GPUTextureUsage.COPY_DST | GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.RENDER_ATTACHMENT,
    });
    return this.texture;
  }

  /**
   * The frame as a texture (imported or copied), packed into a fresh RGBA buffer. Everything after the pipeline
   * is ready runs in one task: an external texture expires when the task that imported it ends.
   */
  private async pack(source: FrameSource, W: number, H: number, external: boolean): Promise<GpuImage> {
    const ctx = this.ctx;
    const pipeline = await ctx.pipeline('frame upload', packWgsl(external), 'main', { W, H });
    const out = acquireStorage(ctx, W * H * 4, 'frame');
    try {
      await ctx.scoped(external ? 'importExternalTexture' : 'copyExternalImageToTexture', async () => {
        let texture: GPUExternalTexture | GPUTextureView;
        if (external) {
          texture = ctx.device.importExternalTexture({ source: source as HTMLVideoElement | VideoFrame });
        } else {
          const target = this.copyTarget(W, H);
          ctx.device.queue.copyExternalImageToTexture({ source }, { texture: target }, [W, H]);
          texture = target.createView();
        }
        const bind = ctx.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: texture }, { binding: 1, resource: { buffer: out } }] });
        const enc = ctx.device.createCommandEncoder({ label: 'frame upload' });
        const pass = enc.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bind);
        pass.dispatchWorkgroups(Math.ceil(W / 8), Math.ceil(H / 8));
        pass.end();
        ctx.device.queue.submit([enc.finish()]);
      });
    } catch (e) {
      ctx.buffers.release(out);
      throw e;
    }
    return new GpuImage(ctx, out, [H, W], 4, 'uint8');
  }

  destroy(): void {
    this.texture?.destroy();
  }
}

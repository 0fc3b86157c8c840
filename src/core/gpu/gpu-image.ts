import { InvalidArgumentError } from '../errors.js';
import { bytesPerElement, createImage, pixelCount, validateImage, type Channels, type Dtype, type Image, type Shape } from '../image.js';
import type { GpuContext } from './context.js';
import { download, downloadView, upload } from './transfer.js';

/**
 * An image resident in one device's memory. Operations given a GpuImage return a GpuImage and never
 * download; `toHost()` is the one explicit way back.
 */
export class GpuImage {
  private released = false;
  constructor(
    readonly ctx: GpuContext,
    readonly buffer: GPUBuffer,
    readonly shape: Shape,
    readonly channels: Channels,
    readonly dtype: Dtype,
  ) {}

  get byteLength(): number {
    return pixelCount(this.shape) * this.channels * bytesPerElement(this.dtype);
  }

  /** Uploads a host image (explicit, timed by the caller). */
  static async upload(ctx: GpuContext, img: Image): Promise<GpuImage> {
    validateImage(img);
    const buf = await upload(ctx, img.data);
    return new GpuImage(ctx, buf, [...img.shape] as Shape, img.channels, img.dtype);
  }

  /** Downloads into `into` (checked to match) or a new host image. */
  async toHost(into?: Image): Promise<Image> {
    this.assertLive();
    if (into && (into.dtype !== this.dtype || into.channels !== this.channels || into.shape.join() !== this.shape.join())) {
      throw new InvalidArgumentError(`out image is ${into.shape.join('×')}×${into.channels} ${into.dtype}, the result is ${this.shape.join('×')}×${this.channels} ${this.dtype}`);
    }
    const out = into ?? createImage(this.shape, this.dtype, this.channels);
    await download(this.ctx, this.buffer, out.data);
    return out;
  }

  /**
   * The pixels as a view of mapped readback memory instead of a copy (the copy out of mapped memory is a third of
   * an 8K round trip). The view is valid until `release()`; this GpuImage stays usable.
   */
  async toHostView(): Promise<{ image: Image; release(): void }> {
    this.assertLive();
    const n = pixelCount(this.shape) * this.channels;
    const v = await downloadView(this.ctx, this.buffer, this.byteLength);
    const Ctor = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array }[this.dtype];
    return { image: { data: new Ctor(v.bytes, 0, n), shape: [...this.shape] as Shape, channels: this.channels, dtype: this.dtype }, release: v.release };
  }

  /** Returns the buffer to the context's pool; the GpuImage must not be used afterwards. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.ctx.buffers.release(this.buffer);
  }

  assertLive(): void {
    if (this.released) throw new InvalidArgumentError('this GpuImage was released');
    this.ctx.assertAlive();
  }
}

export function isGpuImage(x: unknown): x is GpuImage {
  return x instanceof GpuImage;
}

import { InvalidArgumentError } from '../errors.js';
import { bytesPerElement, createImage, pixelCount, validateImage, type Channels, type Dtype, type Geometry, type Image, type Shape } from '../image.js';
import type { GpuContext } from './context.js';
import { download, downloadView, stagingView, upload } from './transfer.js';

/**
 * An image resident in one device's memory. Operations given a GpuImage return a GpuImage and never
 * download; `toHost()` is the one explicit way back.
 */
export class GpuImage {
  private released = false;
  /**
   * Where the voxels lie in the world (a scan: DICOM, NIfTI), as on a host Image: kept by upload, by operations whose
   * output has the input's shape, and by toHost/toHostView, so that a volume written back keeps its affine.
   */
  geometry?: Geometry;
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
    const g = new GpuImage(ctx, buf, [...img.shape] as Shape, img.channels, img.dtype);
    if (img.geometry) g.geometry = img.geometry;
    return g;
  }

  /**
   * A host image whose pixels live in mapped upload memory: fill `image.data` (decode into it, read a frame into
   * it), then `upload()` returns the GpuImage without copying them again. `image.data` is detached after
   * `upload()` or `discard()`. For a host array that exists already, GpuImage.upload (one copy) is the way.
   */
  static async staging(ctx: GpuContext, shape: Shape, dtype: Dtype, channels: Channels = 1): Promise<StagedImage> {
    const n = pixelCount(shape) * channels;
    if (!(n > 0)) throw new InvalidArgumentError(`cannot stage an empty ${shape.join('×')} image`);
    const v = await stagingView(ctx, n * bytesPerElement(dtype));
    const Ctor = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array }[dtype];
    const image: Image = { data: new Ctor(v.bytes, 0, n), shape: [...shape] as Shape, channels, dtype };
    return {
      image,
      upload: () => new GpuImage(ctx, v.submit(), [...shape] as Shape, channels, dtype),
      discard: () => v.discard(),
    };
  }

  /** Downloads into `into` (checked to match) or a new host image. */
  async toHost(into?: Image): Promise<Image> {
    this.assertLive();
    if (into && (into.dtype !== this.dtype || into.channels !== this.channels || into.shape.join() !== this.shape.join())) {
      throw new InvalidArgumentError(`out image is ${into.shape.join('×')}×${into.channels} ${into.dtype}, the result is ${this.shape.join('×')}×${this.channels} ${this.dtype}`);
    }
    const out = into ?? createImage(this.shape, this.dtype, this.channels);
    await download(this.ctx, this.buffer, out.data);
    if (this.geometry && !into) out.geometry = this.geometry;
    return out;
  }

  /**
   * The pixels as a view of mapped readback memory instead of a copy (the copy out of mapped memory is a third of
   * an 8K round trip). The view is valid until `release()`; this GpuImage stays usable.
   */
  async toHostView(): Promise<{ image: Image; release: () => void }> {
    this.assertLive();
    const n = pixelCount(this.shape) * this.channels;
    const v = await downloadView(this.ctx, this.buffer, this.byteLength);
    const Ctor = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array }[this.dtype];
    const image: Image = { data: new Ctor(v.bytes, 0, n), shape: [...this.shape] as Shape, channels: this.channels, dtype: this.dtype };
    if (this.geometry) image.geometry = this.geometry;
    return { image, release: v.release };
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

/** Mapped upload memory shaped as an image (GpuImage.staging). */
export interface StagedImage {
  /** Write the pixels here; valid until upload() or discard(). */
  readonly image: Image;
  /** Submits the copy to the device and returns the resident image. */
  upload(): GpuImage;
  /** Gives the memory back without uploading. */
  discard(): void;
}


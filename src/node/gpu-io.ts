// readImage / writeImage as the Node entry exports them: io's, plus a resident GpuImage in and out. A JPEG is read
// straight to the GPU and written from it through the native codec's GPU halves (node/jpeg-gpu.ts,
// node/jpeg-encode-gpu.ts); that joins io to the GPU context, so it lives here, above io (io cannot import node/).
import { stat } from 'node:fs/promises';
import { InvalidArgumentError, optionRef } from '../core/errors.js';
import type { GpuContext } from '../core/gpu/context.js';
import { GpuImage } from '../core/gpu/gpu-image.js';
import type { Image } from '../core/image.js';
import {
  checkFolderWritable, checkFormatHolds, checkWriteOptions, decodeImageFile, formatOfFile, isJpegFormat, readImage as readHostImage,
  readImageBytes, writeAtomically, writeImage as writeHostImage, type ReadOptions, type WriteOptions,
} from '../io/index.js';
import { isJpeg } from '../io/jpeg.js';
import { encodeJpegGpu, gpuJpegEncodable, nativeCoefEncoder, nativeCoefEncoderProblem } from './jpeg-encode-gpu.js';
import { encodeJpegFromGpu, JPEG_PATHS, readJpegToGpu, resolveJpegPath, type JpegPathOption } from './jpeg-gpu.js';

/** readImage into a resident image: the options of a host read, the context, and the JPEG path. */
export interface ReadToGpuOptions extends Omit<ReadOptions, 'alloc'> {
  /** The GPU context the image is read into: readImage then returns a resident GpuImage of it. */
  gpu: GpuContext;
  /**
   * Where a JPEG's decoding arithmetic runs, as the CLI's `--jpeg`: 'gpu' (entropy decoding on a CPU thread, the
   * rest in GPU kernels), 'cpu' (libjpeg-turbo, into mapped upload memory), 'auto' ('gpu' on a hardware adapter, else 'cpu': resolveJpegPath).
   * The pixels are cv2.imread's either way. Other formats are read on the host and uploaded once. @default 'auto'
   */
  jpeg?: JpegPathOption;
}

/** writeImage options: a host write's, and for a resident image the JPEG path (and, to check, its context). */
export interface WriteFromGpuOptions extends WriteOptions {
  /**
   * For a resident (GpuImage) JPEG output, as the CLI's `--jpeg`: 'gpu' (colour conversion, DCT, quantization
   * and, by default, entropy coding on the GPU: encodeJpegGpu), 'cpu' (libjpeg-turbo from mapped readback memory), 'auto' (as reading: resolveJpegPath).
   * The file is cv2.imwrite's byte for byte either way. Other formats: one download, then the host writer.
   * @default 'auto'
   */
  jpeg?: JpegPathOption;
  /** The context a resident image must belong to (readImage's `gpu`, so one options object serves both). */
  gpu?: GpuContext;
}

/** Reasons already said in this process: a fallback is said once, not once per image. */
const said = new Set<string>();

/** Says once per reason that work asked of the GPU JPEG path ran on the CPU (the result is the same). */
function warnFallback(why: string, outcome: string): void {
  if (said.has(why)) return;
  said.add(why);
  process.emitWarning(`${optionRef('jpeg', 'gpu')}: ${why}; ${outcome}`, { type: 'ImgpuWarning', code: 'IMGPU_JPEG_GPU_FALLBACK' });
}

function checkJpegOption(jpeg: unknown): void {
  if (jpeg !== undefined && !(JPEG_PATHS as readonly unknown[]).includes(jpeg)) {
    throw new InvalidArgumentError(`${optionRef('jpeg')} must be one of ${JPEG_PATHS.map((p) => `'${p}'`).join(', ')}, got ${JSON.stringify(jpeg)}`);
  }
}

/**
 * io's readImage (see there: formats, gray, EXIF orientation, limits); with `gpu`, into a resident GpuImage of that
 * context: a JPEG decoded straight into GPU memory (the `jpeg` path; pixels identical to cv2.imread), any other
 * format (or a JPEG the native codec leaves to sharp) read on the host and uploaded once.
 */
export function readImage(path: string, opts: ReadToGpuOptions): Promise<GpuImage>;
export function readImage(path: string, opts?: ReadOptions & { gpu?: undefined }): Promise<Image>;
export function readImage(path: string, opts?: ReadOptions & { gpu?: GpuContext; jpeg?: JpegPathOption }): Promise<Image | GpuImage>;
export async function readImage(path: string, opts: ReadOptions & { gpu?: GpuContext; jpeg?: JpegPathOption } = {}): Promise<Image | GpuImage> {
  const { gpu, jpeg, ...host } = opts;
  if (!gpu) return readHostImage(path, host);
  checkJpegOption(jpeg);
  gpu.assertAlive();
  // A folder is a DICOM series: io reads it whole.
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return GpuImage.upload(gpu, await readHostImage(path, host));
  const buf = await readImageBytes(path);
  // The registry decides the format as the host reader does (a .npy is a .npy whatever its bytes); a JPEG goes to the GPU.
  if (formatOfFile(path, buf).name === 'jpeg' && isJpeg(buf)) {
    const onGpu = await readJpegToGpu(gpu, buf, path, host.gray ?? false, { jpeg, async: true, maxPixels: host.maxPixels, failOn: host.failOn });
    if (resolveJpegPath(jpeg, gpu) === 'gpu' && onGpu?.jpeg !== 'gpu') {
      warnFallback(onGpu?.fallback ?? 'this JPEG is one the GPU decoder leaves to the host (no native codec, CMYK, or an EXIF orientation after a fallback)', 'decoded on the CPU (the same pixels)');
    }
    if (onGpu) return onGpu.image;
  }
  return GpuImage.upload(gpu, await decodeImageFile(buf, path, host));
}

/** A resident image's JPEG on the `jpeg` path, or undefined where the host writer must encode it (RGBA, no codec). */
async function encodeResidentJpeg(img: GpuImage, quality: number, jpeg: JpegPathOption | undefined): Promise<Uint8Array | undefined> {
  const gpu = resolveJpegPath(jpeg, img.ctx) === 'gpu' && gpuJpegEncodable(img);
  if (gpu && nativeCoefEncoder()) return encodeJpegGpu(img, { quality, async: true });
  if (gpu) warnFallback(`the GPU JPEG encoder's entropy coder is not available (${nativeCoefEncoderProblem()})`, 'encoded on the CPU (the same bytes)');
  return encodeJpegFromGpu(img, quality, { async: true });
}

/**
 * io's writeImage (see there: formats by extension, written atomically); a resident GpuImage is written from the
 * GPU: JPEG encoded on the `jpeg` path (the bytes cv2.imwrite writes), any other format downloaded once (as a view
 * of mapped readback memory, no further copy) and given to the host writer. The GpuImage stays resident and usable.
 * A GpuImage of another context than `gpu`, or one released, is an InvalidArgumentError, checked before any work.
 */
export async function writeImage(path: string, img: Image | GpuImage, opts: WriteFromGpuOptions = {}): Promise<void> {
  const { jpeg, gpu, ...write } = opts;
  if (!(img instanceof GpuImage)) return writeHostImage(path, img, write);
  checkWriteOptions(write);
  checkJpegOption(jpeg);
  if (gpu && img.ctx !== gpu) throw new InvalidArgumentError(`writeImage: the GpuImage belongs to another GPU context than ${optionRef('gpu')}`);
  img.assertLive();
  const ext = checkFormatHolds(path, img);
  await checkFolderWritable(path);
  if (isJpegFormat(ext)) {
    const bytes = await encodeResidentJpeg(img, write.quality ?? 95, jpeg);
    if (bytes) return writeAtomically(path, bytes);
  }
  const view = await img.toHostView();
  try {
    await writeHostImage(path, view.image, write);
  } finally {
    view.release();
  }
}

import { EmptyImageError, InvalidArgumentError, UnsupportedDtypeError } from './errors.js';

/** Element types imgpu stores. */
export type Dtype = 'uint8' | 'uint16' | 'float32';
export type PixelArray = Uint8Array | Uint16Array | Float32Array;
export type Shape2D = [h: number, w: number];
export type Shape3D = [d: number, h: number, w: number];
export type Shape = Shape2D | Shape3D;
export type Channels = 1 | 3 | 4;

/**
 * A host image or volume: row-major, x fastest, channels interleaved. 3D volumes are the same type with a
 * depth axis. `data.length === d·h·w·channels`.
 */
export interface Image<A extends PixelArray = PixelArray> {
  data: A;
  shape: Shape;
  channels: Channels;
  dtype: Dtype;
  /** Where the voxels lie in the world (scans: DICOM, NIfTI); carried through operations to the writer. */
  geometry?: Geometry;
  /** What the decoder warned of: a damaged file read with ReadOptions.failOn below 'warning' (io/jpeg.ts). */
  warnings?: readonly string[];
}

/**
 * Voxel geometry as itk-wasm's Image holds it, in NIfTI's RAS+ world (millimetres; DICOM's LPS is converted on
 * reading): the world position of voxel (i, j, k) — i along x (columns), j along y (rows), k along z (slices) —
 * is origin + direction · diag(spacing) · (i, j, k).
 */
export interface Geometry {
  /** voxel size along x, y, z (mm) */
  spacing: [number, number, number];
  /** world position of voxel (0, 0, 0) */
  origin: [number, number, number];
  /** 3×3, row-major; column c is the world direction of axis c (x, y, z) */
  direction: number[];
}

const CTORS = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array } as const;
const BYTES: Record<Dtype, number> = { uint8: 1, uint16: 2, float32: 4 };

export function bytesPerElement(dtype: Dtype): number {
  return BYTES[dtype];
}

export function dtypeOf(data: PixelArray): Dtype {
  if (data instanceof Uint8Array) return 'uint8';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Float32Array) return 'float32';
  throw new UnsupportedDtypeError('pixel data must be a Uint8Array, Uint16Array or Float32Array');
}

/** Number of pixels (not elements): d·h·w. */
export function pixelCount(shape: Shape): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** `[h, w]`: a 2D shape, or the size of a volume's planes (its last two axes). */
export function planeSize(shape: Shape): Shape2D {
  return shape.length === 2 ? [shape[0], shape[1]] : [shape[1], shape[2]];
}

/** The `[h, w]` of a 2D image or a volume of depth 1; a deeper volume is refused, naming `what` (work defined in 2D). */
export function plane2D(shape: Shape, what: string): Shape2D {
  if (shape.length === 3 && shape[0] !== 1) throw new InvalidArgumentError(`${what} works on 2D images, got a ${shape.join('×')} volume`);
  return planeSize(shape);
}

/** `[d, h, w]` for any rank (2D images have depth 1). */
export function asShape3D(shape: Shape): Shape3D {
  return shape.length === 2 ? [1, shape[0], shape[1]] : shape;
}

/**
 * Allocates pixel storage. Uses a SharedArrayBuffer where the platform allows it (Node, cross-origin
 * isolated pages), so the CPU worker pool can work on it without copies.
 */
export function allocPixels(dtype: Dtype, length: number): PixelArray {
  const Ctor = CTORS[dtype] as unknown as new (b: ArrayBufferLike | number) => PixelArray;
  const bytes = length * BYTES[dtype];
  if (typeof SharedArrayBuffer !== 'undefined' && (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== false) {
    return new Ctor(new SharedArrayBuffer(bytes));
  }
  return new Ctor(length);
}

/** A new zero-filled image. */
export function createImage(shape: Shape, dtype: Dtype, channels: Channels = 1): Image {
  return { data: allocPixels(dtype, pixelCount(shape) * channels), shape: [...shape] as Shape, channels, dtype };
}

/** Wraps existing data as an image after checking that the length matches the shape. */
export function imageFrom(data: PixelArray, shape: Shape, channels: Channels = 1): Image {
  const img: Image = { data, shape: [...shape] as Shape, channels, dtype: dtypeOf(data) };
  validateImage(img);
  return img;
}

/** Throws a typed error unless `img` is a well-formed, non-empty image. */
export function validateImage(img: Image, what = 'image'): void {
  if (!img || typeof img !== 'object' || !img.shape || !img.data) {
    throw new InvalidArgumentError(`${what} must be an Image { data, shape, channels, dtype }`);
  }
  const shape = img.shape as number[];
  if (shape.length !== 2 && shape.length !== 3) {
    throw new InvalidArgumentError(`${what} must have shape [h, w] or [d, h, w], got [${shape.join(', ')}]`);
  }
  for (const n of img.shape) {
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${what} has an invalid shape [${img.shape.join(', ')}]`);
  }
  if (![1, 3, 4].includes(img.channels)) throw new UnsupportedDtypeError(`${what} has ${img.channels} channels; imgpu supports 1, 3 or 4`);
  if (dtypeOf(img.data) !== img.dtype) throw new InvalidArgumentError(`${what}: dtype '${img.dtype}' does not match its ${img.data.constructor.name}`);
  const n = pixelCount(img.shape);
  if (n === 0) throw new EmptyImageError(`${what} is empty (shape [${img.shape.join(', ')}]): nothing to process`);
  if (img.data.length !== n * img.channels) {
    throw new InvalidArgumentError(`${what}: data has ${img.data.length} elements but shape [${img.shape.join(', ')}] × ${img.channels} channels needs ${n * img.channels}`);
  }
}

/** Requires one of the listed dtypes. */
export function requireDtype(img: { dtype: Dtype }, allowed: readonly Dtype[], op: string): void {
  if (!allowed.includes(img.dtype)) {
    throw new UnsupportedDtypeError(`${op} supports ${allowed.join(' and ')} images, got ${img.dtype}`);
  }
}

/**
 * OpenCV's fixed-point RGB→gray (cv::cvtColor COLOR_RGB2GRAY for 8- and 16-bit images, imgproc
 * color_rgb.simd.hpp): gray = (R·9798 + G·19235 + B·3735 + 2^14) >> 15. The weights are 0.299/0.587/0.114 scaled
 * by 2^15 and sum to exactly 2^15, so the sum fits 32 bits for 16-bit input. (OpenCV's 14-bit weights
 * 4899/9617/1868 belong to its YCrCb conversion — core/colour.ts — and differ from cvtColor's gray by one level on
 * some pixels, e.g. RGB (197, 175, 148): 178 with 14 bits, 179 in cvtColor.) The one definition: the CPU below and
 * the WGSL of core/gpu/wgsl/gray.ts use these.
 */
export const GRAY_WEIGHTS = { r: 9798, g: 19235, b: 3735, shift: 15 } as const;

/** The gray level of one 8- or 16-bit RGB pixel, as cv2.cvtColor(RGB2GRAY). */
export function grayOf(r: number, g: number, b: number): number {
  const { r: wr, g: wg, b: wb, shift } = GRAY_WEIGHTS;
  return (r * wr + g * wg + b * wb + (1 << (shift - 1))) >>> shift;
}

/**
 * Converts a 3- or 4-channel image (RGB or RGBA order; alpha ignored) to one gray channel: 8- and 16-bit images
 * bit-identical to `cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)`; float32 computes 0.299·R + 0.587·G + 0.114·B in
 * float32, which can differ from cv2 by up to two units in the last place of 0.299·|R| + 0.587·|G| + 0.114·|B| (cv2
 * fuses the multiply-adds, grouped by its SIMD width; measured on 10^6 pixels, docs/parity.md). Gray images are
 * returned as they are.
 */
export function toGray(img: Image): Image {
  if (img.channels === 1) return img;
  const n = pixelCount(img.shape);
  const out = createImage(img.shape, img.dtype, 1);
  const src = img.data, dst = out.data, c = img.channels;
  if (img.dtype === 'float32') {
    const r = Math.fround(0.299), g = Math.fround(0.587), b = Math.fround(0.114);
    for (let i = 0, j = 0; i < n; i++, j += c) {
      dst[i] = Math.fround(Math.fround(Math.fround(src[j] * r) + Math.fround(src[j + 1] * g)) + Math.fround(src[j + 2] * b));
    }
  } else {
    for (let i = 0, j = 0; i < n; i++, j += c) dst[i] = grayOf(src[j], src[j + 1], src[j + 2]);
  }
  return out;
}

/**
 * The channels of an interleaved colour image as gray images of its shape (R, G, B[, A] in order): how operations
 * that OpenCV applies to each channel alone (filters, morphology) see a colour image. Gray images: themselves.
 */
export function channelPlanes(img: Image): Image[] {
  const c = img.channels, n = pixelCount(img.shape);
  if (c === 1) return [img];
  return Array.from({ length: c }, (_, k) => {
    const plane = createImage(img.shape, img.dtype, 1);
    const src = img.data, dst = plane.data;
    for (let i = 0, j = k; i < n; i++, j += c) dst[i] = src[j];
    return { ...plane, geometry: img.geometry };
  });
}

/** Gray images of one shape and type interleaved as the channels of one image (channelPlanes' inverse). */
export function interleavePlanes(planes: Image[]): Image {
  const c = planes.length as Channels, n = pixelCount(planes[0].shape);
  if (c === 1) return planes[0];
  const out = createImage(planes[0].shape, planes[0].dtype, c);
  const dst = out.data;
  planes.forEach((p, k) => {
    const src = p.data;
    for (let i = 0, j = k; i < n; i++, j += c) dst[j] = src[i];
  });
  return { ...out, geometry: planes[0].geometry };
}

/** The caller's `out` image holding `result`'s pixels (copied unless they are already there), or `result`. */
export function intoOut(result: Image, out?: Image): Image {
  if (!out) return result;
  if (out.data !== result.data) out.data.set(result.data);
  return out;
}

/** Checks that a caller's `out` image can hold a result shaped like `like` (and is not the input itself). */
export function checkOut(out: Image, like: Image): void {
  validateImage(out, 'out');
  if (out.dtype !== like.dtype || out.channels !== like.channels || out.shape.join() !== like.shape.join()) {
    throw new InvalidArgumentError(`out image is ${out.shape.join('×')}×${out.channels} ${out.dtype}; the result is ${like.shape.join('×')}×${like.channels} ${like.dtype}`);
  }
}

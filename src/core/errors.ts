/**
 * The one error hierarchy of imgpu. Every error says what went wrong and what the user can do about it;
 * `exitCode` is what the CLI exits with, `code` a stable machine-readable name.
 */
export class ImgpuError extends Error {
  readonly code: string = 'IMGPU_ERROR';
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A parameter or an image does not meet an operation's requirements (wrong rank, size, dtype, range). */
export class InvalidArgumentError extends ImgpuError {
  override readonly code: string = 'INVALID_ARGUMENT';
  override readonly exitCode: number = 2;
}

/** The image has no pixels. */
export class EmptyImageError extends InvalidArgumentError {
  override readonly code: string = 'EMPTY_IMAGE';
}

/** The operation does not support this element type or channel count. */
export class UnsupportedDtypeError extends InvalidArgumentError {
  override readonly code: string = 'UNSUPPORTED_DTYPE';
}

/** A file could not be found, read or written. */
export class FileAccessError extends ImgpuError {
  override readonly code: string = 'FILE_ACCESS';
  override readonly exitCode: number = 3;
}

/** A file exists but is not a readable image of a supported format (or is corrupt). */
export class UnsupportedFormatError extends ImgpuError {
  override readonly code: string = 'UNSUPPORTED_FORMAT';
  override readonly exitCode: number = 3;
}

/** No WebGPU adapter could be acquired (no GPU, no driver, or the named adapter does not exist). */
export class NoGpuAdapterError extends ImgpuError {
  override readonly code: string = 'NO_GPU_ADAPTER';
  override readonly exitCode: number = 4;
}

/** The GPU device was lost (driver reset, device destroyed, process-wide GPU failure). */
export class GpuDeviceLostError extends ImgpuError {
  override readonly code: string = 'GPU_DEVICE_LOST';
  override readonly exitCode: number = 5;
}

/** The GPU could not allocate the memory an operation needs. */
export class GpuOutOfMemoryError extends ImgpuError {
  override readonly code: string = 'GPU_OUT_OF_MEMORY';
  override readonly exitCode: number = 5;
}

/**
 * Work the GPU cannot hold even when split (one row or plane beyond the storage-binding limit, a halo as tall as
 * the image): refused before any work. The CLI with --device auto runs it on the CPU instead, saying so.
 */
export class GpuLimitError extends GpuOutOfMemoryError {
  override readonly code: string = 'GPU_LIMIT';
}

/** The image is larger than imgpu reads (a pixel limit checked from the file's header, before decoding). */
export class ImageTooLargeError extends UnsupportedFormatError {
  override readonly code: string = 'IMAGE_TOO_LARGE';
}

/**
 * The job queue's server (Redis, for the CLI's submit/worker/status) cannot be reached or answers with an error:
 * a bad address, a server that is down, a password refused. Exit 7: retry once the server is back.
 */
export class QueueUnavailableError extends ImgpuError {
  override readonly code: string = 'QUEUE_UNAVAILABLE';
  override readonly exitCode: number = 7;
}

/** A WGSL shader failed to compile: always a bug in imgpu; the message carries the WGSL line. */
export class ShaderCompileError extends ImgpuError {
  override readonly code: string = 'SHADER_COMPILE';
  override readonly exitCode: number = 70;
}

/** WebGPU reported a validation error for work imgpu submitted: a bug in imgpu; please report it. */
export class GpuValidationError extends ImgpuError {
  override readonly code: string = 'GPU_VALIDATION';
  override readonly exitCode: number = 70;
}

/** The JavaScript runtime is older than the Node.js imgpu is built and tested with (src/node/runtime.ts). */
export class RuntimeVersionError extends ImgpuError {
  override readonly code: string = 'RUNTIME_VERSION';
  override readonly exitCode: number = 6;
}

/**
 * An optional package a feature needs is not installed (imgpu/scale's bullmq and ioredis, peer dependencies that
 * `npm install imgpu` leaves out): the message says what to install. Exit 6, as the runtime's other shortfalls.
 */
export class MissingDependencyError extends ImgpuError {
  override readonly code: string = 'MISSING_DEPENDENCY';
  override readonly exitCode: number = 6;
}

/** A value as an error message shows it: strings as they are, objects as JSON (not "[object Object]"). */
export function shownValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null) {
    try {
      return JSON.stringify(v);
    } catch {
      return Object.prototype.toString.call(v);
    }
  }
  return typeof v === 'function' ? 'a function' : String(v as number | boolean | bigint | symbol | null | undefined);
}

/**
 * How library messages name what the caller can change, in the API's words: the CPU path (CPU_PATH) and options
 * (optionRef). The CLI rewords both as its flags (src/engine/flags.ts), so no library error speaks of CLI flags.
 */
export const CPU_PATH = 'the CPU path (no `gpu` option)';

/** An option named in a message: option `name`, or option `name: value` (strings quoted as in code). */
export function optionRef(name: string, value?: string | number): string {
  return value === undefined ? `option \`${name}\`` : `option \`${name}: ${typeof value === 'string' ? `'${value}'` : value}\``;
}

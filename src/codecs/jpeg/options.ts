// The choices of the GPU JPEG codec, one name each, shared by its decode and encode halves and the platform layers.
import { InvalidArgumentError } from '../../core/errors.js';

/** Where a JPEG's decoding (or encoding) arithmetic runs: 'gpu' (GPU kernels; the platform's native code does the rest), 'cpu' (libjpeg-turbo whole). */
export type JpegPath = 'gpu' | 'cpu';
/** The JPEG path asked for: 'auto' picks one for the context (node/jpeg-gpu.ts resolveJpegPath). */
export type JpegPathOption = JpegPath | 'auto';
export const JPEG_PATHS: readonly JpegPathOption[] = ['gpu', 'cpu', 'auto'];

/** Where a JPEG's Huffman decoding (decode/huffman-decode.ts) or coding (encode/huffman-encode.ts) runs: on the GPU or a CPU thread (libjpeg). */
export type JpegEntropyPath = 'gpu' | 'cpu';

/** `path` as an entropy path, or an InvalidArgumentError naming `what`. */
export function checkEntropy(path: unknown, what: string): JpegEntropyPath {
  if (path === 'gpu' || path === 'cpu') return path;
  throw new InvalidArgumentError(`${what} must be 'gpu' or 'cpu', got ${String(path)}`);
}

/**
 * Host memory handed out again once read (node/codec-pool.ts RecycledBuffers). Where a caller gives one, the entropy
 * stage writes into it and the coefficients are then copied into upload memory on a libuv thread (transfer.ts
 * stageOffThread), instead of being written into mapped upload memory directly: a batch holds many photos'
 * coefficients at once (read ahead while their entropy stages run), and each one holding a mapped upload buffer meant
 * a new one, allocated and zero-filled on the JavaScript thread, nearly every photo (measured: 41 mapped buffers for
 * 40 photos of a growing size). The copy itself was then on the JavaScript thread too (0.65 s of a 210-photo batch's
 * main thread on the H100); now only its scheduling is.
 */
export interface HostBuffers {
  alloc(bytes: number): SharedArrayBuffer;
  give(buffer: ArrayBufferLike): void;
}

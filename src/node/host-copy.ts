import { availableParallelism } from 'node:os';
import type { HostCopy } from '../core/gpu/context.js';
import { loadNativeModule } from '../io/native-module.js';

/**
 * Host copies split over native threads (native/copy.c, in imgpu-native.node), for the copies into and out of GPU-mapped memory: one
 * JavaScript TypedArray.set into Dawn's mapped upload memory runs at ~5 GB/s on the H100 machine, which made a
 * 7680×4320 upload 6.7 ms for a GPU copy of ~0.8 ms. Worker threads cannot help there (a mapped ArrayBuffer is not
 * shareable); native threads write through its pointer.
 */
interface CopyBinding {
  copy(dst: Uint8Array, src: Uint8Array, threads: number): void;
  /** One thread of libuv's pool copies; the JavaScript thread goes on meanwhile. */
  copyAsync(dst: Uint8Array, src: Uint8Array): Promise<void>;
}

let binding: CopyBinding | null | undefined;

function load(): CopyBinding | undefined {
  binding ??= loadNativeModule<CopyBinding>('imgpu-native.node', 'IMGPU_NO_NATIVE_COPY') ?? null;
  return binding ?? undefined;
}

/** Below this many bytes one thread's copy is as fast as handing parts to others. */
const PARALLEL_FROM = 1 << 20;

/**
 * Threads per copy: IMGPU_COPY_THREADS, else one per core up to 16. Swept on the H100 machine (bench/transfer.ts,
 * 1–16 threads, three runs): 16 was fastest at 4K and 8K in each (8K equalize host→host 2.5–5.3 ms against
 * 3.3–6.6 with 8); a part is never under 256 KiB, so small copies use fewer.
 */
export function copyThreads(): number {
  const env = Number(process.env.IMGPU_COPY_THREADS);
  if (Number.isInteger(env) && env >= 1) return env;
  return Math.max(1, Math.min(16, availableParallelism()));
}

/** Settings benchmarks may change (bench/transfer.ts sweeps the threads). */
export const copyTuning = { threads: copyThreads() };

/**
 * The native parallel copy with `threads` threads (copyTuning.threads when not given), or undefined where it was
 * not built (IMGPU_NO_NATIVE_COPY=1 also turns it off).
 */
export function nativeHostCopy(fixedThreads?: number): HostCopy | undefined {
  const b = load();
  if (!b) return undefined;
  const copy: HostCopy = (dst, src) => {
    const threads = fixedThreads ?? copyTuning.threads;
    if (src.byteLength < PARALLEL_FROM || threads <= 1) dst.set(src);
    else b.copy(dst, src, threads);
  };
  copy.parallel = true;
  copy.async = async (dst, src) => {
    if (src.byteLength < PARALLEL_FROM) dst.set(src); // below it the trip to another thread costs more than the copy
    else await b.copyAsync(dst, src);
  };
  return copy;
}

/** The binding itself (tests and benchmarks). */
export function nativeCopyBinding(): CopyBinding | undefined {
  return load();
}

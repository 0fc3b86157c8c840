// Loads imgpu's optional Node-API modules (dist/native/): the JPEG codec (io/jpeg.ts) and the copy/point loops and
// stderr capture (node/host-copy.ts, node/gpu.ts, node/native-kernels.ts). It lives in io, below node, because io's
// readImage/writeImage use the codec.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';

/** Why each native module that was asked for is not there: 'off' (turned off by its environment variable) or the load error. */
const problems = new Map<string, 'off' | Error>();

/**
 * One of imgpu's optional native modules (dist/native/<file>, built by scripts/build-native.mjs and shipped prebuilt
 * in the package), or undefined where it was not built, does not load here, or the environment variable `off` is
 * '1' — the callers then use their JavaScript path (nativeModuleProblem says why).
 */
export function loadNativeModule<T>(file: string, off: string): T | undefined {
  if (process.env[off] === '1') {
    problems.set(file, 'off');
    return undefined;
  }
  try {
    const m = createRequire(import.meta.url)(`../../native/${file}`) as T;
    problems.delete(file);
    return m;
  } catch (e) {
    problems.set(file, e as Error);
    return undefined;
  }
}

/** Why loadNativeModule(file) gave undefined: 'off', 'not built', or the loader's message; undefined if it loaded. */
export function nativeModuleProblem(file: string): string | undefined {
  const p = problems.get(file);
  if (p === undefined || p === 'off') return p;
  return (p as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' ? 'not built' : p.message.split('\n')[0];
}

/** True in a checkout of imgpu (native/ sources beside dist/), false in an installed package (prebuilt binaries only). */
export function isCheckout(): boolean {
  return existsSync(new URL('../../../native/turbo.c', import.meta.url));
}

/**
 * A flag shared by every thread of the process under `key`: made on first use and handed to worker threads started
 * after that (environment data), so call it at module load, which the main thread does before it starts any worker.
 * A fallback's notice sets it (Atomics.compareExchange) to be said once.
 */
export function processFlag(key: string): Int32Array {
  let sab = getEnvironmentData(key) as SharedArrayBuffer | undefined;
  if (!sab) setEnvironmentData(key, (sab = new SharedArrayBuffer(4)));
  return new Int32Array(sab);
}

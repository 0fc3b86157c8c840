import { createRequire } from 'node:module';

/**
 * One of imgpu's optional native modules (dist/native/<file>, built by scripts/build-native.mjs), or undefined
 * where it was not built or the environment variable `off` is '1' — the callers then use their JavaScript path.
 */
export function loadNativeModule<T>(file: string, off: string): T | undefined {
  if (process.env[off] === '1') return undefined;
  try {
    return createRequire(import.meta.url)(`../../native/${file}`) as T;
  } catch {
    return undefined;
  }
}

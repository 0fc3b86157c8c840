import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of a committed fixture (tests run from dist/test, fixtures stay in test/fixtures). */
export function fixture(...parts: string[]): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', ...parts);
}

/** Deterministic pseudo-random values in [0, max) (xorshift32), so failures reproduce. */
function xorshift<A extends Uint8Array | Uint16Array>(out: A, seed: number, max: number): A {
  let s = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = s % max;
  }
  return out;
}

export const randomBytes = (n: number, seed = 1, max = 256): Uint8Array => xorshift(new Uint8Array(n), seed, max);
export const randomU16 = (n: number, seed = 1, max = 65536): Uint16Array => xorshift(new Uint16Array(n), seed, max);

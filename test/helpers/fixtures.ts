import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createImage, type Image } from '../../src/core/image.js';

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

/**
 * An 8-bit photograph mirror-tiled to h × w (the seams smooth): a large image with a real photograph's detail in
 * every block, where resizing a small one up would leave it smooth (and cheap to entropy-code).
 */
export function mirrorTiled(src: Image, h: number, w: number): Image {
  const [sh, sw] = src.shape;
  const c = src.channels;
  const out = createImage([h, w], 'uint8', c);
  const px = out.data as Uint8Array, sp = src.data as Uint8Array;
  const fold = (i: number, n: number) => { const k = i % (2 * n); return k < n ? k : 2 * n - 1 - k; };
  for (let y = 0; y < h; y++) {
    const row = fold(y, sh) * sw;
    for (let x = 0; x < w; x++) {
      const s = (row + fold(x, sw)) * c;
      px.set(sp.subarray(s, s + c), (y * w + x) * c);
    }
  }
  return out;
}

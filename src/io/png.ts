import { crc32 } from 'node:zlib';
import { UnsupportedFormatError } from '../core/errors.js';

/**
 * PNG's chunk structure as libpng (cv2.imread) holds it, checked before sharp decodes: IHDR first and once, every
 * critical chunk (IHDR, PLTE, IDAT, IEND: a type starting upper case) within the file and matching its CRC, and an
 * IEND. libvips' PNG loader (libspng) decoded files that break these — a damaged or cut transfer — where cv2.imread
 * refuses them: the format fuzzer (test/fuzz/format-differential.ts) found 16-bit PNGs with a damaged IEND, a
 * dropped chunk or a second IHDR decoded by imgpu and refused by cv2. Ancillary chunks' CRCs are left alone: libpng
 * warns and skips them.
 */
const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export const isPng = (b: Uint8Array): boolean => b.length >= 8 && SIGNATURE.every((x, i) => b[i] === x);

/** Refuses (UnsupportedFormatError) a PNG whose chunks libpng would refuse: see above. */
export function checkPngChunks(b: Uint8Array, path: string): void {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const refuse = (why: string) => new UnsupportedFormatError(`${path} is corrupt or truncated: ${why} (libpng refuses it too)`);
  for (let at = 8; ; ) {
    if (at + 12 > b.length) throw refuse('it ends before its IEND chunk');
    const len = v.getUint32(at);
    const end = at + 8 + len;
    const type = String.fromCharCode(b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
    if ((at === 8) !== (type === 'IHDR')) throw refuse(at === 8 ? `its first chunk is ${JSON.stringify(type)}, not IHDR` : 'a second IHDR chunk');
    const critical = b[at + 4] >= 0x41 && b[at + 4] <= 0x5a;
    if (end + 4 > b.length) throw refuse(`its ${JSON.stringify(type)} chunk runs past the end of the file`);
    if (critical && crc32(b.subarray(at + 4, end)) !== v.getUint32(end)) throw refuse(`its ${type} chunk at byte ${at} fails its CRC`);
    if (type === 'IEND') return;
    at = end + 4;
  }
}

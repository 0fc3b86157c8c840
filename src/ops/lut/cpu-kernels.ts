import { defineTask, type Range } from '../../core/cpu/pool.js';

export interface ApplyLutArgs extends Range {
  src: Uint8Array | Uint16Array;
  dst: Uint8Array | Uint16Array;
  lut: Uint32Array | Uint8Array | Uint16Array;
}

/** dst[i] = lut[src[i]] for i in [start, end). */
export function applyLutRange({ src, dst, lut, start, end }: ApplyLutArgs): void {
  if (src instanceof Uint8Array && dst instanceof Uint8Array && lut instanceof Uint8Array && src.byteOffset % 4 === dst.byteOffset % 4) {
    applyLut8(src, dst, lut, start, end);
    return;
  }
  if (src instanceof Uint16Array && dst instanceof Uint16Array && lut instanceof Uint16Array) {
    applyLut16(src, dst, lut, start, end);
    return;
  }
  for (let i = start; i < end; i++) dst[i] = lut[src[i]];
}

/** The 16-bit case with one element type throughout (monomorphic for V8). */
function applyLut16(src: Uint16Array, dst: Uint16Array, lut: Uint16Array, start: number, end: number): void {
  for (let i = start; i < end; i++) dst[i] = lut[src[i]];
}

/**
 * The 8-bit case with one element type throughout (monomorphic for V8) and the aligned middle in 32-bit words:
 * one load and one store per four pixels.
 */
function applyLut8(src: Uint8Array, dst: Uint8Array, lut: Uint8Array, start: number, end: number): void {
  let i = start;
  while (i < end && (src.byteOffset + i) % 4 !== 0) {
    dst[i] = lut[src[i]];
    i++;
  }
  const words = Math.floor((end - i) / 4);
  if (words > 0) {
    const s32 = new Uint32Array(src.buffer, src.byteOffset + i, words);
    const d32 = new Uint32Array(dst.buffer, dst.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const w = s32[k];
      d32[k] = lut[w & 255] | (lut[(w >>> 8) & 255] << 8) | (lut[(w >>> 16) & 255] << 16) | (lut[w >>> 24] << 24);
    }
    i += words * 4;
  }
  for (; i < end; i++) dst[i] = lut[src[i]];
}

export const applyLutTask = defineTask('lut.apply', applyLutRange);

/** The LUT family's CPU tasks (ops/tasks.ts). */
export const lutTasks = [applyLutTask];

/** dst[i] = lut[src[i]] for i in [start, end). */
export function applyLutRange(src: Uint8Array | Uint16Array, dst: Uint8Array | Uint16Array, lut: Uint32Array | Uint8Array | Uint16Array, start: number, end: number): void {
  for (let i = start; i < end; i++) dst[i] = lut[src[i]];
}

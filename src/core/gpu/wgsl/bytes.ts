/**
 * WGSL for 8-bit samples packed four to a u32 word, as u8 images and planes lie in storage buffers (little-endian:
 * sample k of a word in bits 8k..8k+7): `byte_of(w, k)` unpacks one (k taken mod 4, so a sample index can be
 * passed as it is), `pack4(a, b, c, d)` packs four (each below 256, `a` the first). With `source`, the name of a
 * storage `array<u32>`, also `byte_at(i)`: sample i of that array.
 */
export function bytesWgsl(source?: string): string {
  return /* wgsl */ `
fn byte_of(w: u32, k: u32) -> u32 { return (w >> ((k & 3u) * 8u)) & 0xffu; }
fn pack4(a: u32, b: u32, c: u32, d: u32) -> u32 { return a | (b << 8u) | (c << 16u) | (d << 24u); }
${source ? `fn byte_at(i: u32) -> u32 { return byte_of(${source}[i >> 2u], i); }` : ''}
`;
}

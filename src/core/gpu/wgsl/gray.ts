import { GRAY_WEIGHTS } from '../../image.js';

/** WGSL twin of core/image.ts grayOf: cv2.cvtColor's RGB→gray of one 8- or 16-bit pixel, from the same weights. */
export const grayWgsl = /* wgsl */ `
fn gray_of(r: u32, g: u32, b: u32) -> u32 {
  return (r * ${GRAY_WEIGHTS.r}u + g * ${GRAY_WEIGHTS.g}u + b * ${GRAY_WEIGHTS.b}u + ${1 << (GRAY_WEIGHTS.shift - 1)}u) >> ${GRAY_WEIGHTS.shift}u;
}`;

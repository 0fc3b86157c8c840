import type { Dtype } from '../../core/image.js';
import type { FilterPlan } from './filters.js';
import { separableKernel } from './kernel.js';

/**
 * cv2.blur's rounding of a 16-bit box filter (imgproc box_filter.simd.hpp, ColumnSum<int, ushort>): OpenCV sums
 * the window in integers, then scales by 1/area in float32 — round(float(sum) · float(1/area)) — in its vector
 * loop, and in double — the exactly rounded sum / area — in the scalar loop over each row's last width mod 8
 * pixels (every SIMD build processes 8 or more 16-bit lanes at a time). Matched on random images for windows
 * 2×2 to 31×31 and widths 17 to 304; the float32 mean of imgpu's ordinary box filter differed by one level on
 * 29 of 91 203 pixels (7×11).
 */
export interface BoxRounding {
  /** The image's (and output's) type: each has its own rounding in OpenCV. */
  dtype: 'uint8' | 'uint16';
  /** Pixels in the window. */
  area: number;
  /** The output row width and the first column of OpenCV's scalar tail (width − width mod 8). */
  width: number;
  tail: number;
  /** Not a box: cv2's fixed-point Gaussian (gauss8.ts), whose exact sums are rounded as (s + 2^(shift−1)) >> shift. */
  shift?: number;
}

/**
 * cv2.blur of an 8-bit image into 8 bits with a window of at most 256 pixels sums in 16 bits (box_filter.simd.hpp,
 * ColumnSum<ushort, uchar>), and Debian's OpenCV 4.6 then rounds the exact window sum s of an area d, as measured on
 * every window of up to 19×19 on random images (test/convolve: cv2.blur fixtures of 8-bit boxes):
 * - d a power of two: OpenCV's 16-bit fixed point ((s + d/2 + 1) · (2^16 / d)) >> 16 (delta ⌊d/2⌋ + 1 and scale
 *   2^16 / d, as ColumnSum computes them when 2^16 / d has no fraction) — it rounds remainders ≥ d/2 − 1 up;
 * - other d: half up, ⌊(2s + d) / 2d⌋.
 * The float32 mean rounded half to even (imgpu's ordinary path) differed on exact .5 means — and differently on the
 * CPU and the GPU, whose sums run in other orders; these integer roundings are the same on both.
 */
export const MAX_AREA_FIXED8 = 256;

/** cv2.blur's 8-bit value of an exact window sum `s` of `area` ≤ MAX_AREA_FIXED8 pixels (see there). */
export function roundBox8(s: number, area: number): number {
  // A 1×1 window is the identity in cv2.blur (no scaling happens); the fixed point's +1 would add one level.
  if (area === 1) return s;
  const pow2 = (area & (area - 1)) === 0;
  // The fixed point can round a full window of 255 to 256 (area 2): OpenCV's packing saturates it.
  return pow2 ? Math.min(255, Math.floor((s + area / 2 + 1) / area)) : Math.floor((2 * s + area) / (2 * area));
}

/** float32(1 / area), OpenCV's vector-loop scale. */
export const boxScale = (area: number): number => Math.fround(1 / area);

/**
 * For a box filter of a uint16 (uint8) image rounded back to uint16 (uint8): the same box with weights 1, whose
 * float32 passes give the exact integer window sums (every partial sum is an integer below 2^24 while
 * max · area < 2^24, in any order of addition, so on every implementation), and OpenCV's rounding of them.
 * Otherwise undefined: the ordinary float32 mean is rounded (larger windows — for 8 bits more than 256 pixels,
 * where OpenCV's sums and rounding change —, 8-bit volumes, float32, a border value that is not an integer of the
 * type).
 */
export function boxSums(plan: FilterPlan, dtype: Dtype, outDtype: Dtype, cval: number, width: number, planar: boolean): { plan: FilterPlan; rounding: BoxRounding } | undefined {
  // 8-bit: cv2.blur's rounding on 2D images only; volumes (no OpenCV counterpart) keep rounding the mean half to
  // even, as scipy's uniform_filter rounded is the reference there.
  if (!plan.box || !(dtype === 'uint16' || (dtype === 'uint8' && planar)) || outDtype !== dtype) return undefined;
  const area = plan.box.reduce((a, b) => a * b, 1);
  const max = dtype === 'uint8' ? 255 : 65535;
  if (dtype === 'uint8' ? area > MAX_AREA_FIXED8 : max * area >= 2 ** 24) return undefined;
  if (!Number.isInteger(cval) || cval < 0 || cval > max) return undefined;
  const k = plan.components[0];
  const ones = separableKernel(plan.box.map((n) => new Array<number>(n).fill(1)), [...k.anchor], plan.name);
  return { plan: { ...plan, components: [ones] }, rounding: { dtype, area, width, tail: width - (width % 8) } };
}

/** OpenCV's 8- or 16-bit value of an exact window sum `s` at column x (see BoxRounding, MAX_AREA_FIXED8). */
export function roundBoxSum(s: number, x: number, r: BoxRounding): number {
  if (r.shift) return Math.min(255, Math.floor((s + 2 ** (r.shift - 1)) / 2 ** r.shift));
  if (r.dtype === 'uint8') return roundBox8(s, r.area);
  if (x < r.tail) {
    const v = Math.fround(s * boxScale(r.area)); // s < 2^24: the product is exact in double, fround rounds it once
    const n = Math.round(v);
    return Math.min(65535, n - v === 0.5 && n % 2 !== 0 ? n - 1 : n);
  }
  // s / area rounded half to even, in integers.
  const q = Math.floor((2 * s + r.area) / (2 * r.area));
  return (2 * s) % (2 * r.area) === r.area && q % 2 === 1 ? q - 1 : q;
}

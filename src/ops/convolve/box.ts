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
  /** Pixels in the window. */
  area: number;
  /** The output row width and the first column of OpenCV's scalar tail (width − width mod 8). */
  width: number;
  tail: number;
}

/** float32(1 / area), OpenCV's vector-loop scale. */
export const boxScale = (area: number): number => Math.fround(1 / area);

/**
 * For a box filter of a uint16 image rounded back to uint16: the same box with weights 1, whose float32 passes
 * give the exact integer window sums (every partial sum is an integer below 2^24 while 65535 · area < 2^24, in
 * any order of addition, so on every implementation), and OpenCV's rounding of them. Otherwise undefined: the
 * ordinary float32 mean is rounded (larger windows, other dtypes, a border value that is not a 16-bit integer).
 */
export function boxSums(plan: FilterPlan, dtype: Dtype, outDtype: Dtype, cval: number, width: number): { plan: FilterPlan; rounding: BoxRounding } | undefined {
  if (!plan.box || dtype !== 'uint16' || outDtype !== 'uint16') return undefined;
  const area = plan.box.reduce((a, b) => a * b, 1);
  if (65535 * area >= 2 ** 24 || !Number.isInteger(cval) || cval < 0 || cval > 65535) return undefined;
  const k = plan.components[0];
  const ones = separableKernel(plan.box.map((n) => new Array(n).fill(1)), [...k.anchor], plan.name);
  return { plan: { ...plan, components: [ones] }, rounding: { area, width, tail: width - (width % 8) } };
}

/** OpenCV's 16-bit value of an exact window sum `s` at column x (see BoxRounding). */
export function roundBoxSum(s: number, x: number, r: BoxRounding): number {
  if (x < r.tail) {
    const v = Math.fround(s * boxScale(r.area)); // s < 2^24: the product is exact in double, fround rounds it once
    const n = Math.round(v);
    return Math.min(65535, n - v === 0.5 && n % 2 !== 0 ? n - 1 : n);
  }
  // s / area rounded half to even, in integers.
  const q = Math.floor((2 * s + r.area) / (2 * r.area));
  return (2 * s) % (2 * r.area) === r.area && q % 2 === 1 ? q - 1 : q;
}

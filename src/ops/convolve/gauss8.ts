import type { BorderMode } from '../../core/border.js';
import { gaussianKernelBitExact } from '../../core/gaussian.js';
import type { Dtype } from '../../core/image.js';
import type { BoxRounding } from './box.js';
import type { FilterPlan } from './filters.js';
import { separableKernel } from './kernel.js';

/**
 * cv2.GaussianBlur of an 8-bit image into 8 bits, bit for bit. OpenCV does not round a float convolution there: it
 * runs its fixed-point path (imgproc smooth.simd.hpp, fixedSmoothInvoker<uint8_t, ufixedpoint16>) with kernels of 8
 * fractional bits (getGaussianKernelBitExact, then getGaussianKernelFixedPoint_ED: each weight · 256 rounded with the
 * error carried to the next, the centre taking what makes the sum exactly 256). The row pass sums src · kx exactly
 * (ufixedpoint16), the column pass sums row · ky (ufixedpoint32, 16 fractional bits), and the result is
 * (s + 2^15) >> 16, saturated. Every partial sum is an integer below 255 · 2^16 < 2^24, so float32 passes with
 * these integer weights compute it exactly, in any order of addition — the CPU's and every GPU implementation's.
 * Matched on the chelsea photo for σ 0.5 to 5 (the plain rounding of each weight differed on up to 400,000 values).
 */

/** Fractional bits of the product of the two 8-bit kernels: the shift of the final rounding. */
export const GAUSS8_SHIFT = 16;

/** cv2's kernel size for sigma spanning `truncate` sigmas each side: cvRound(σ · 2 · truncate + 1) | 1 (truncate 3 = its 8-bit rule). */
export function cvGaussianSize(sigma: number, truncate: number): number {
  const v = sigma * 2 * truncate + 1;
  const r = Math.round(v);
  return (r - v === 0.5 && r % 2 !== 0 ? r - 1 : r) | 1; // cvRound: half to even
}

/** getGaussianKernelFixedPoint_ED with 8 fractional bits: integer weights summing to 256. */
export function fixedPointKernel(k: number[]): number[] {
  const n = k.length, half = (n - 1) / 2;
  const out = new Array<number>(n);
  let err = 0, sum = 0;
  for (let i = 0; i < half; i++) {
    const adj = k[i] * 256 + err;
    let v = Math.round(adj);
    if (v - adj === 0.5 && v % 2 !== 0) v -= 1; // cvRound
    err = adj - v;
    out[i] = out[n - 1 - i] = v;
    sum += v;
  }
  out[half] = 256 - 2 * sum;
  return out;
}

/** cv2's 8-bit Gaussian kernel (integer weights over 256) for sigma, sized by `truncate` (cvGaussianSize). */
export function cvGaussianKernel8(sigma: number, truncate: number): number[] {
  if (sigma <= 1e-15) return [256];
  return fixedPointKernel(gaussianKernelBitExact(cvGaussianSize(sigma, truncate), sigma));
}

/**
 * For a 2D Gaussian of an 8-bit image rounded back to 8 bits: the same filter with cv2's integer kernels (sized as
 * cv2 sizes them: `truncate` 3 is its 8-bit rule, σ·3 each side) and its rounding; else undefined (float output,
 * 16-bit and float images, volumes, border 'valid' or a constant other than 0: scipy's Gaussian, rounded half to
 * even where saturated). `width` is the output row's (BoxRounding's fields; no tail here).
 */
export function gaussFixed8(plan: FilterPlan, dtype: Dtype, outDtype: Dtype, rank: 2 | 3, truncate: number, border: BorderMode, cval: number, width: number): { plan: FilterPlan; rounding: BoxRounding } | undefined {
  if (!plan.gauss || dtype !== 'uint8' || outDtype !== 'uint8' || rank !== 2) return undefined;
  // OpenCV pads a constant border with 0 in both passes; the passes here pad each with cval (scipy's rule), which is
  // the same only for 0. 'valid' has no OpenCV counterpart (and its output size follows scipy's kernel).
  if (border === 'valid' || (border === 'constant' && cval !== 0)) return undefined;
  const [sy, sx] = plan.gauss.slice(-2);
  const kernel = separableKernel([cvGaussianKernel8(sy, truncate), cvGaussianKernel8(sx, truncate)], undefined, plan.name);
  return { plan: { ...plan, components: [kernel] }, rounding: { dtype: 'uint8', area: 1, width, tail: width, shift: GAUSS8_SHIFT } };
}

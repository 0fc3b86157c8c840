import { roundHalfEven } from '../../core/rounding.js';

/**
 * The equalization look-up table, exactly as OpenCV's cv::equalizeHist computes it (imgproc/src/histogram.cpp),
 * generalized to 16-bit by taking histSize = 65536:
 *   i0 = first non-zero bin; if hist[i0] == total every output pixel is i0;
 *   scale = (histSize − 1.f) / (float)(total − hist[i0])      (single precision)
 *   lut[i0] = 0; lut[i] = saturate_cast(Σ_{i0<j≤i} hist[j] · scale)  (float product, round half to even)
 * Math.fround reproduces the single-precision steps; the GPU kernel does the same in integer arithmetic.
 */
export function equalizeLut(hist: Uint32Array, total: number): Uint32Array {
  const bins = hist.length;
  const maxv = bins - 1;
  const lut = new Uint32Array(bins);
  let i = 0;
  while (i < bins && hist[i] === 0) i++;
  if (i === bins) return lut;
  if (hist[i] === total) return lut.fill(i);
  const scale = Math.fround(maxv / Math.fround(total - hist[i]));
  let sum = 0;
  for (lut[i++] = 0; i < bins; i++) {
    sum += hist[i];
    const v = roundHalfEven(Math.fround(Math.fround(sum) * scale));
    lut[i] = v > maxv ? maxv : v;
  }
  return lut;
}

/**
 * OpenCV's getGaussianKernelBitExact (imgproc/src/smooth.dispatch.cpp) for n > 0 taps and σ > 0: weights
 * exp(x² · (−0.125/σ²)) at doubled coordinates x = 2i − (n − 1), normalized by the double sum (centre weight 1), in
 * double. Shared by the adaptive threshold's float kernel and the filters' 8-bit fixed-point Gaussian.
 */
export function gaussianKernelBitExact(n: number, sigma: number): number[] {
  const scale2X = -0.125 / (sigma * sigma);
  const half = (n - 1) / 2;
  const values: number[] = [];
  let sum = 0;
  for (let i = 0, x = 1 - n; i < half; i++, x += 2) {
    const t = Math.exp(x * x * scale2X);
    values.push(t);
    sum += t;
  }
  sum = sum * 2 + 1;
  const mul = 1 / sum;
  const out = new Array<number>(n);
  for (let i = 0; i < half; i++) out[i] = out[n - 1 - i] = values[i] * mul;
  out[half] = mul;
  return out;
}

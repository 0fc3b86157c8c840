/**
 * Global thresholds from a histogram, evaluated exactly as the reference libraries do, shared by the CPU path
 * (and, for isodata, the GPU path, which downloads the histogram: a 1 KiB read costs less than emulating
 * float64 in WGSL).
 */

const FLT_EPSILON = 1.1920928955078125e-7;

/**
 * OpenCV's getThreshVal_Otsu_8u (imgproc/src/thresh.cpp), in double precision like the original, with the
 * same recurrence for mu1 (updated even on skipped bins), the FLT_EPSILON skip rule and the first strict
 * maximum. Generalized to any number of bins (16-bit images: 65536).
 */
export function otsuThreshold(hist: Uint32Array): number {
  let total = 0;
  for (let i = 0; i < hist.length; i++) total += hist[i];
  const scale = 1 / total;
  let mu = 0;
  for (let i = 0; i < hist.length; i++) mu += i * hist[i];
  mu *= scale;
  let mu1 = 0, q1 = 0, maxSigma = 0, maxVal = 0;
  for (let i = 0; i < hist.length; i++) {
    const p = hist[i] * scale;
    mu1 *= q1;
    q1 += p;
    const q2 = 1 - q1;
    if (Math.min(q1, q2) < FLT_EPSILON || Math.max(q1, q2) > 1 - FLT_EPSILON) continue;
    mu1 = (mu1 + i * p) / q1;
    const mu2 = (mu - q1 * mu1) / q2;
    const sigma = q1 * q2 * (mu1 - mu2) * (mu1 - mu2);
    if (sigma > maxSigma) {
      maxSigma = sigma;
      maxVal = i;
    }
  }
  return maxVal;
}

/**
 * scikit-image 0.19 `threshold_isodata` for integer images (filters/thresholding.py): one bin per integer
 * in [min, max]; hist in float32 with a float32 running sum (np.cumsum), intensity sums in float64; returns
 * the first t with 0 ≤ (mean_low(t) + mean_high(t)) / 2 − t < 1, where mean_low covers values ≤ t.
 * Tie rule: of several such t (a flat region of the fixed-point map), the lowest wins, as in scikit-image.
 * Equivalently the Ridler–Calvard iteration T = (μ_low + μ_high)/2 started from below. A constant image
 * returns its value. Returns undefined where no t qualifies (scikit-image raises IndexError there).
 */
export function isodataThreshold(hist: Uint32Array): number | undefined {
  let lo = 0;
  while (lo < hist.length && hist[lo] === 0) lo++;
  let hi = hist.length - 1;
  while (hi > lo && hist[hi] === 0) hi--;
  if (lo >= hist.length) return undefined;
  if (lo === hi) return lo;
  const n = hi - lo + 1;
  const csuml = new Float64Array(n); // float32 values
  const csumI = new Float64Array(n); // exact integers (< 2^53)
  let acc = 0, accI = 0;
  for (let k = 0; k < n; k++) {
    const h = Math.fround(hist[lo + k]);
    acc = Math.fround(acc + h);
    csuml[k] = acc;
    accI += h * (lo + k);
    csumI[k] = accI;
  }
  const last = csuml[n - 1], lastI = csumI[n - 1];
  for (let k = 0; k < n - 1; k++) {
    const csumh = Math.fround(last - csuml[k]);
    const lower = csumI[k] / csuml[k];
    const higher = (lastI - csumI[k]) / csumh;
    const d = (lower + higher) / 2 - (lo + k);
    if (d >= 0 && d < 1) return lo + k;
  }
  return undefined;
}

/** LUT for binarization: v > t → maxValue, else 0 (cv2.THRESH_BINARY; skimage's `image > threshold`). */
export function binaryLut(bins: number, t: number, maxValue: number): Uint32Array {
  const lut = new Uint32Array(bins);
  for (let i = Math.max(0, Math.floor(t) + 1); i < bins; i++) lut[i] = maxValue;
  return lut;
}

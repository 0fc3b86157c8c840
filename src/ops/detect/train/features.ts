import type { LbpFeature } from '../classifier.js';
import { integralImage, lbpOfCorners } from '../cpu-kernels.js';

/**
 * The feature pool of training: every multi-block LBP feature of a W×H window, in traincascade's order
 * (lbpfeatures.cpp generateFeatures: x, then y, then cell width, then cell height), and the codes of samples.
 */

/** All (x, y, w, h) with x + 3w ≤ W and y + 3h ≤ H: 8,464 at 24×24. */
export function mbLbpFeatures(W: number, H: number): LbpFeature[] {
  const out: LbpFeature[] = [];
  for (let x = 0; x < W; x++) {
    for (let y = 0; y < H; y++) {
      for (let w = 1; w <= W / 3; w++) {
        for (let h = 1; h <= H / 3; h++) if (x + 3 * w <= W && y + 3 * h <= H) out.push({ x, y, w, h });
      }
    }
  }
  return out;
}

/** The features as packed x, y, w, h words (what the GPU kernel and the CPU loop read). */
export function packFeatures(features: LbpFeature[]): Int32Array {
  const out = new Int32Array(4 * features.length);
  features.forEach((f, i) => out.set([f.x, f.y, f.w, f.h], 4 * i));
  return out;
}

/** The integral images of n samples of W×H pixels, one after the other ((W+1)·(H+1) words each), as cv::integral. */
export function sampleIntegrals(samples: readonly Uint8Array[], W: number, H: number): Int32Array {
  const size = (W + 1) * (H + 1);
  const out = new Int32Array(size * samples.length);
  samples.forEach((s, i) => integralImage(s, W, H, out, i * size));
  return out;
}

/**
 * The codes of one feature on n samples (what the host needs of the feature a stump chose, on either path). The 16
 * corner offsets are the same in every sample's integral image, so they are computed once; the code is the
 * detector's (lbpOfCorners, cpu-kernels.ts).
 */
export function featureCodes(integrals: Int32Array, n: number, W: number, H: number, features: Int32Array, f: number, out: Uint8Array = new Uint8Array(n)): Uint8Array {
  const size = (W + 1) * (H + 1), s = W + 1;
  const fx = features[4 * f], fy = features[4 * f + 1], fw = features[4 * f + 2], fh = features[4 * f + 3];
  const o = Int32Array.from({ length: 16 }, (_, k) => (fy + (k >> 2) * fh) * s + fx + (k & 3) * fw);
  const [o00, o01, o02, o03, o10, o11, o12, o13, o20, o21, o22, o23, o30, o31, o32, o33] = o;
  for (let i = 0, b = 0; i < n; i++, b += size) {
    out[i] = lbpOfCorners(
      integrals[b + o00], integrals[b + o01], integrals[b + o02], integrals[b + o03], integrals[b + o10], integrals[b + o11], integrals[b + o12], integrals[b + o13],
      integrals[b + o20], integrals[b + o21], integrals[b + o22], integrals[b + o23], integrals[b + o30], integrals[b + o31], integrals[b + o32], integrals[b + o33],
    );
  }
  return out;
}

/**
 * The LBP code of every feature on every sample, feature-major (`codes[f·n + i]`): a feature's codes lie together,
 * which is how its histogram reads them. The CPU reference of the GPU's code kernel.
 */
export function sampleCodesCpu(integrals: Int32Array, n: number, W: number, H: number, features: Int32Array): Uint8Array {
  const F = features.length / 4;
  const codes = new Uint8Array(F * n);
  for (let f = 0; f < F; f++) featureCodes(integrals, n, W, H, features, f, codes.subarray(f * n, (f + 1) * n));
  return codes;
}

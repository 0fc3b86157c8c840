/**
 * Gamma correction as Debian's scikit-image 0.19 computes `skimage.exposure.adjust_gamma(image, gamma, gain)`
 * (exposure.py), in the same double-precision steps so that results are equal, not close:
 * - uint8: a 256-entry LUT, `lut = 255 * gain * (np.linspace(0, 1, 256) ** gamma)`, clipped at 255 by
 *   np.minimum and truncated by astype('uint8'). np.linspace's samples are i · (1/255) (its step, not i/255),
 *   the last one exactly 1; the product is (255·gain)·x^gamma, in that order.
 * - uint16: `((image / 65535.0) ** gamma) * 65535.0 * gain`, truncated by astype(uint16) — as a LUT over the
 *   65536 values. Above 65535 (gain > 1) numpy's cast is undefined behaviour (C's double → uint16); imgpu
 *   saturates at 65535 there (docs/gamma.md).
 * - float32: numpy keeps float32 (a Python scalar does not promote the array): powf(x, f32(gamma)) · 1 · f32(gain).
 */

/** The 256 samples of np.linspace(0, 1, 256). */
function linspace256(): Float64Array {
  const step = 1 / 255;
  const x = Float64Array.from({ length: 256 }, (_, i) => i * step);
  x[255] = 1;
  return x;
}

/** skimage's uint8 LUT (_adjust_gamma_u8). */
export function gammaLut8(gamma: number, gain: number): Uint32Array {
  const scale = 255 * gain;
  return Uint32Array.from(linspace256(), (x) => Math.trunc(Math.min(scale * x ** gamma, 255)));
}

/** skimage's uint16 formula over every value, as a LUT (saturated where numpy's cast is undefined). */
export function gammaLut16(gamma: number, gain: number): Uint32Array {
  const scale = 65535;
  const lut = new Uint32Array(65536);
  for (let v = 0; v < 65536; v++) lut[v] = Math.trunc(Math.min((v / scale) ** gamma * scale * gain, 65535));
  return lut;
}

/** skimage's float32 formula on one value (non-negative; checked by the caller). */
export function gammaF32(x: number, gamma32: number, gain32: number): number {
  return Math.fround(Math.fround(x ** gamma32) * gain32);
}

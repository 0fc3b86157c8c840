import { InvalidArgumentError } from '../../core/errors.js';
import { GpuImage } from '../../core/gpu/gpu-image.js';
import { defineOp, type OpOptions } from '../../core/op.js';
import type { ParamSpec } from '../../core/params.js';
import { gammaCpu } from './cpu.js';
import { gammaGpu } from './gpu.js';

/** Declared once: the options type, CLI flags, help, validation and the playground form come from here. */
export const gammaParams = [
  { name: 'gamma', kind: 'float', min: 0, default: 1, doc: 'exponent: output = input^gamma on [0, 1] (> 1 darkens, < 1 brightens)' },
  { name: 'gain', kind: 'float', min: 0, default: 1, doc: 'constant multiplier applied after the power' },
] as const satisfies readonly ParamSpec[];

export type GammaOptions = OpOptions<typeof gammaParams>;

/** skimage refuses negative input (its _assert_non_negative); so does imgpu, before any work. */
function assertNonNegative(data: ArrayLike<number>): void {
  for (let i = 0; i < data.length; i++) {
    if (data[i] < 0) throw new InvalidArgumentError('gamma: the image has negative values; gamma correction is defined on non-negative images (as skimage.exposure.adjust_gamma)');
  }
}

/**
 * Gamma correction, equal to Debian's scikit-image 0.19 `skimage.exposure.adjust_gamma(image, gamma, gain)`:
 * 8-bit through its truncating 256-entry LUT, 16-bit and float32 by its formula (gamma/lut.ts). Every channel
 * of a colour image alike, as skimage. float32 on the GPU uses WGSL's pow (within a few ulp of the CPU's).
 */
export const gamma = defineOp({
  name: 'gamma',
  summary: 'gamma correction: out = in^gamma · gain on [0, 1] (= skimage.exposure.adjust_gamma; 8-bit by its LUT)',
  params: gammaParams,
  input: { dtypes: ['uint8', 'uint16', 'float32'], colour: 'channels', volumes: true },
  light: true,
  reach: () => ({ before: 0, after: 0 }), // voxel by voxel
  check: (_p, img) => {
    if (!(img instanceof GpuImage) && img.dtype === 'float32') assertNonNegative(img.data);
  },
  cpu: (img, p, { pool, out }) => gammaCpu(img, p.gamma, p.gain, pool, out),
  gpu: (input, rec, p) => gammaGpu(input, rec, p.gamma, p.gain),
});

import type { BorderMode } from '../../core/border.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { asShape3D, type Dtype, type Geometry, type Shape } from '../../core/image.js';
import { boxSums, type BoxRounding } from './box.js';
import { gaussFixed8 } from './gauss8.js';
import { parseFilter, type FilterPlan } from './filters.js';
import type { ConvKernel } from './kernel.js';
import { wholeGeometry, type Geo3 } from './plan.js';

/** What a filter call needs to know of its parameters (the declared ones, resolved). */
export interface FilterArgs {
  filter: string | FilterPlan;
  border: BorderMode;
  cval: number;
  truncate: number;
  saturate: boolean;
}

/** A filter call made concrete for its input: the kernels it runs, their geometry, the output's shape and type. */
export interface FilterRun {
  /** The kernels run (a box rounded back to 8/16 bits: its window sums, see `box`). */
  plan: FilterPlan;
  rank: 2 | 3;
  /** The input's shape as [d, h, w]. */
  shape: [number, number, number];
  /** Per component: its geometry over the whole input. */
  geos: Geo3[];
  outDtype: 'uint8' | 'uint16' | 'float32';
  /** The output's shape: the input's, shrunk for border 'valid'. */
  outShape: Shape;
  /** A 16-bit box (an 8-bit one on a 2D image) rounded back to its type: cv2.blur's rounding of the window sums. */
  box?: BoxRounding;
}

/** A volume when it has more than one plane; else a 2D image. */
export function rankOf(shape: Shape): 2 | 3 {
  return shape.length === 3 && shape[0] > 1 ? 3 : 2;
}

/**
 * The run of a filter over an input of this shape and type (its geometry, where known, gives sigmas in mm):
 * parses the spec and checks the kernels against the input — typed errors before any work.
 */
export function filterRun(p: FilterArgs, input: { shape: Shape; dtype: Dtype; geometry?: Geometry }): FilterRun {
  const rank = rankOf(input.shape);
  const asked = typeof p.filter === 'string' ? parseFilter(p.filter, { rank, geometry: input.geometry, truncate: p.truncate }) : p.filter;
  for (const k of asked.components) {
    if (rank === 2 && k.size[0] > 1) throw new InvalidArgumentError(`${asked.name}: a 3D kernel (${k.size.join('×')}) needs a volume; the image is 2D`);
  }
  const shape = asShape3D(input.shape);
  const outDtype = p.saturate && input.dtype !== 'float32' ? input.dtype : 'float32';
  const cval = p.border === 'constant' ? p.cval : 0;
  // An 8-bit 2D Gaussian rounded back to 8 bits: cv2.GaussianBlur's fixed point with its own kernel size (gauss8.ts).
  const fixed = gaussFixed8(asked, input.dtype, outDtype, rank, p.truncate, p.border, cval, shape[2]);
  const chosen = fixed?.plan ?? asked;
  const geos = chosen.components.map((k) => wholeGeometry(shape, k, p.border));
  const out3 = geos[0].map((g) => g.nOut) as [number, number, number];
  if (geos.some((g) => g.some((a, i) => a.nOut !== out3[i]))) throw new InvalidArgumentError(`${asked.name}: its kernels give outputs of different sizes with border 'valid'`);
  // A 16-bit box (an 8-bit one on a 2D image) rounded back to its type runs as window sums rounded as cv2.blur does (box.ts).
  const sums = fixed ?? boxSums(asked, input.dtype, outDtype, cval, out3[2], rank === 2);
  return { plan: sums?.plan ?? asked, rank, shape, geos, outDtype, outShape: (rank === 2 ? out3.slice(1) : out3) as Shape, box: sums?.rounding };
}

/** Geometry of the output: the input's, moved by the anchor for 'valid' (output voxel 0 lies at input voxel anchor). */
export function outGeometry(g: Geometry | undefined, k: ConvKernel, mode: BorderMode): Geometry | undefined {
  if (!g || mode !== 'valid') return g;
  const shift = [k.anchor[2], k.anchor[1], k.anchor[0]];
  const origin = g.origin.map((o, r) => o + [0, 1, 2].reduce((s, c) => s + g.direction[r * 3 + c] * g.spacing[c] * shift[c], 0)) as Geometry['origin'];
  return { ...g, origin };
}

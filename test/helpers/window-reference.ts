import { fileURLToPath } from 'node:url';
import type { Image } from '../../src/core/image.js';
import { pythonArrays } from './python.js';

/** test/helpers/window_reference.py, from dist/test/helpers (the source tree's file: Python needs no build). */
const DIR = fileURLToPath(new URL('../../../test/helpers/', import.meta.url));

/**
 * Per-pixel sliding-window references written from the documented definitions in numpy, independent of imgpu's
 * code (window_reference.py), all cases in one Python process.
 */
function windowReferences(calls: string[], inputs: Image[]): Record<string, Image> {
  const script = [`sys.path.insert(0, ${JSON.stringify(DIR)})`, 'from window_reference import clahe_window, isodata_window', 'from skimage.filters import threshold_isodata', ...calls].join('\n');
  return pythonArrays(script, Object.fromEntries(inputs.map((img, i) => [`c${i}`, img])));
}

export interface ClaheWindowCase { img: Image; radius: number; clip: number; border: 'reflect' | 'reflect101' }

/** Sliding-window CLAHE (8-bit gray): OpenCV's tile rule on every pixel's mirrored (2R+1)² window histogram. */
export function claheWindowReference(cases: readonly ClaheWindowCase[]): Image[] {
  const o = windowReferences(cases.map((c, i) => `O['c${i}'] = clahe_window(I['c${i}'], ${c.radius}, ${c.clip}, '${c.border}')`), cases.map((c) => c.img));
  return cases.map((_, i) => o[`c${i}`]);
}

export interface IsodataWindowCase { img: Image; window: number; contrast: number }

/**
 * Adaptive isodata (8-bit gray) per pixel on its border-clipped window, and the fallback it uses: the whole image's
 * skimage.filters.threshold_isodata.
 */
export function isodataWindowReference(cases: readonly IsodataWindowCase[]): { output: Image; fallback: number }[] {
  const o = windowReferences(cases.flatMap((c, i) => [
    `O['f${i}'] = np.array([[int(threshold_isodata(I['c${i}']))]], np.uint8)`,
    `O['c${i}'] = isodata_window(I['c${i}'], ${c.window}, ${c.contrast}, int(O['f${i}'][0]))`,
  ]), cases.map((c) => c.img));
  return cases.map((_, i) => ({ output: o[`c${i}`], fallback: Number(o[`f${i}`].data[0]) }));
}

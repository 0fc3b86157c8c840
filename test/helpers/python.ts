import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Image } from '../../src/core/image.js';
import { decodeNpy, encodeNpy } from '../../src/io/npy.js';
import { PYTHON } from './parity.js';

/**
 * Reference arrays computed by Debian's Python (OpenCV 4.6, SciPy) on the test's own inputs, in one process:
 * `inputs` are saved as .npy and given to `script` as the dict `I` (numpy arrays, colour images as h×w×c), with `np`,
 * `cv2` and `ndimage` imported; the script fills the dict `O` with numpy arrays, returned as Images as .npy reads them
 * (an h×w×c array as a volume: `colour` reads it as channels). A failing script fails the test with Python's error.
 */
export function pythonArrays(script: string, inputs: Record<string, Image>): Record<string, Image> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-py-'));
  try {
    for (const [name, img] of Object.entries(inputs)) writeFileSync(join(dir, `in.${name}.npy`), encodeNpy(img));
    const prelude = [
      'import os, sys, numpy as np, cv2',
      'from scipy import ndimage',
      'D = sys.argv[1]',
      "I = {f[3:-4]: np.load(os.path.join(D, f)) for f in os.listdir(D) if f.startswith('in.')}",
      'O = {}',
    ].join('\n');
    const save = "\nfor k, v in O.items(): np.save(os.path.join(D, f'out.{k}.npy'), np.ascontiguousarray(v))\n";
    const r = spawnSync(PYTHON, ['-c', `${prelude}\n${script}${save}`, dir], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${PYTHON} reference failed: ${r.error?.message ?? r.stderr}`);
    const out: Record<string, Image> = {};
    for (const f of readdirSync(dir)) if (f.startsWith('out.')) out[f.slice(4, -4)] = decodeNpy(readFileSync(join(dir, f)), f);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An h×w×c array read from .npy (a 3D shape) as the colour image it is. */
export function colour(img: Image): Image {
  const [h, w, c] = img.shape as [number, number, number];
  return { ...img, shape: [h, w], channels: c as 3 | 4 };
}

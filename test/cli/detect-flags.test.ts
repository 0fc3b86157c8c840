// detect --max-size and --threshold against cv2.CascadeClassifier run now (test/detect/detect_flags_reference.py):
// --max-size is detectMultiScale's maxSize; --threshold keeps the windows whose last stage sum (detectMultiScale3's
// levelWeights) is ≥ T, before grouping. Raw windows (--min-neighbors 0) and grouped boxes (3), on real photos.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';

const FACE = fixture('detect', 'lbpcascade_frontalface.xml');
const IMAGES = ['astronaut.png', 'lfw_mosaic.png'].map((f) => fixture('detect', f));
const SCRIPT = fileURLToPath(new URL('../../../test/detect/detect_flags_reference.py', import.meta.url));

type Boxes = number[][];
type Ref = Record<string, { '0': Boxes; '3': Boxes; T?: number; all?: number }>;

function references(): Record<string, Ref> {
  const r = spawnSync(PYTHON, [SCRIPT, FACE, ...IMAGES], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${PYTHON} ${SCRIPT}: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, Ref>;
}

/** imgpu detect's boxes, sorted as the reference's, after checking the CPU and GPU agreed where both ran. */
function detected(device: string, image: string, ...flags: string[]): Boxes {
  const r = cli('detect', image, '--classifier', FACE, '--device', device, '--json', '--quiet', ...flags);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout.trim().split('\n')[0]) as { detections: { x: number; y: number; width: number; height: number }[]; identical?: boolean };
  if (device === 'both') assert.equal(j.identical, true, `CPU and GPU windows agree: ${flags.join(' ')}`);
  return j.detections.map((d) => [d.x, d.y, d.width, d.height]).sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
}

test('detect --max-size WxH is cv2 detectMultiScale\'s maxSize: raw windows and grouped boxes, astronaut (the face at 104 px becomes cv2\'s 94 px box under 100x100, none under 60x60) and a mosaic of faces', () => {
  const device = 'cpu';
  const refs = references();
  for (const image of IMAGES) {
    for (const max of [100, 60]) {
      const ref = refs[image][`max_${max}`];
      for (const n of ['0', '3'] as const) assert.deepEqual(detected(device, image, '--max-size', `${max}x${max}`, '--min-neighbors', n), ref[n], `${image} max ${max} min-neighbors ${n}`);
    }
  }
  assert.deepEqual(refs[IMAGES[0]].max_100['3'], [[177, 68, 94, 94]], 'the case shows maxSize at work');
});

test('detect --threshold T keeps the windows whose last stage sum is ≥ T (cv2 detectMultiScale3\'s levelWeights), before grouping as detectMultiScale groups', () => {
  const device = 'cpu';
  const refs = references();
  for (const image of IMAGES) {
    const ref = refs[image].threshold;
    assert.ok(ref['0'].length < ref.all!, 'T drops some windows');
    for (const n of ['0', '3'] as const) assert.deepEqual(detected(device, image, '--threshold', String(ref.T), '--min-neighbors', n), ref[n], `${image} threshold ${ref.T} min-neighbors ${n}`);
  }
});

// The GPU path's windows (its pyramid levels under --max-size, its sums under --threshold) are checked against the
// CPU's by --device both in one run: a GPU detection takes ~25 s of CPU time on lavapipe, the CPU's 0.7 s.
test('detect --max-size and --threshold on the GPU: --device both finds the CPU\'s windows (so cv2\'s, above), astronaut', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const refs = references();
  const kept = detected('both', IMAGES[0], '--max-size', '100x100', '--threshold', String(refs[IMAGES[0]].threshold.T), '--min-neighbors', '0');
  assert.deepEqual(kept, detected('cpu', IMAGES[0], '--max-size', '100x100', '--threshold', String(refs[IMAGES[0]].threshold.T), '--min-neighbors', '0'));
  const both = refs[IMAGES[0]].max_100['0'].filter((b) => refs[IMAGES[0]].threshold['0'].some((c) => c.every((v, i) => v === b[i])));
  assert.deepEqual(kept, both, 'the windows cv2 keeps under both rules');
});

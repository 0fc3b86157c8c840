/**
 * Colour filters and morphology per channel (issue 40 item 3): `node dist/bench/colour-filters.js [--size 4000x3000]
 * [--reps 5]`. A colour photo (test/fixtures/images/chelsea.png resized by sharp, 8-bit RGB) through
 * `filter gauss:2 --saturate --truncate 3` (cv2.GaussianBlur's fixed point), `box:5x3 --saturate` (cv2.blur) and
 * `morph erode rect:5x5` (cv2.erode): host image in and out, the CPU path on all cores and the GPU path, colour and
 * its gray image, medians of `reps` after one warm-up; cv2 on the same image in the same run (one thread and all).
 * Prints one JSON object per line.
 */
import { spawnSync } from 'node:child_process';
import sharp from 'sharp';
import { allocPixels, toGray, type Image } from '../src/core/image.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { filter } from '../src/ops/convolve/index.js';
import { morph } from '../src/ops/morph/index.js';
import { repeat } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const [w, h] = arg('size', '4000x3000').split('x').map(Number);
const reps = Number(arg('reps', '5'));
const SRC = 'test/fixtures/images/chelsea.png';

const { data } = await sharp(SRC).resize(w, h, { fit: 'fill' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
const pixels = allocPixels('uint8', w * h * 3);
pixels.set(data.subarray(0, w * h * 3));
const colour: Image = { data: pixels, shape: [h, w], channels: 3, dtype: 'uint8' };
const gray = toGray(colour);
const pool = new NodeWorkerPool();
const gpu = await createNodeGpuContext();
const OPS: [string, (img: Image, on: object) => Promise<unknown>, string][] = [
  ['gauss:2 --saturate --truncate 3', (img, on) => filter(img, 'gauss:2', { saturate: true, truncate: 3, border: 'reflect101', ...on }), 'cv2.GaussianBlur(x, (0, 0), 2)'],
  ['box:5x3 --saturate', (img, on) => filter(img, 'box:5x3', { saturate: true, border: 'reflect101', ...on }), 'cv2.blur(x, (5, 3))'],
  ['morph erode rect:5x5', (img, on) => morph(img, { op: 'erode', se: 'rect:5x5', ...on }), 'cv2.erode(x, np.ones((5, 5), np.uint8))'],
];
for (const [name, run, cv] of OPS) {
  const row: Record<string, unknown> = { op: name, size: `${w}x${h}` };
  for (const [which, img] of [['colour', colour], ['gray', gray]] as const) {
    for (const [path, on] of [['cpu', { pool }], ['gpu', { gpu }]] as const) {
      await run(img, on); // warm-up: shader compilation, JIT
      row[`${which}_${path}_ms`] = (await repeat(reps, async () => { const t0 = performance.now(); await run(img, on); return performance.now() - t0; })).median;
    }
  }
  const py = spawnSync('/usr/bin/python3', ['-c', `
import cv2, numpy as np, time, sys
x = cv2.resize(cv2.imread('${SRC}'), (${w}, ${h}))
for threads in (1, cv2.getNumberOfCPUs()):
    cv2.setNumThreads(threads)
    ${cv}
    t = []
    for _ in range(${reps}):
        t0 = time.perf_counter(); ${cv}; t.append((time.perf_counter() - t0) * 1000)
    print(threads, sorted(t)[len(t) // 2])
`], { encoding: 'utf8' });
  for (const line of py.stdout.trim().split('\n')) {
    const [threads, ms] = line.split(' ');
    row[`cv2_${threads}threads_ms`] = Number(ms);
  }
  console.log(JSON.stringify(row));
}
await pool.close();

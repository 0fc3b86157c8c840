// Issue 40: a gray photo under an operation that takes colour is read as cv2.imread(IMREAD_COLOR) reads it — three
// equal channels — so the file written is the one cv2.imwrite writes for the same operation, byte for byte.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { replicateGpu } from '../../src/core/gpu/colour.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { createImage } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';

const GRAY_JPEG = fixture('jpeg', 'camera_gray.jpg');
const GRAY_PNG = fixture('jpeg', 'chelsea_q90_gray.png');

/** The files cv2 writes for `ops` (name → an expression of x, the image cv2.imread returns) of `input`, into `dir`. */
function cv2Files(dir: string, input: string, ops: Record<string, string>, ext: string): void {
  const lines = Object.entries(ops).map(([n, e]) => `cv2.imwrite(os.path.join(D, '${n}${ext}'), ${e})`);
  const script = ['import os, sys, numpy as np, cv2', 'D = sys.argv[1]', `x = cv2.imread('${input}')`, 'assert x.shape[2] == 3', ...lines].join('\n');
  const r = spawnSync(PYTHON, ['-c', script, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

const CV2 = {
  gauss: 'cv2.GaussianBlur(x, (0, 0), 2)',
  erode: 'cv2.erode(x, np.ones((5, 5), np.uint8))',
  box: 'cv2.blur(x, (5, 5))',
};
const ARGS: Record<keyof typeof CV2, string[]> = {
  gauss: ['filter', '--filter', 'gauss:2', '--saturate', '--truncate', '3', '--border', 'reflect101'],
  erode: ['morph', 'erode', '--se', 'rect:5x5'],
  box: ['filter', '--filter', 'box:5', '--saturate', '--border', 'reflect101'],
};

function sameFile(got: string, want: string, what: string): void {
  assert.ok(readFileSync(got).equals(readFileSync(want)), `${what}: ${got} is not the file cv2.imwrite wrote (${want})`);
}


test('a gray JPEG under filter and morph gives cv2.imread\'s three channels: the files cv2.imwrite writes (JPEG and PNG out), byte for byte, on the CPU; a gray PNG stays one channel', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-gray3-'));
  for (const [input, ext] of [[GRAY_JPEG, '.jpg'], [GRAY_JPEG, '.png']] as const) {
    cv2Files(dir, input, CV2, `.cv2${ext}`);
    for (const [name, args] of Object.entries(ARGS)) {
      const out = join(dir, `${name}${ext}`);
      const [cmd, ...rest] = args;
      const r = cli(cmd, ...(cmd === 'morph' ? [rest[0], input, out, ...rest.slice(1)] : [input, out, ...rest]), '--device', 'cpu');
      assert.equal(r.status, 0, r.stderr);
      sameFile(out, join(dir, `${name}.cv2${ext}`), `${name} of ${input}`);
    }
  }
  const png = join(dir, 'png-erode.png');
  const r = cli('morph', 'erode', GRAY_PNG, png, '--se', 'rect:5x5', '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  assert.equal((await readImage(png)).channels, 1, 'a gray PNG (a mask, a measurement more often than a photo) stays one channel');
});

test('--keep-gray keeps a gray photo one channel (the pixels of cv2 on IMREAD_GRAYSCALE), and gray operations are unchanged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-keepgray-'));
  const r = cli('morph', 'erode', GRAY_JPEG, join(dir, 'k.png'), '--se', 'rect:5x5', '--keep-gray', '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  const kept = await readImage(join(dir, 'k.png'));
  assert.equal(kept.channels, 1);
  const script = `import cv2, numpy as np, sys\ncv2.imwrite(sys.argv[1], cv2.erode(cv2.imread('${GRAY_JPEG}', cv2.IMREAD_GRAYSCALE), np.ones((5, 5), np.uint8)))`;
  assert.equal(spawnSync(PYTHON, ['-c', script, join(dir, 'want.png')]).status, 0);
  assert.deepEqual(kept.data, (await readImage(join(dir, 'want.png'))).data);
  const d = cli('morph', 'erode', GRAY_JPEG, join(dir, 'd.png'), '--se', 'rect:5x5', '--device', 'cpu');
  assert.equal(d.status, 0, d.stderr);
  assert.equal((await readImage(join(dir, 'd.png'))).channels, 3, 'the default: three channels');
  const e = cli('equalize', GRAY_JPEG, join(dir, 'e.png'), '--device', 'cpu');
  assert.equal(e.status, 0, e.stderr);
  assert.equal((await readImage(join(dir, 'e.png'))).channels, 1, 'equalize works on gray: one channel out');
});

test('a batch on the GPU (gray JPEG decoded on the GPU and made three channels there) writes cv2.imwrite\'s files for gray and colour photos alike; --keep-gray redoes the gray one', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-gray3-batch-'));
  const inDir = join(dir, 'in');
  mkdirSync(inDir);
  for (const f of ['camera_gray.jpg', 'chelsea_q90.jpg']) copyFileSync(fixture('jpeg', f), join(inDir, f));
  for (const f of ['camera_gray', 'chelsea_q90']) cv2Files(dir, join(inDir, `${f}.jpg`), { [`${f}.erode`]: CV2.erode }, '.jpg');
  const out = join(dir, 'out');
  const r = cli('morph', 'erode', inDir, out, '--se', 'rect:5x5', '--device', 'gpu', '--jpeg', 'gpu', '--json', '--quiet');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!).jpeg, { gpu: 2 }, 'both decoded on the GPU');
  for (const f of ['camera_gray', 'chelsea_q90']) sameFile(join(out, `${f}.jpg`), join(dir, `${f}.erode.jpg`), `batch erode of ${f}`);
  const k = cli('morph', 'erode', inDir, out, '--se', 'rect:5x5', '--device', 'gpu', '--jpeg', 'gpu', '--keep-gray', '--json', '--quiet');
  assert.equal(k.status, 0, k.stderr);
  assert.equal(JSON.parse(k.stdout.trim().split('\n').pop()!).processed, 2, '--keep-gray is another recipe: both redone');
  assert.equal((await readImage(join(out, 'camera_gray.jpg'))).channels, 1);
});

test('replicateGpu: a resident 8- and 16-bit plane as three and four equal channels, odd sizes', async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const dtype of ['uint8', 'uint16'] as const) {
    for (const channels of [3, 4] as const) {
      const img = createImage([37, 53], dtype);
      for (let i = 0; i < img.data.length; i++) img.data[i] = (i * 7919) % (dtype === 'uint8' ? 256 : 65536);
      const g = await GpuImage.upload(ctx, img);
      const timer = new KernelTimer(ctx, false);
      const rec = new Recording(ctx, timer, 'test', true);
      const out = await replicateGpu(g, channels, rec);
      rec.submit();
      const host = await out.toHost();
      timer.destroy();
      out.release();
      g.release();
      assert.equal(host.channels, channels);
      for (let i = 0; i < img.data.length; i++) for (let k = 0; k < channels; k++) assert.equal(host.data[i * channels + k], img.data[i], `${dtype} ×${channels} pixel ${i} channel ${k}`);
    }
  }
});

// The mean adaptive threshold's fused GPU kernel (ops/threshold/box-fused.wgsl.ts, issue 22): GPU = CPU = cv2 on the
// sizes where tiles, halos and packed words go wrong, every tile shape and split, and the fallbacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { Recording } from '../../src/core/gpu/recording.js';
import { KernelTimer } from '../../src/core/gpu/timer.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { createNodeGpuContext } from '../../src/node/gpu.js';
import type { BoxTile } from '../../src/ops/threshold/box-fused.wgsl.js';
import { DEFAULT_MEAN_SCHEDULE, FUSED_MAX_WINDOW, fusedBoxPipeline, fusedTile, localThresholdGpu } from '../../src/ops/threshold/gpu.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { randomBytes } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { References, type ParityCase } from '../helpers/parity.js';

function assertSame(a: Image, b: Image, what: string): void {
  const c = compareImages(a, b);
  assert.ok(c.identical, `${what}: ${c.mismatches} pixels differ (first at ${c.firstMismatch})`);
}

const OFFSETS = [-3.5, 0, 2.5, 7, -300, 300];
const WINDOWS = [3, 5, 11, 31, FUSED_MAX_WINDOW];
// Smaller than a tile; 1 pixel wide or tall; widths ≡ 1, 2, 3 (mod 4); several tiles each way (128 × 16 by default).
const SHAPES: [number, number][] = [[1, 1], [1, 13], [13, 1], [2, 3], [5, 7], [4, 8], [33, 257], [70, 1030]];

/** Every (shape, window) with an offset taken in turn: each shape meets every window and most offsets. */
const CASES: ParityCase[] = SHAPES.flatMap(([h, w], i) => WINDOWS.map((window, j): ParityCase => {
  const offset = OFFSETS[(i + j) % OFFSETS.length];
  const params = { method: 'mean', window, offset };
  return {
    id: `mean-fused-${i}-${j}`, family: 'mean-fused', seed: i, op: 'threshold', params, src: imageFrom(randomBytes(h * w, 40 + i), [h, w]), how: `${h}×${w} noise`,
    ref: { fn: 'local', args: params, what: 'cv2.adaptiveThreshold(ADAPTIVE_THRESH_MEAN_C, THRESH_BINARY)' },
  };
}));
const refs = new References(CASES);
test.after(() => refs.close());

test('mean, fused kernel: GPU = CPU = cv2.adaptiveThreshold on odd sizes (1 pixel wide or tall, smaller than a tile, widths not multiples of 4, windows 3–63 past the image, offsets ±)', async (t) => {
  const gpu = await gpuOrSkip(t);
  const ref = await refs.get(t);
  for (const c of CASES) {
    const p = c.params as { window: number; offset: number };
    const what = `${c.how} window ${p.window} offset ${p.offset}`;
    const cpu = await threshold(c.src, { method: 'mean', ...p });
    if (ref) assertSame(cpu.output, refs.array(c.id, 'image'), `CPU = cv2, ${what}`);
    if (!gpu) continue;
    const r = await threshold(c.src, { method: 'mean', ...p, gpu, profile: true });
    assert.ok(r.timings.kernels.some((k) => k.name === 'threshold.mean.fused'), `${what}: the fused kernel ran (${r.timings.kernels.map((k) => k.name)})`);
    assertSame(r.output, cpu.output, `GPU = CPU, ${what}`);
  }
});

/** The mean threshold of `img` on the GPU with a given tile (the schedule's other fields as the default's). */
async function withTile(gpu: GpuContext, img: Image, window: number, offset: number, tile: BoxTile): Promise<Image> {
  const dev = await GpuImage.upload(gpu, img);
  const timer = new KernelTimer(gpu, false);
  const rec = new Recording(gpu, timer, 'mean fused test');
  const out = await localThresholdGpu(dev, rec, img.shape as [number, number], 'mean', window, offset, { ...DEFAULT_MEAN_SCHEDULE, tile });
  rec.submit();
  const host = await out.toHost();
  out.release();
  dev.release();
  timer.destroy();
  return host;
}

test('mean, fused kernel: every tile shape and split of the work gives the CPU\'s image (tile edges in both directions, odd widths)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const tiles: BoxTile[] = [
    { words: 1, rows: 1, segRows: 1, run: 1, stage: false }, { words: 2, rows: 3, segRows: 2, run: 1, stage: true }, { words: 3, rows: 5, segRows: 1, run: 3, stage: false },
    { words: 4, rows: 8, segRows: 8, run: 4, stage: true }, { words: 8, rows: 7, segRows: 3, run: 2, stage: true }, { words: 64, rows: 16, segRows: 16, run: 2, stage: false },
    { words: 64, rows: 16, segRows: 4, run: 2, stage: true },
  ];
  for (const [h, w] of [[45, 83], [40, 96], [9, 2]] as [number, number][]) {
    const img = imageFrom(randomBytes(h * w, h + w), [h, w]);
    for (const [i, window] of [3, 31].entries()) {
      const offset = OFFSETS[i];
      const cpu = (await threshold(img, { method: 'mean', window, offset })).output;
      for (const tile of tiles) {
        assert.deepEqual(fusedTile(gpu, window, { ...DEFAULT_MEAN_SCHEDULE, tile }), tile);
        assertSame(await withTile(gpu, img, window, offset, tile), cpu, `${h}×${w} window ${window} tile ${JSON.stringify(tile)}`);
      }
    }
  }
});

test('mean: the fused tile shrinks to the workgroup memory; windows beyond the fused kernel\'s run the separable passes (same image)', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const small = await createNodeGpuContext({ limits: { maxComputeWorkgroupStorageSize: 4096 } });
  t.after(() => small.destroy());
  const img = imageFrom(randomBytes(70 * 301, 5), [70, 301]);
  for (const window of [11, FUSED_MAX_WINDOW]) {
    const tile = fusedTile(small, window, DEFAULT_MEAN_SCHEDULE);
    assert.ok(tile && tile.rows < DEFAULT_MEAN_SCHEDULE.tile.rows, `window ${window}: rows cut to fit 4096 bytes (${JSON.stringify(tile)})`);
    // Window 63's input rows do not fit 4 KiB even for one output row: its tile is unstaged.
    assert.equal(tile.stage, window < FUSED_MAX_WINDOW, `window ${window}: staged`);
    const r = await threshold(img, { method: 'mean', window, offset: 1, gpu: small, profile: true });
    assert.ok(r.timings.kernels.some((k) => k.name === 'threshold.mean.fused'));
    assertSame(r.output, (await threshold(img, { method: 'mean', window, offset: 1 })).output, `window ${window}, 4 KiB workgroup memory`);
  }
  assert.equal(fusedTile(small, FUSED_MAX_WINDOW + 2, DEFAULT_MEAN_SCHEDULE), undefined);
  const r = await threshold(img, { method: 'mean', window: FUSED_MAX_WINDOW + 2, offset: 1, gpu: small, profile: true });
  assert.deepEqual(r.timings.kernels.map((k) => k.name), ['threshold.mean.rows', 'threshold.mean.cols', 'threshold.binarize']);
  assertSame(r.output, (await threshold(img, { method: 'mean', window: FUSED_MAX_WINDOW + 2, offset: 1 })).output, `window ${FUSED_MAX_WINDOW + 2}`);
});

test('mean, fused kernel: a staged and an unstaged tile of the same shape are two kernels (the H100 search timed one for both)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const tile: BoxTile = { words: 4, rows: 4, segRows: 2, run: 1, stage: true };
  const staged = await fusedBoxPipeline(gpu, 5, tile);
  assert.notEqual(await fusedBoxPipeline(gpu, 5, { ...tile, stage: false }), staged);
  assert.equal(await fusedBoxPipeline(gpu, 5, { ...tile }), staged, 'compiled once');
});

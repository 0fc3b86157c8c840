import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CpuLane, defaultLaneSize, SplitQueue } from '../../src/engine/batch/lane.js';
import { laneSize } from '../../src/engine/batch/run.js';
import { COMMANDS } from '../../src/engine/commands.js';
import type { ImageOperation } from '../../src/core/op.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { parsePipeline } from '../../src/ops/pipeline.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { requiredOrSkip } from '../helpers/require.js';

const job = (input: string, bytes: number) => ({ input, bytes });

test('SplitQueue: the GPU takes the largest first, the lane the smallest, and no job is taken twice', () => {
  const q = new SplitQueue([job('b', 20), job('a', 10), job('d', 40), job('c', 30)]);
  assert.equal(q.remaining, 4);
  assert.equal(q.largest.take()?.input, 'd');
  assert.equal(q.peekSmallest()?.input, 'a');
  assert.equal(q.takeSmallest()?.input, 'a');
  assert.equal(q.largest.take()?.input, 'c');
  assert.equal(q.takeSmallest()?.input, 'b');
  assert.equal(q.remaining, 0);
  assert.equal(q.largest.take(), undefined);
  assert.equal(q.takeSmallest(), undefined);
});

test('CpuLane takes the smallest job only while the CPU would finish it before the GPU finishes the rest, from rates measured in the batch', async () => {
  // Ten jobs of 1000 bytes; the GPU's reads ahead hold none.
  const q = new SplitQueue(Array.from({ length: 10 }, (_, i) => job(`j${i}`, 1000)));
  let workerMs = 0;
  let first = false;
  const lane = new CpuLane(4, q, () => 0, async () => ({ ms: workerMs, first }));
  // Before anything ran: 1000 bytes at the prior 60 ns a byte (0.06 ms) against the prior 5 ms for each of 9 GPU jobs.
  const a = lane.take()!;
  assert.ok(a);
  // A worker's first image (its code compiling) does not set the rate, however slow.
  first = true;
  workerMs = 1e6;
  await lane.run(a);
  assert.ok(lane.take(), 'the first image of a worker is not the rate');
  // 100 ms for 1000 bytes: 0.1 ms a byte. The GPU's rate after 4 images 2 ms apart: 2 ms an image.
  first = false;
  workerMs = 100;
  await lane.run(job('x', 1000));
  for (const t of [0, 2, 4, 6]) lane.gpuDone(t);
  // 8 jobs left: the GPU needs 2 × 7 = 14 ms for the rest, the CPU 100 ms for one: it is left to the GPU.
  assert.equal(lane.take(), undefined);
  assert.equal(q.remaining, 8, 'nothing taken');
  assert.equal(lane.cpuImages, 2);
  assert.equal(lane.gpuImages, 4);
});

test('the lane by default: half the cores where --device auto and --jpeg auto found a hardware GPU, the batch is of JPEG photos and its steps are light on the CPU; none where the GPU was asked for every image', (t) => {
  if (!requiredOrSkip(t, jpegCoefDecoder(), 'the GPU JPEG decoder\'s entropy stage is not built (auto takes the CPU path without it; scripts/build-native.mjs)')) return;
  const hardware = { adapter: { software: false } } as GpuContext;
  const gpuAuto = { gpu: hardware, cpu: false, auto: true };
  const cmd = COMMANDS.equalize as ImageOperation;
  const laneSize0 = (o: Parameters<typeof laneSize>[0], exec: Parameters<typeof laneSize>[1], c: ImageOperation, todo: Parameters<typeof laneSize>[4]) => laneSize(o, exec, c, {}, todo);
  const photos = [{ input: 'a.jpg', output: 'o/a.jpg' }, { input: 'b.JPEG', output: 'o/b.jpeg' }, { input: 'c.png', output: 'o/c.png' }];
  assert.equal(laneSize0({}, gpuAuto, cmd, photos), defaultLaneSize());
  assert.equal(laneSize0({ cpuLane: 0 }, gpuAuto, cmd, photos), 0);
  assert.equal(laneSize0({ jpeg: 'gpu' }, gpuAuto, cmd, photos), 0, '--jpeg gpu');
  assert.equal(laneSize0({}, { ...gpuAuto, auto: false }, cmd, photos), 0, '--device gpu');
  assert.equal(laneSize0({ cpuLane: 3 }, { ...gpuAuto, auto: false }, cmd, photos), 3, '--device gpu --cpu-lane 3');
  assert.equal(laneSize0({ cpuLane: 3 }, { ...gpuAuto, cpu: true }, cmd, photos), 0, '--device both');
  assert.equal(laneSize0({}, { ...gpuAuto, gpu: { adapter: { software: true } } as GpuContext }, cmd, photos), 0, 'a software adapter');
  assert.equal(laneSize0({}, gpuAuto, cmd, [...photos, { input: 'd.png', output: 'o/d.png' }, { input: 'e.tif', output: 'o/e.tif' }]), 0, 'mostly not JPEG photos');
  assert.equal(laneSize0({}, { ...gpuAuto, gpu: undefined }, cmd, photos), 0, 'no GPU');
  // Steps light on the CPU only: a filter's or a pipeline with one may cost the CPU seconds an image.
  const pipeline = COMMANDS.pipeline as ImageOperation;
  const chain = (text: string) => ({ steps: parsePipeline(text) });
  assert.equal(laneSize({}, gpuAuto, pipeline, chain('equalize | threshold --method otsu'), photos), defaultLaneSize());
  assert.equal(laneSize({}, gpuAuto, pipeline, chain('equalize | filter --filter sobel'), photos), 0, 'a pipeline with a filter');
  assert.equal(laneSize({}, gpuAuto, COMMANDS.morph as ImageOperation, {}, photos), 0, 'morphology');
  const threshold = COMMANDS.threshold as ImageOperation;
  assert.equal(laneSize({}, gpuAuto, threshold, { method: 'isodata' }, photos), defaultLaneSize(), 'a global threshold');
  assert.equal(laneSize({}, gpuAuto, threshold, {}, photos), defaultLaneSize(), 'Otsu, the default method');
  assert.equal(laneSize({}, gpuAuto, threshold, { method: 'adaptive' }, photos), 0, 'a windowed threshold');
  assert.equal(laneSize({}, gpuAuto, pipeline, chain('equalize | threshold --method gaussian --window 31'), photos), 0, 'a windowed threshold in a pipeline');
  assert.equal(laneSize({ cpuLane: 2 }, gpuAuto, COMMANDS.morph as ImageOperation, {}, photos), 2, 'asked for');
});

/** A folder of six JPEG photos of different sizes, and a damaged one (the smallest: the lane's first). */
function photos(damaged: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-lane-in-'));
  for (const f of ['chelsea_q90.jpg', 'camera_gray.jpg', 'crop_o1.jpg', 'crop_o2.jpg', 'crop_o3.jpg', 'camera_q95_cv2.jpg']) copyFileSync(fixture('jpeg', f), join(dir, f));
  if (damaged) writeFileSync(join(dir, 'damaged.jpg'), readFileSync(fixture('jpeg', 'crop_o1.jpg')).subarray(0, 200));
  return dir;
}

/** The JPEG files of a folder, by name. */
function outputs(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).filter((f) => f.endsWith('.jpg')).map((f) => [f, readFileSync(join(dir, f))]));
}

test('--cpu-lane: the lane processes the smallest photos whole on the CPU beside the GPU, with the bytes of the GPU alone and of the CPU alone (Otsu, a pipeline)', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = photos(false);
  for (const args of [['threshold', '--method', 'otsu'], ['pipeline', 'equalize | threshold --method otsu']]) {
    const [op, ...rest] = args;
    const run = (...flags: string[]) => {
      const out = mkdtempSync(join(tmpdir(), 'imgpu-lane-out-'));
      const positional = op === 'pipeline' ? [inDir, out, ...rest] : [inDir, out];
      const r = cli(op, ...positional, ...(op === 'pipeline' ? [] : rest), '--json', '--quiet', ...flags);
      assert.equal(r.status, 0, r.stderr);
      return { summary: JSON.parse(r.stdout.trim().split('\n').pop()!), files: outputs(out) };
    };
    const lane = run('--device', 'gpu', '--cpu-lane', '2');
    const gpu = run('--device', 'gpu', '--cpu-lane', '0');
    const cpu = run('--device', 'cpu');
    // The lane's first two jobs are taken before any GPU image (the priors allow them), the GPU reads the rest ahead.
    assert.deepEqual(lane.summary.lanes, { gpu: 4, cpu: 2 }, `${op}: ${JSON.stringify(lane.summary)}`);
    assert.equal(gpu.summary.lanes, undefined, 'no lane with --cpu-lane 0');
    assert.equal(lane.files.size, 6);
    for (const [f, bytes] of lane.files) {
      assert.ok(bytes.equals(gpu.files.get(f)!), `${op} ${f}: the GPU's bytes`);
      assert.ok(bytes.equals(cpu.files.get(f)!), `${op} ${f}: the CPU's bytes`);
    }
  }
});

test('--cpu-lane: a damaged photo the lane takes is reported and skipped (exit 9), the others written; --device gpu alone has no lane', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = photos(true);
  const out = mkdtempSync(join(tmpdir(), 'imgpu-lane-out-'));
  const r = cli('equalize', inDir, out, '--device', 'gpu', '--cpu-lane', '1', '--quiet');
  assert.equal(r.status, 9, r.stderr);
  assert.match(r.stderr, /^imgpu: skipped .*damaged\.jpg: /m);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(outputs(out).size, 6);
  const plain = cli('equalize', photos(false), mkdtempSync(join(tmpdir(), 'imgpu-lane-out-')), '--device', 'gpu', '--json', '--quiet');
  assert.equal(plain.status, 0, plain.stderr);
  assert.equal(JSON.parse(plain.stdout.trim().split('\n').pop()!).lanes, undefined, '--device gpu asks for the GPU for every image');
});

test('--cpu-lane takes auto or a whole number (exit 2 before any work)', () => {
  assertOneLineError(cli('equalize', 'in', 'out', '--cpu-lane', 'many'), 2, /--cpu-lane must be auto or an integer 0–256, got 'many'/);
  assertOneLineError(cli('equalize', 'in', 'out', '--cpu-lane', '-1'), 2, /--cpu-lane must be auto/);
});

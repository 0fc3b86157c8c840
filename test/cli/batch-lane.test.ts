import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CpuLane, SplitQueue } from '../../src/engine/batch/lane.js';
import { laneSize } from '../../src/engine/batch/run.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

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

test('the lane by default: none (auto); --cpu-lane N where the GPU runs the command alone; none under --device cpu or both, or without a GPU', () => {
  const hardware = { adapter: { software: false } } as GpuContext;
  const gpu = { gpu: hardware, cpu: false };
  assert.equal(laneSize({}, gpu), 0, 'auto');
  assert.equal(laneSize({ cpuLane: 'auto' }, gpu), 0, 'auto, asked');
  assert.equal(laneSize({ cpuLane: 0 }, gpu), 0);
  assert.equal(laneSize({ cpuLane: 3 }, gpu), 3, '--cpu-lane 3');
  assert.equal(laneSize({ cpuLane: 3 }, { ...gpu, cpu: true }), 0, '--device both');
  assert.equal(laneSize({ cpuLane: 3 }, { ...gpu, gpu: undefined }), 0, 'no GPU');
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
    // The lane's first two jobs are taken before any GPU image (the priors allow them); later ones only while the
    // measured rates say the CPU finishes first, which depends on how fast this machine's GPU side is at that moment.
    const { gpu: onGpu, cpu: onCpu } = lane.summary.lanes as { gpu: number; cpu: number };
    assert.ok(onCpu >= 2 && onGpu >= 1 && onGpu + onCpu === 6, `${op}: ${JSON.stringify(lane.summary)}`);
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

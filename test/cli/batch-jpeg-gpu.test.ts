import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { batchFormat, batchRecipe, type BatchOptions } from '../../src/engine/batch/plan.js';
import { runBatch } from '../../src/engine/batch/run.js';
import { COMMANDS } from '../../src/engine/commands.js';
import type { ImageOperation } from '../../src/core/op.js';
import { acquire } from '../../src/engine/context.js';
import { readbackCount } from '../../src/core/gpu/transfer.js';
import { resolveParams } from '../../src/core/params.js';
import { nativeCoefEncoder } from '../../src/node/jpeg-encode-gpu.js';
import { entropyTuning } from '../../src/codecs/jpeg/encode/huffman-encode.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { otsuKernelCompiled } from '../../src/ops/threshold/gpu.js';

const skip = nativeCoefEncoder() || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'the GPU encoder\'s entropy coder is not built (scripts/build-native.mjs)';

/** GPU readbacks (transfer.ts readbackCount) of the last batch() run. */
let lastReadbacks = 0;

/** Runs `op` over `inDir` into a fresh folder of JPEGs with the batch option `jpeg`, on the GPU; the folder's outputs. */
async function batch(op: string, params: object, inDir: string, jpeg: BatchOptions['jpeg'], prepare?: (gpu: GpuContext) => Promise<void>): Promise<Map<string, Buffer>> {
  const out = mkdtempSync(join(tmpdir(), `imgpu-batch-jpeg-${jpeg ?? 'default'}-`));
  const cmd = COMMANDS[op] as ImageOperation;
  const p = resolveParams(op, cmd.params, params);
  const codec = { format: batchFormat('jpg'), read: {}, write: { quality: 90 } };
  const o: BatchOptions = { recursive: false, overwrite: true, quiet: true, json: false, ...codec, recipe: batchRecipe(op, p, codec), jpeg };
  const exec = await acquire('gpu', new Map());
  try {
    await prepare?.(exec.gpu!);
    const summary = await runBatch(op, cmd, [inDir], out, p, exec, o);
    assert.deepEqual([summary.failed, summary.disagreed ?? 0], [[], 0], 'no image failed');
    lastReadbacks = readbackCount(exec.gpu!);
  } finally {
    await exec.close();
  }
  return new Map(readdirSync(out).filter((f) => f.endsWith('.jpg')).map((f) => [f, readFileSync(join(out, f))]));
}

test('batch with jpeg \'gpu\': JPEG outputs encoded on the GPU are the bytes of jpeg \'cpu\' (libjpeg-turbo on the codec workers; gray and colour results; colour CLAHE, converted on the device)', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = mkdtempSync(join(tmpdir(), 'imgpu-batch-jpeg-in-'));
  mkdirSync(inDir, { recursive: true });
  for (const f of ['chelsea.png', 'camera_301x256.png', 'coins.png']) copyFileSync(fixture('images', f), join(inDir, f));
  copyFileSync(fixture('jpeg', 'chelsea_q90.jpg'), join(inDir, 'chelsea_q90.jpg'));
  // equalize works on gray (colour inputs read as gray); gamma keeps RGB: 4:2:0 colour JPEGs; CLAHE works on the
  // lightness: its colour photos decoded on the GPU go YCrCb's Y and back there.
  for (const [op, params] of [['equalize', {}], ['gamma', { gamma: 0.5 }], ['clahe', {}]] as const) {
    // 'cpu', not the default: 'auto' is 'gpu' on a hardware adapter, where the comparison would be of the GPU path with itself.
    const gpu = await batch(op, params, inDir, 'gpu');
    const cpu = await batch(op, params, inDir, 'cpu');
    assert.equal(gpu.size, 4, `${op}: four outputs`);
    assert.deepEqual([...gpu.keys()].sort(), [...cpu.keys()].sort());
    for (const [f, bytes] of gpu) assert.ok(bytes.equals(cpu.get(f)!), `${op} ${f}: the same bytes`);
  }
});

test('batch Otsu with jpeg \'gpu\': the threshold is not read back per photo, and the files are the single-image command\'s', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = mkdtempSync(join(tmpdir(), 'imgpu-batch-jpeg-in-'));
  const names = ['chelsea_q90.jpg', 'camera_gray.jpg', 'crop_o1.jpg'];
  for (const f of names) copyFileSync(fixture('jpeg', f), join(inDir, f));
  // The encoder's coded-bytes capacity, guessed from the photos coded before on the context, is made ample: photos
  // encoded concurrently otherwise see the guess raised or not by the time theirs starts, and a photo whose bytes
  // outgrow it is packed again, with a second readback — a count that varied with timing (equalize's outputs code to
  // more bytes).
  const saved = { ...entropyTuning };
  Object.assign(entropyTuning, { capacityScale: 8 });
  let otsu: Map<string, Buffer>;
  try {
    // Once its kernel is compiled: until then Otsu runs as steps, reading each photo's histogram back (otsuKernelReady).
    otsu = await batch('threshold', { method: 'otsu' }, inDir, 'gpu', otsuKernelCompiled);
    const otsuReadbacks = lastReadbacks;
    await batch('equalize', {}, inDir, 'gpu');
    // Each photo's decode reads its status back and its encode its coded bytes, in both; Otsu read its threshold
    // besides, a GPU wait per photo.
    assert.equal(otsuReadbacks, lastReadbacks, 'Otsu reads back no more than equalize (whose GPU path reads nothing besides the decode and the encode)');
    // A fresh context: the batch neither waits for the compile (seconds where the driver's cache lacks the kernel) nor
    // starts it; its photos run as steps, in place in the photo's recording: the same files.
    const meanwhile = await batch('threshold', { method: 'otsu' }, inDir, 'gpu');
    assert.ok(lastReadbacks > otsuReadbacks, `the steps read a histogram back (${lastReadbacks} readbacks, ${otsuReadbacks} with the kernel)`);
    for (const [f, bytes] of otsu) assert.ok(bytes.equals(meanwhile.get(f)!), `${f}: the same bytes while the kernel compiles`);
  } finally {
    Object.assign(entropyTuning, saved);
  }
  const single = mkdtempSync(join(tmpdir(), 'imgpu-batch-jpeg-single-'));
  for (const f of names) {
    const r = cli('threshold', join(inDir, f), join(single, f), '--method', 'otsu', '--device', 'gpu', '--quality', '90');
    assert.equal(r.status, 0, r.stderr);
    assert.ok(otsu.get(f)!.equals(readFileSync(join(single, f))), `${f}: the batch's bytes are the single-image command's`);
  }
});

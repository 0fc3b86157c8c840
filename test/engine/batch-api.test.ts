import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { batch, type BatchEvent, type BatchInput } from '../../src/batch.js';
import { InvalidArgumentError, UnsupportedFormatError } from '../../src/core/errors.js';
import { fixture } from '../helpers/fixtures.js';

// imgpu/batch from code: inputs as bytes (an AsyncIterable) and outputs to a sink give the bytes a folder batch
// writes, with an event for every input; options are checked before any work.

const PHOTOS = ['camera_gray.jpg', 'chelsea_q90.jpg', 'crop_o1.jpg'];
const CORRUPT = Buffer.concat([readFileSync(fixture('jpeg', 'chelsea_q90.jpg')).subarray(0, 600), Buffer.alloc(64, 0)]);

async function collect(run: AsyncIterable<BatchEvent>): Promise<BatchEvent[]> {
  const events: BatchEvent[] = [];
  for await (const e of run) events.push(e);
  return events;
}

test('batch: iterable inputs into a sink give the bytes of a folder batch, an event for every input (a damaged one and a bad id failed, typed), staged in groups', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-api-'));
  mkdirSync(join(dir, 'in', 'day2'), { recursive: true });
  for (const f of PHOTOS) copyFileSync(fixture('jpeg', f), join(dir, 'in', f === 'crop_o1.jpg' ? join('day2', f) : f));
  writeFileSync(join(dir, 'in', 'broken.jpg'), CORRUPT);
  const folder = batch('equalize | threshold --method otsu', { inputs: [join(dir, 'in')], out: join(dir, 'out'), recursive: true, threads: 2, codecThreads: 2 });
  const folderEvents = await collect(folder);
  const summary = await folder.done;
  assert.equal(summary.processed, 3);
  assert.deepEqual(folderEvents.filter((e) => e.type === 'failed').map((e) => e.id), [join(dir, 'in', 'broken.jpg')]);

  async function* inputs(): AsyncGenerator<BatchInput> {
    for (const f of PHOTOS) yield { id: f === 'crop_o1.jpg' ? `day2/${f}` : f, bytes: readFileSync(fixture('jpeg', f)) };
    yield { id: 'broken.jpg', bytes: CORRUPT };
    yield { id: '../escape.jpg', bytes: CORRUPT };
  }
  const stages = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('imgpu-stage-')));
  const before = stages();
  const sunk = new Map<string, Buffer>();
  const run = batch('equalize | threshold --method otsu', {
    inputs: inputs(), stageSize: 2, threads: 2, codecThreads: 2, format: 'png',
    out: async (id, bytes, meta) => {
      assert.equal(meta.format, '.png');
      sunk.set(id, Buffer.from(bytes));
    },
  });
  const events = await collect(run);
  const result = await run.done;
  assert.deepEqual([...sunk.keys()].sort(), ['camera_gray.png', 'chelsea_q90.png', 'day2/crop_o1.png']);
  const done = events.filter((e) => e.type === 'done');
  assert.deepEqual(done.map((e) => e.id).sort(), ['camera_gray.jpg', 'chelsea_q90.jpg', 'day2/crop_o1.jpg']);
  const failed = events.flatMap((e) => (e.type === 'failed' ? [e] : []));
  assert.deepEqual(failed.map((e) => e.id).sort(), ['../escape.jpg', 'broken.jpg']);
  assert.ok(failed.find((e) => e.id === 'broken.jpg')!.error instanceof UnsupportedFormatError, 'a damaged JPEG is a format error');
  assert.ok(failed.find((e) => e.id === '../escape.jpg')!.error instanceof InvalidArgumentError, 'an id leaving its folder is refused');
  assert.equal(result.processed, 3);
  assert.equal(result.failed.length, 2);
  // The same pixels as the folder batch's JPEG outputs would have, here as PNG: compare with a folder batch to PNG.
  const png = batch('equalize | threshold --method otsu', { inputs: [join(dir, 'in')], out: join(dir, 'png'), recursive: true, format: 'png', threads: 2, codecThreads: 2 });
  await png.done;
  for (const [id, bytes] of sunk) assert.deepEqual(bytes, readFileSync(join(dir, 'png', id)), id);
  // Nothing staged is left behind.
  assert.deepEqual([...stages()].filter((f) => !before.has(f)), []);
  rmSync(dir, { recursive: true, force: true });
});

test('batch: bad steps or options reject done and the iteration with a typed error before any image', async () => {
  const bad = batch([{ op: 'equalise' }], { inputs: ['nowhere'], out: 'nowhere-out' });
  await assert.rejects(bad.done, (e: unknown) => e instanceof InvalidArgumentError && /unknown operation 'equalise'/.test(e.message));
  await assert.rejects(collect(bad), InvalidArgumentError);
  await assert.rejects(batch('equalize', { inputs: [], out: 'x', quality: 0 }).done, /quality/);
  await assert.rejects(batch([{ op: 'threshold', params: { method: 'nope' } }], { inputs: [], out: 'x' }).done, /method must be one of/);
});

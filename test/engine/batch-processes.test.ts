import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { batch, type BatchEvent, type BatchOptions } from '../../src/batch.js';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import { fixture } from '../helpers/fixtures.js';

// imgpu/batch's `processes`: the batch split over child processes the engine spawns itself (its own child entry,
// the shard sent over IPC), their events arriving through the one iterable, their summaries merged; abort reaching
// them; and the engine's one-time notes as `note` events, nothing written to stderr by the library.

const PHOTOS = ['camera_gray.jpg', 'chelsea_q90.jpg', 'crop_o1.jpg', 'crop_o6.jpg', 'chelsea_q95_cv2.jpg'];
const CORRUPT = Buffer.concat([readFileSync(fixture('jpeg', 'chelsea_q90.jpg')).subarray(0, 600), Buffer.alloc(64, 0)]);
const CPU: Partial<BatchOptions> = { threads: 1, codecThreads: 1 };

async function collect(run: AsyncIterable<BatchEvent>): Promise<BatchEvent[]> {
  const events: BatchEvent[] = [];
  for await (const e of run) events.push(e);
  return events;
}

/** The per-image events of a run as sorted lines (the order differs between processes; the set must not). */
const perImage = (events: BatchEvent[], outDir: string) => events.flatMap((e) => {
  if (e.type === 'done') return [`done ${e.id} ${e.output.slice(outDir.length)} ${e.path}`];
  if (e.type === 'skipped') return [`skipped ${e.id} ${e.output.slice(outDir.length)}`];
  if (e.type === 'failed') return [`failed ${e.id} ${e.error.constructor.name} ${e.error.exitCode}`];
  return [];
}).sort();

/** The output folder's files and their bytes (records excluded: their times differ). */
function outputs(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && d.name !== '.imgpu-batch.json').map((d) => {
    const path = join(d.parentPath, d.name);
    return [path.slice(dir.length), readFileSync(path)];
  }));
}

test('batch processes: 2 child processes give the bytes and the per-image events of one process (a damaged file failed, typed), a rerun skips all; two shards make up the whole', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-procs-'));
  mkdirSync(join(dir, 'in', 'sub'), { recursive: true });
  for (const f of PHOTOS) copyFileSync(fixture('jpeg', f), join(dir, 'in', f === 'crop_o6.jpg' ? join('sub', f) : f));
  writeFileSync(join(dir, 'in', 'broken.jpg'), CORRUPT);
  const steps = 'clahe --clip 2 | morph erode --se rect:5x5';
  const runs: Record<string, { events: BatchEvent[]; out: string }> = {};
  for (const processes of [1, 2]) {
    const out = join(dir, `out${processes}`);
    const run = batch(steps, { inputs: [join(dir, 'in')], out, recursive: true, processes, ...CPU });
    const events = await collect(run);
    const summary = await run.done;
    assert.equal(summary.processed, PHOTOS.length);
    assert.equal(summary.failed.length, 1);
    if (processes > 1) assert.equal(summary.processes, 2);
    const failed = events.find((e) => e.type === 'failed');
    assert.ok(failed?.type === 'failed' && failed.error instanceof UnsupportedFormatError, 'a damaged file is a failed event with its typed error, across the process boundary too');
    const last = events.filter((e) => e.type === 'progress').pop();
    assert.deepEqual(last && { ...last, bytes: 0 }, { type: 'progress', processed: PHOTOS.length, failed: 1, total: PHOTOS.length + 1, bytes: 0 });
    runs[processes] = { events, out };
  }
  assert.deepEqual(perImage(runs[2].events, runs[2].out), perImage(runs[1].events, runs[1].out));
  assert.equal(perImage(runs[2].events, runs[2].out).length, PHOTOS.length + 1);
  const one = outputs(runs[1].out), two = outputs(runs[2].out);
  assert.deepEqual([...two.keys()].sort(), [...one.keys()].sort());
  for (const [f, bytes] of one) assert.ok(two.get(f)!.equals(bytes), `${f}: the same bytes from 2 processes as from 1`);
  // The parent kept the folder's records of what its children wrote.
  const again = batch(steps, { inputs: [join(dir, 'in')], out: runs[2].out, recursive: true, processes: 2, ...CPU });
  const skipped = (await collect(again)).filter((e) => e.type === 'skipped');
  assert.equal((await again.done).skipped, PHOTOS.length);
  assert.equal(skipped.length, PHOTOS.length);
  // `shard` in this process: the two halves (image i when i mod 2 = index) make up the whole, nothing twice.
  const halves = await Promise.all([0, 1].map(async (index) => {
    const half = batch(steps, { inputs: [join(dir, 'in')], out: join(dir, 'halves'), recursive: true, shard: { index, count: 2 }, ...CPU });
    return perImage(await collect(half), join(dir, 'halves'));
  }));
  assert.ok(halves.every((h) => h.length >= 2), JSON.stringify(halves));
  assert.deepEqual(halves.flat().sort(), perImage(runs[1].events, runs[1].out));
  rmSync(dir, { recursive: true, force: true });
});

test('batch processes: an abort mid-way reaches the children — images in flight written whole, no partial or temporary file, a rerun completes the rest', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-procs-abort-'));
  mkdirSync(join(dir, 'in'));
  const sources = ['chelsea_q90.jpg', 'camera_gray.jpg'];
  const copies = 16;
  for (let k = 0; k < copies; k++) for (const f of sources) copyFileSync(fixture('jpeg', f), join(dir, 'in', `${String(k).padStart(2, '0')}-${f}`));
  // What each source becomes (one process, no abort).
  mkdirSync(join(dir, 'ref-in'));
  for (const f of sources) copyFileSync(fixture('jpeg', f), join(dir, 'ref-in', f));
  const steps = 'equalize | morph erode --se rect:5x5';
  await batch(steps, { inputs: [join(dir, 'ref-in')], out: join(dir, 'ref'), ...CPU }).done;
  const out = join(dir, 'out');
  const controller = new AbortController();
  const run = batch(steps, { inputs: [join(dir, 'in')], out, processes: 2, signal: controller.signal, ...CPU });
  let done = 0;
  for await (const e of run) if (e.type === 'done' && ++done === 1) controller.abort();
  const summary = await run.done;
  assert.equal(summary.aborted, true);
  assert.equal(summary.processed, done, 'every image written has its done event');
  assert.ok(summary.processed < copies * sources.length, `the abort stopped the children (${summary.processed} of ${copies * sources.length} done)`);
  const written = readdirSync(out).filter((f) => f !== '.imgpu-batch.json');
  assert.equal(written.length, summary.processed, `only whole outputs, no temporary file: ${written.join(' ')}`);
  for (const f of written) assert.ok(readFileSync(join(out, f)).equals(readFileSync(join(dir, 'ref', f.slice(3)))), `${f} written whole`);
  const rest = batch(steps, { inputs: [join(dir, 'in')], out, processes: 2, ...CPU });
  const result = await rest.done;
  assert.deepEqual([result.processed, result.skipped], [copies * sources.length - summary.processed, summary.processed]);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a batch in a fresh Node process (a script in `dir`), its events as JSON lines on stdout; returns them and its stderr. */
function batchInProcess(dir: string, options: string): { events: BatchEvent[]; stderr: string; status: number | null } {
  const entry = new URL('../../src/batch.js', import.meta.url).href;
  const script = `import { batch } from ${JSON.stringify(entry)};
const run = batch('equalize', ${options});
for await (const e of run) console.log(JSON.stringify(e));
console.log(JSON.stringify({ type: 'summary', ...(await run.done) }));`;
  // A file, not --eval: worker threads inherit the process's execArgv (--input-type would stop them).
  writeFileSync(join(dir, 'run.mjs'), script);
  const r = spawnSync(process.execPath, [join(dir, 'run.mjs')], { encoding: 'utf8' });
  return { events: r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as BatchEvent), stderr: r.stderr, status: r.status };
}

test('batch: the engine\'s one-time notes arrive as note events (once per key, from children too), the library writes nothing to stderr', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-notes-'));
  mkdirSync(join(dir, 'in'));
  for (const f of PHOTOS.slice(0, 3)) copyFileSync(fixture('jpeg', f), join(dir, 'in', f));
  for (const processes of [1, 2]) {
    const out = join(dir, `out${processes}`);
    // Records that cannot be saved (a folder where the file goes): the outputs are written, the engine says so once.
    mkdirSync(join(out, '.imgpu-batch.json'), { recursive: true });
    // Two processes choose their devices as --device auto (a software GPU, or none, leaves them on the CPU: a note each, said once).
    const devices = processes > 1 ? `processes: 2, device: 'auto', ` : '';
    const r = batchInProcess(dir, `{ inputs: [${JSON.stringify(join(dir, 'in'))}], out: ${JSON.stringify(out)}, ${devices}threads: 1, codecThreads: 1 }`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '', 'nothing on stderr');
    const notes = r.events.flatMap((e) => (e.type === 'note' ? [e] : []));
    const records = notes.filter((n) => n.code === 'IMGPU_RECORDS_NOT_SAVED');
    assert.equal(records.length, 1, JSON.stringify(notes));
    assert.match(records[0].text, /the outputs are written, but a rerun will redo them/);
    if (processes > 1) {
      const device = notes.filter((n) => n.code === 'IMGPU_DEVICE');
      assert.equal(device.length, 1, `one device note for both children: ${JSON.stringify(notes)}`);
      assert.match(device[0].text, /--device auto/);
    }
    assert.equal(r.events.filter((e) => e.type === 'done').length, 3);
  }
  rmSync(dir, { recursive: true, force: true });
});

test('no shard is passed through the environment: no source names IMGPU_BATCH_SHARD any more', () => {
  const src = fileURLToPath(new URL('../../../src/', import.meta.url));
  const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && d.name.endsWith('.ts'));
  assert.ok(files.length > 100, src);
  for (const d of files) assert.doesNotMatch(readFileSync(join(d.parentPath, d.name), 'utf8'), /IMGPU_BATCH_SHARD/, join(d.parentPath, d.name));
});

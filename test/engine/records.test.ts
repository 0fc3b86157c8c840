import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BatchRecords, RECORDS_FILE, recordKey, type RecordedJob } from '../../src/engine/records.js';

// A batch's records of its output folder (.imgpu-batch.json): appended as outputs are written, nothing of them
// held for the run (the memory that grew with a batch's count), read back line by line.

const RECIPE = '{"op":"equalize"}';

/** `n` inputs and their outputs written in a fresh folder, as planned jobs. */
function folder(n: number): { out: string; jobs: RecordedJob[] } {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-records-'));
  const out = join(dir, 'out');
  mkdirSync(out);
  const jobs: RecordedJob[] = [];
  for (let i = 0; i < n; i++) {
    const input = join(dir, `in-${i}.png`);
    const output = join(out, `in-${i}.png`);
    writeFileSync(input, `input ${i}`);
    writeFileSync(output, `output ${i}`);
    const s = statSync(input);
    jobs.push({ input, output, key: recordKey(out, output), bytes: s.size, mtimeMs: s.mtimeMs });
  }
  return { out, jobs };
}

/** Records every job's output as a batch does when it has written it, and saves. */
async function record(out: string, jobs: RecordedJob[]): Promise<void> {
  const records = await BatchRecords.open(out);
  for (const j of jobs) records.add(j.key, await BatchRecords.describe(j, RECIPE));
  await records.save();
}

async function upToDate(out: string, jobs: RecordedJob[]): Promise<boolean[]> {
  const records = await BatchRecords.open(out);
  return Promise.all(jobs.map((j) => records.upToDate(j, RECIPE)));
}

test('records are appended to the file as outputs are written (the file is never rewritten by a run): a rerun finds every output up to date, one line each', async () => {
  const { out, jobs } = folder(600);
  await record(out, jobs.slice(0, 300));
  const file = join(out, RECORDS_FILE);
  const inode = statSync(file).ino;
  await record(out, jobs.slice(300));
  assert.equal(statSync(file).ino, inode, 'the second run appended to the file instead of writing a new one over it');
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, 1 + jobs.length, 'a header and one line per output');
  assert.deepEqual(await upToDate(out, jobs), jobs.map(() => true));
});

test('a line torn by a crash mid-append costs only its own output: the others stay up to date', async () => {
  const { out, jobs } = folder(4);
  await record(out, jobs.slice(0, 3));
  const file = join(out, RECORDS_FILE);
  const last = readFileSync(file, 'utf8').trimEnd().split('\n').pop()!;
  // The fourth output's record cut short, as a killed process leaves it.
  const describe = await BatchRecords.describe(jobs[3], RECIPE);
  appendFileSync(file, JSON.stringify({ key: jobs[3].key, ...describe }).slice(0, 40));
  assert.ok(last.includes(jobs[2].key));
  assert.deepEqual(await upToDate(out, jobs), [true, true, true, false]);
});

test('a version 1 records file (one JSON object, earlier imgpu) keeps its outputs up to date and is rewritten as lines', async () => {
  const { out, jobs } = folder(3);
  const outputs: Record<string, unknown> = {};
  for (const j of jobs) outputs[j.key] = await BatchRecords.describe(j, RECIPE);
  const file = join(out, RECORDS_FILE);
  writeFileSync(file, JSON.stringify({ version: 1, outputs }));
  assert.deepEqual(await upToDate(out, jobs), [true, true, true]);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { key?: string });
  assert.deepEqual(lines.slice(1).map((l) => l.key), jobs.map((j) => j.key));
});

test('a rerun that redoes outputs appends their new records, and the latest line of a key is the one that counts', async () => {
  const { out, jobs } = folder(2);
  await record(out, jobs);
  writeFileSync(jobs[0].output, 'a longer output 0, written again');
  assert.deepEqual(await upToDate(out, jobs), [false, true], 'the output replaced since: due');
  await record(out, [jobs[0]]);
  assert.equal(readFileSync(join(out, RECORDS_FILE), 'utf8').trimEnd().split('\n').length, 1 + 3, 'the header, two records and the redone one\'s');
  assert.deepEqual(await upToDate(out, jobs), [true, true]);
});

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliWith } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

test('IMGPU_TRACE writes each image\'s spans of a batch: read, the wait for it, the command, the write', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-trace-'));
  const inDir = join(dir, 'in');
  const names = ['coins.png', 'camera_301x256.png'];
  mkdirSync(inDir);
  for (const f of names) copyFileSync(fixture('images', f), join(inDir, f));
  const file = join(dir, 'trace.jsonl');
  const r = cliWith({ IMGPU_TRACE: file }, 'equalize', inDir, join(dir, 'out'), '--device', 'cpu', '--quiet');
  assert.equal(r.status, 0, r.stderr);
  const spans = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { span: string; input: string; start: number; end: number });
  for (const name of names) {
    const mine = spans.filter((s) => s.input === join(inDir, name));
    assert.deepEqual([...new Set(mine.map((s) => s.span))].sort(), ['keep', 'read', 'step', 'wait'], name);
    assert.ok(mine.every((s) => s.start >= 0 && s.end >= s.start), `${name}: ordered times`);
  }
  const read = spans.find((s) => s.span === 'read')!, keep = spans.find((s) => s.span === 'keep' && s.input === read.input)!;
  assert.ok(keep.start >= read.end, 'an image is written after it is read');
});

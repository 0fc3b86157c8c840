// Library errors speak of API options; the CLI says the same thing with its flags (src/engine/flags.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliWording } from '../../src/engine/flags.js';
import { CPU_PATH, optionRef } from '../../src/core/errors.js';
import { readImage } from '../../src/io/index.js';
import { clahe } from '../../src/ops/clahe/index.js';
import { threshold } from '../../src/ops/threshold/index.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

test('cliWording: the CPU path, options with and without values, advice phrases → flags', () => {
  assert.equal(cliWording(`use a smaller image or ${CPU_PATH}`), 'use a smaller image or --device cpu');
  assert.equal(cliWording(`use a larger ${optionRef('minSize')} or ${optionRef('scale')}`), 'use a larger --min-size or --scale');
  assert.equal(cliWording(`${optionRef('impl', 'tiled')}: too big`), '--impl tiled: too big');
  assert.equal(cliWording(`${optionRef('quality')} must be an integer 1–100, got 0`), '--quality must be an integer 1–100, got 0');
});

test('a library error names the option, not a CLI flag; the CLI names the flag', async () => {
  const u16 = await readImage(fixture('images', 'moon16.png'));
  await assert.rejects(threshold(u16, { method: 'adaptive' }), (e: Error) => /option `method: 'adaptive'`/.test(e.message) && !/--/.test(e.message));
  await assert.rejects(clahe(u16, { window: 5 }), (e: Error) => /option `tiles`/.test(e.message) && !/--/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-flags-'));
  try {
    const input = fixture('images', 'moon16.png');
    assertOneLineError(cli('threshold', input, join(dir, 't.png'), '--method', 'adaptive', '--device', 'cpu'), 2, /threshold --method adaptive \(defined on 8-bit/);
    assertOneLineError(cli('clahe', input, join(dir, 'c.png'), '--window', '5', '--device', 'cpu'), 2, /use tiled clahe \(--tiles, no --window\) for uint16/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Exit 8 (--device both: the CPU and GPU outputs differ) and exit 70 (a bug in imgpu), which no honest input reaches
// on a working build: the CLI's own main runs in a child with one fault put into its operation registry
// (test/helpers/cli-fault.ts), and everything after it — comparison, report, exit code, the error line — is the
// product's code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { EXIT_DISAGREE } from '../../src/engine/exit.js';
import { readImage } from '../../src/io/index.js';
import { assertOneLineError } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

const HARNESS = fileURLToPath(new URL('../helpers/cli-fault.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-exit-'));

/** The CLI in a child with `fault` put in (IMGPU_DEBUG unset unless `env` sets it). */
function faulty(fault: string, args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  delete base.IMGPU_DEBUG;
  return spawnSync(process.execPath, [HARNESS, fault, ...args], { encoding: 'utf8', timeout: 120_000, env: { ...base, ...env } });
}

test('--device both: a GPU output one value off the CPU\'s is exit 8, reported as differing (1 element, max |diff| 1) in --json and in text; the GPU\'s output is written', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const out = join(tmp, 'differ.png');
  const r = faulty('gpu-pixel', ['equalize', fixture('images', 'coins.png'), out, '--device', 'both', '--json']);
  assert.equal(r.status, EXIT_DISAGREE, r.stderr);
  assert.equal(EXIT_DISAGREE, 8);
  const j = JSON.parse(r.stdout) as { identical: boolean; mismatches: number; maxAbsDiff: number };
  assert.deepEqual([j.identical, j.mismatches, j.maxAbsDiff], [false, 1, 1]);
  const written = await readImage(out);
  const cv2 = await readImage(fixture('equalize', 'coins.png')); // cv2.equalizeHist
  const c = compareImages(written, cv2);
  assert.deepEqual([c.mismatches, c.maxAbsDiff, written.data[0] !== cv2.data[0]], [1, 1, true], 'the GPU\'s output, first value off');
  const text = faulty('gpu-pixel', ['equalize', fixture('images', 'coins.png'), join(tmp, 'differ2.png'), '--device', 'both']);
  assert.equal(text.status, 8, text.stderr);
  assert.match(text.stdout, /CPU and GPU outputs DIFFER: 1 elements, max \|diff\| 1/);
});

test('a bug in imgpu (an untyped exception) is exit 70, one line naming it an internal error, no stack trace unless IMGPU_DEBUG=1; no output written', () => {
  const out = join(tmp, 'bug.png');
  const r = faulty('bug', ['equalize', fixture('images', 'coins.png'), out, '--device', 'cpu']);
  assertOneLineError(r, 70, /^imgpu: internal error: Cannot read properties of undefined \(reading 'spacing'\) \(set IMGPU_DEBUG=1 for a stack trace\)$/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.ok(!existsSync(out), 'nothing written');
  const debug = faulty('bug', ['equalize', fixture('images', 'coins.png'), out, '--device', 'cpu'], { IMGPU_DEBUG: '1' });
  assert.equal(debug.status, 70, debug.stderr);
  assert.match(debug.stderr, /^imgpu: internal error: Cannot read properties of undefined \(reading 'spacing'\)\nTypeError: .*\n\s+at /);
});

test('a WGSL kernel that does not compile is exit 70 (ShaderCompileError), one line naming the kernel, the WGSL line and what the compiler says, no stack trace', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const out = join(tmp, 'shader.png');
  const r = faulty('shader', ['equalize', fixture('images', 'coins.png'), out, '--device', 'gpu']);
  assertOneLineError(r, 70, /^imgpu: error: faulty: WGSL line 2: cannot convert value of type 'abstract-float' to type 'u32'$/);
  assert.ok(!existsSync(out), 'nothing written');
});

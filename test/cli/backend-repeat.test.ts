// --backend (Dawn's OpenGL ES backend: Mesa llvmpipe through surfaceless EGL where CI has no GPU) and --repeat.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { readImage } from '../../src/io/index.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

const tmp = mkdtempSync(join(tmpdir(), 'imgpu-backend-'));
const HARNESS = fileURLToPath(new URL('../helpers/cli-fault.js', import.meta.url));
const COINS = fixture('images', 'coins.png');

test('--backend opengles: the GPU run goes through Dawn\'s OpenGL ES adapter (named in --json), equals the CPU and cv2.equalizeHist; without the flag the adapter is another', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const out = join(tmp, 'gles.png');
  const r = cli('equalize', COINS, out, '--device', 'both', '--backend', 'opengles', '--json');
  // CI installs Mesa's EGL/GLES (scripts/install-system-deps.sh) and requires it with the GPU; elsewhere it may be absent.
  if (r.status === 4 && process.env.IMGPU_REQUIRE_GPU !== '1') return void t.skip(`no OpenGL ES adapter: ${r.stderr.trim()}`);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { adapter: string; identical: boolean };
  assert.match(j.adapter, /OpenGL ES/);
  assert.equal(j.identical, true);
  const c = compareImages(await readImage(out), await readImage(fixture('equalize', 'coins.png')));
  assert.ok(c.identical, `${c.mismatches} pixels differ from cv2.equalizeHist`);
  const env = { ...process.env };
  delete env.IMGPU_BACKEND;
  const plain = spawnSync(process.execPath, [fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url)), 'equalize', COINS, join(tmp, 'plain.png'), '--device', 'gpu', '--json'], { encoding: 'utf8', env });
  assert.equal(plain.status, 0, plain.stderr);
  assert.doesNotMatch((JSON.parse(plain.stdout) as { adapter: string }).adapter, /OpenGL ES/, 'the default backend is not GLES');
});

test('--backend: a name Dawn does not know is exit 4 in one line listing the backends; a backend this machine lacks is exit 4; no value is exit 2', () => {
  assertOneLineError(cli('equalize', COINS, join(tmp, 'x.png'), '--device', 'gpu', '--backend', 'bogus'), 4, /^imgpu: error: no WebGPU adapter: unrecognised backend 'bogus'; Possible backends : .*'vulkan'.*'opengles'/);
  assertOneLineError(cli('equalize', COINS, join(tmp, 'x.png'), '--device', 'gpu', '--backend', process.platform === 'win32' ? 'metal' : 'd3d12'), 4, /^imgpu: error: no WebGPU adapter was found/);
  assertOneLineError(cli('equalize', COINS, join(tmp, 'x.png'), '--device', 'gpu', '--backend'), 2, /^imgpu: error: --backend needs a value$/);
});

/** The CLI with each run of the command said on stderr (test/helpers/cli-fault.ts 'calls': nothing else changed). */
function counted(...args: string[]) {
  const r = spawnSync(process.execPath, [HARNESS, 'calls', ...args], { encoding: 'utf8', timeout: 120_000 });
  return { ...r, runs: r.stderr.split('\n').filter((l) => l.startsWith('imgpu-test: run on ')).map((l) => l.slice('imgpu-test: run on '.length)) };
}

test('--repeat n runs the operation n times on each device asked for and reports the last run; the output is the one run\'s', async (t) => {
  const gpu = await gpuOrSkip(t);
  const device = gpu ? 'both' : 'cpu';
  const out = join(tmp, 'repeat.png');
  const three = counted('equalize', COINS, out, '--device', device, '--repeat', '3');
  assert.equal(three.status, 0, three.stderr);
  assert.deepEqual(three.runs, gpu ? ['cpu', 'gpu', 'cpu', 'gpu', 'cpu', 'gpu'] : ['cpu', 'cpu', 'cpu']);
  assert.match(three.stdout, /^equalize .*, run 3 of 3$/m);
  if (gpu) assert.match(three.stdout, /CPU and GPU outputs are identical/);
  assert.ok(compareImages(await readImage(out), await readImage(fixture('equalize', 'coins.png'))).identical);
  const once = counted('equalize', COINS, join(tmp, 'once.png'), '--device', 'cpu');
  assert.deepEqual(once.runs, ['cpu'], 'one run by default');
  assert.doesNotMatch(once.stdout, /run \d+ of/);
  for (const bad of ['0', '-1', '1.5', 'x']) assertOneLineError(cli('equalize', COINS, out, '--device', 'cpu', '--repeat', bad), 2, /^imgpu: error: --repeat must be a positive integer$/);
});

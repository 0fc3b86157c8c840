// Start-up (issue 40 item 5): --json says where a command's first milliseconds went, and the heavy modules a command
// does not use are not loaded (sharp, zarrita, bullmq: each tens of milliseconds of every run before), and the CLI runs
// bundled (scripts/bundle-cli.mjs) where the bundle is up to date, and a GPU run's pipelines are asked for at once the
// next time (cli/pipeline-cache.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativePng } from '../../src/io/formats/png-native.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { requiredOrSkip } from '../helpers/require.js';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-startup-'));

/** A loader hook that writes every module URL the process loads to stderr, one `loaded URL` line each. */
const HOOK = join(tmp, 'loads.mjs');
writeFileSync(HOOK, `import { registerHooks } from 'node:module';
import { writeSync } from 'node:fs';
registerHooks({ load(url, context, next) { writeSync(2, 'loaded ' + url + '\\n'); return next(url, context); } });
`);

/** The npm packages (node_modules/<name>/) among the modules a run reported loading. */
function packagesLoaded(stderr: string): Set<string> {
  const names = [...stderr.matchAll(/^loaded .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]);
  return new Set(names);
}

/** Checks a --json run's start-up report: startup_ms and its points, each after Node's bootstrap and in order. */
function assertStartup(j: { startup_ms: unknown; startup: Record<string, number> }): void {
  assert.equal(typeof j.startup_ms, 'number');
  const s = j.startup;
  for (const k of ['node', 'modules', 'read', 'device', 'op', 'written']) assert.equal(typeof s[k], 'number', `startup.${k}`);
  assert.equal(j.startup_ms, Math.max(s.read, s.device), 'the first operation could start once both were ready');
  assert.ok(s.node > 0 && s.node <= s.modules, `node ${s.node} ≤ modules ${s.modules}`);
  assert.ok(s.modules <= s.read && s.modules <= s.device, JSON.stringify(s));
  assert.ok((j.startup_ms as number) <= s.op && s.op <= s.written, JSON.stringify(s));
  assert.deepEqual(Object.values(s), Object.values(s).toSorted((a, b) => a - b), 'points in the order reached');
}

test('--json reports startup_ms and where it went (--device cpu)', () => {
  const r = cli('equalize', fixture('images', 'camera.png'), join(tmp, 'cpu.png'), '--device', 'cpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  assertStartup(JSON.parse(r.stdout));
});

test('--json reports startup_ms on the GPU; the device is created while the input is read', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('equalize', fixture('images', 'camera.png'), join(tmp, 'gpu.png'), '--device', 'gpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  assertStartup(JSON.parse(r.stdout));
});

test('an unreadable input is still the error reported while a device is being created (exit 3, one line)', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  assertOneLineError(cli('equalize', join(tmp, 'missing.png'), join(tmp, 'x.png'), '--device', 'gpu'), 3, /missing\.png/);
});

test('batch --json reports startup_ms', () => {
  const r = cli('equalize', fixture('images', 'camera.png'), fixture('images', 'coins.png'), join(tmp, 'batch') + '/', '--device', 'cpu', '--json', '--quiet');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.processed, 2);
  assert.ok(typeof j.startup_ms === 'number' && j.startup_ms > 0, r.stdout);
});

test("importing 'imgpu' loads neither sharp, zarrita nor bullmq", () => {
  const r = spawnSync(process.execPath, ['--import', HOOK, '--input-type=module', '-e', "await import('imgpu');"], { encoding: 'utf8', cwd: fileURLToPath(new URL('../../..', import.meta.url)) });
  assert.equal(r.status, 0, r.stderr);
  const loaded = packagesLoaded(r.stderr);
  assert.ok(loaded.size > 0 && r.stderr.includes('/dist/src/node.js'), 'the hook saw the import');
  for (const heavy of ['sharp', 'zarrita', 'bullmq', 'ioredis']) assert.ok(!loaded.has(heavy), `${heavy} loaded: ${[...loaded].join(' ')}`);
});

test('equalize of a JPEG or a PNG (imgpu\'s libjpeg and libpng codecs) loads neither sharp nor zarrita; of a TIFF, sharp (its reader) but not zarrita', (t) => {
  const run = (input: string, out: string) => spawnSync(process.execPath, ['--import', HOOK, BIN, 'equalize', input, join(tmp, out), '--device', 'cpu'], { encoding: 'utf8' });
  const tiff = run(fixture('fuzz', 'rgb8_lzw.tif'), 'rgb8.tif');
  assert.equal(tiff.status, 0, tiff.stderr);
  assert.ok(packagesLoaded(tiff.stderr).has('sharp'), 'the hook sees sharp where it is used');
  assert.ok(!packagesLoaded(tiff.stderr).has('zarrita'));
  const natives: [string, string, unknown, string][] = [
    [fixture('jpeg', 'chelsea_q90.jpg'), 'chelsea.jpg', nativeJpeg(), 'no native JPEG codec: JPEG goes through sharp (scripts/build-native.mjs)'],
    [fixture('images', 'camera.png'), 'camera.png', nativePng(), 'no native PNG codec: PNG goes through sharp (scripts/build-native.mjs)'],
  ];
  for (const [input, out, built, why] of natives) {
    if (!requiredOrSkip(t, built, why)) continue;
    const r = run(input, out);
    assert.equal(r.status, 0, r.stderr);
    const loaded = packagesLoaded(r.stderr);
    for (const heavy of ['sharp', 'zarrita', 'bullmq']) assert.ok(!loaded.has(heavy), `${out}: ${heavy} loaded: ${[...loaded].join(' ')}`);
  }
});

/** The files under dist/src/ that a run reported loading (the hook's `loaded` lines). */
function distModulesLoaded(stderr: string): string[] {
  return [...stderr.matchAll(/^loaded file:\/\/.*\/dist\/src\/(.*)$/gm)].map((m) => m[1]);
}

test('bin/imgpu.js runs the bundled CLI: a command loads a few files of dist/src, not its ~260 modules', () => {
  const DIST = fileURLToPath(new URL('../../src', import.meta.url));
  const fresh = (statSync(join(DIST, 'bundle', 'main.js'), { throwIfNoEntry: false })?.mtimeMs ?? -Infinity) >= statSync(join(DIST, 'cli', 'main.js')).mtimeMs;
  assert.ok(fresh, 'dist/src/bundle/ is missing or older than tsc\'s output: npm test and npm run build make it (node scripts/bundle-cli.mjs)');
  const r = spawnSync(process.execPath, ['--import', HOOK, BIN, 'equalize', fixture('images', 'camera.png'), join(tmp, 'bundled.png'), '--device', 'cpu'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const loaded = distModulesLoaded(r.stderr);
  assert.ok(loaded.includes('bundle/main.js'), loaded.join(' '));
  assert.ok(!loaded.includes('cli/main.js'), 'not the unbundled CLI as well');
  assert.ok(loaded.length < 40, `${loaded.length} files of dist/src: ${loaded.join(' ')}`);
});

/**
 * A copy of bin/imgpu.js in a tree of its own, with a tsc main.js and a bundle that each print their name, the bundle
 * `bundleAge` ms older (negative: newer) than main.js, or none: which one the launcher runs.
 */
function launched(bundleAge: number | undefined): string {
  const root = mkdtempSync(join(tmp, 'launcher-'));
  const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
  const put = (rel: string, text?: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    if (text === undefined) copyFileSync(join(ROOT, rel), join(root, rel));
    else writeFileSync(join(root, rel), text);
  };
  put('bin/imgpu.js');
  put('dist/src/node/runtime.js');
  put('dist/src/core/errors.js');
  put('dist/src/cli/main.js', "console.log('tsc');");
  const now = Date.now() / 1000;
  utimesSync(join(root, 'dist/src/cli/main.js'), now, now);
  if (bundleAge !== undefined) {
    put('dist/src/bundle/main.js', "console.log('bundle');");
    const t = now - bundleAge / 1000;
    utimesSync(join(root, 'dist/src/bundle/main.js'), t, t);
  }
  const r = spawnSync(process.execPath, [join(root, 'bin/imgpu.js')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('the launcher runs the bundle only when it is not older than tsc\'s main.js (a tsc since the bundle runs the new code)', () => {
  assert.equal(launched(-5000), 'bundle');
  assert.equal(launched(0), 'bundle', 'same time: an installed package (npm sets one time on every file)');
  assert.equal(launched(5000), 'tsc');
  assert.equal(launched(undefined), 'tsc');
});

test('a GPU run remembers its pipelines; the same command next time asks for them as its device is made, with the same bytes', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const cache = mkdtempSync(join(tmp, 'pipelines-'));
  const run = (out: string, where = cache) => {
    const r = cli('equalize', fixture('images', 'camera.png'), join(tmp, out), '--device', 'gpu', '--json', '--pipeline-cache', where);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { pipelines_prefetched: number | null };
  };
  assert.equal(run('p1.png').pipelines_prefetched, 0, 'nothing remembered yet');
  const files = readdirSync(cache);
  assert.equal(files.length, 1, files.join(' '));
  const remembered = (JSON.parse(readFileSync(join(cache, files[0]), 'utf8')) as { pipelines: { label: string }[] }).pipelines.map((p) => p.label);
  for (const label of ['histogram.atomic', 'equalize-lut', 'apply-lut']) assert.ok(remembered.includes(label), remembered.join(' '));
  assert.equal(run('p2.png').pipelines_prefetched, remembered.length);
  assert.deepEqual(readFileSync(join(tmp, 'p2.png')), readFileSync(join(tmp, 'p1.png')));
  assert.equal(run('p3.png', 'off').pipelines_prefetched, null, '--pipeline-cache off');
  // A folder other users may write is not read from: its files would be compiled.
  chmodSync(cache, 0o777);
  assert.equal(run('p4.png').pipelines_prefetched, 0);
});

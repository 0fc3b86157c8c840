import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { readImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { loadNativeModule } from '../../src/io/native-module.js';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-cli-'));


test('equalize --device both --json: both timings and "identical": true, output equals cv2', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const out = join(tmp, 'coins.png');
  const r = cli('equalize', fixture('images', 'coins.png'), out, '--device', 'both', '--json');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.identical, true);
  for (const side of ['cpu', 'gpu']) {
    for (const k of ['host', 'upload', 'kernels', 'download', 'total']) assert.ok(k in j[side], `${side}.${k}`);
  }
  assert.ok(j.gpu.kernels.length >= 1);
  const c = compareImages(await readImage(out), await readImage(fixture('equalize', 'coins.png')));
  assert.ok(c.identical, `${c.mismatches} pixels differ from cv2.equalizeHist`);
});

test('equalize --device both prints human timings and agreement', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('equalize', fixture('images', 'camera.png'), join(tmp, 'cam.tif'), '--device', 'both');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /cpu +total .* ms = host .* kernels/);
  assert.match(r.stdout, /gpu +total .* ms = host .* upload .* kernels .* download/);
  assert.match(r.stdout, /outputs are identical/);
});

test('equalize on the CPU writes 16-bit TIFF and .npy', async () => {
  const r = cli('equalize', fixture('images', 'moon16.png'), join(tmp, 'm16.tif'), '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  const img = await readImage(join(tmp, 'm16.tif'));
  assert.equal(img.dtype, 'uint16');
  const ref = await readImage(fixture('equalize', 'moon16.npy'));
  assert.ok(compareImages(img, ref).identical);
  assert.equal(cli('equalize', fixture('images', 'moon16.npy'), join(tmp, 'm16.npy'), '--device', 'cpu').status, 0);
});

test('info prints the adapter and limits', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('info', '--json');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.ok(j.limits.maxStorageBufferBindingSize > 0);
  assert.ok(Array.isArray(j.features));
});

test('bad input: one-line errors with distinct exit codes', async () => {
  const corrupt = join(tmp, 'corrupt.png');
  writeFileSync(corrupt, Buffer.from('\x89PNG\r\n\x1a\nthis is not really a png'));
  const empty = join(tmp, 'empty.npy');
  writeFileSync(empty, Buffer.concat([Buffer.from([0x93]), Buffer.from("NUMPY\x01\x00"), Buffer.from([0x46, 0]), Buffer.from("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }".padEnd(69) + '\n')]));
  const roDir = join(tmp, 'ro');
  mkdirSync(roDir);
  chmodSync(roDir, 0o500);
  const img = fixture('images', 'camera.png');
  assertOneLineError(cli('equalize', join(tmp, 'missing.png'), join(tmp, 'x.png'), '--device', 'cpu'), 3, /no such file/);
  assertOneLineError(cli('equalize', corrupt, join(tmp, 'x.png'), '--device', 'cpu'), 3, /not a readable image|corrupt/);
  assertOneLineError(cli('equalize', empty, join(tmp, 'x.png'), '--device', 'cpu'), 2, /empty/);
  const emptyNifti = join(tmp, 'empty.nii');
  writeFileSync(emptyNifti, '');
  assertOneLineError(cli('equalize', emptyNifti, join(tmp, 'x.nii'), '--device', 'cpu'), 3, /empty.nii is empty \(0 bytes\): not a NIfTI file/);
  assertOneLineError(cli('equalize', img, join(tmp, 'x.bmp'), '--device', 'cpu'), 3, /cannot write/);
  assertOneLineError(cli('equalize', img, join(tmp, 'no', 'such', 'dir', 'x.png'), '--device', 'cpu'), 3, /cannot write/);
  assertOneLineError(cli('equalize', img, join(tmp, 'x.png'), '--device', 'tpu'), 2, /--device must be one of/);
  assertOneLineError(cli('equalize', img, join(tmp, 'x.png'), '--devcie', 'cpu'), 2, /unknown option --devcie/);
  assertOneLineError(cli('equalize', img), 2, /needs <in> and <out>/);
  assertOneLineError(cli('frobnicate'), 2, /unknown command/);
  const noAdapter = cli('equalize', img, join(tmp, 'x.png'), '--device', 'gpu', '--adapter', 'no-such-adapter-xyz');
  assertOneLineError(noAdapter, 4, /adapter/i);
  // Dawn lists the adapters on lines of their own; the message keeps them on its one line.
  assert.deepEqual(noAdapter.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('Warning:') && !l.startsWith('imgpu:')), []);
});

test('--device auto without an adapter falls back to the CPU with one whole warning', () => {
  // No Vulkan driver at all (the loader finds none): Dawn has no adapter to offer.
  // CLAHE: not light, so auto looks for a GPU (one image through light steps runs on the CPU without looking).
  const r = spawnSync(process.execPath, [BIN, 'clahe', fixture('images', 'coins.png'), join(tmp, 'auto.png')], { encoding: 'utf8', env: { ...process.env, VK_ICD_FILENAMES: join(tmp, 'no-such-icd.json'), VK_DRIVER_FILES: join(tmp, 'no-such-icd.json') } });
  assert.equal(r.status, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning:'));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0], /no WebGPU adapter was found \(no GPU or no driver\); running on the CPU$/);
  assert.match(r.stdout, /cpu +total/);
});

test('an adapter asked for by name that does not exist is exit 4 with --device auto too', () => {
  for (const args of [['--adapter', 'no-such-adapter-xyz'], ['--adapter', 'no-such-adapter-xyz', '--device', 'auto']]) {
    assertOneLineError(cli('equalize', fixture('images', 'coins.png'), join(tmp, 'named.png'), ...args), 4, /no WebGPU adapter: .*Available adapters/);
  }
  const env = { ...process.env, IMGPU_ADAPTER: 'no-such-adapter-xyz' };
  assert.equal(spawnSync(process.execPath, [BIN, 'equalize', fixture('images', 'coins.png'), join(tmp, 'named.png')], { encoding: 'utf8', env }).status, 4);
  assert.equal(spawnSync(process.execPath, [BIN, 'equalize', fixture('images', 'coins.png'), join(tmp, 'named.png'), '--device', 'cpu'], { encoding: 'utf8', env }).status, 0);
});

test('--device auto on a software adapter (lavapipe) runs on the CPU and says so (CLAHE, not light); --device gpu and --adapter still use it', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = fixture('images', 'coins.png');
  const auto = cli('clahe', img, join(tmp, 'sw-auto.png'), '--json');
  assert.equal(auto.status, 0, auto.stderr);
  if (!gpu.adapter.software) {
    assert.notEqual(JSON.parse(auto.stdout).gpu, null, 'a hardware adapter is taken by auto');
    return;
  }
  assert.equal(JSON.parse(auto.stdout).gpu, null);
  assert.notEqual(JSON.parse(auto.stdout).cpu, null);
  const notes = auto.stderr.split('\n').filter((l) => l.trim() && !/artificially reduced/.test(l));
  assert.equal(notes.length, 1, auto.stderr);
  assert.match(notes[0], /^note: --device auto runs on the CPU: the GPU adapter \(.+\) is a software rasterizer, slower than the CPU path; --device gpu uses it anyway$/);
  const forced = JSON.parse(cli('clahe', img, join(tmp, 'sw-gpu.png'), '--device', 'gpu', '--json').stdout);
  assert.notEqual(forced.gpu, null);
  const named = cli('clahe', img, join(tmp, 'sw-named.png'), '--adapter', gpu.adapter.device.split('-')[0] || 'llvmpipe', '--json');
  assert.equal(named.status, 0, named.stderr);
  assert.notEqual(JSON.parse(named.stdout).gpu, null, 'an adapter asked for by name is used');
  assert.ok(readFileSync(join(tmp, 'sw-auto.png')).equals(readFileSync(join(tmp, 'sw-gpu.png'))), 'same output either way');
});

test('--device auto runs one image through light steps only (equalize, a gamma | Otsu pipeline) on the CPU, silently; --device gpu and --adapter still take the GPU', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const img = fixture('images', 'coins.png');
  for (const [args, out] of [[['equalize'], 'light-eq'], [['pipeline'], 'light-pipe']] as const) {
    const extra = args[0] === 'pipeline' ? ['gamma --gamma 0.5 | threshold --method otsu'] : [];
    const auto = cli(...args, img, join(tmp, `${out}-auto.png`), ...extra, '--json');
    assert.equal(auto.status, 0, auto.stderr);
    const j = JSON.parse(auto.stdout);
    assert.equal(j.gpu, null, `${out}: auto runs on the CPU`);
    assert.equal(j.adapter, null, `${out}: no GPU device was made`);
    assert.equal(auto.stderr.split('\n').filter((l) => l.trim() && !/artificially reduced/.test(l)).length, 0, auto.stderr);
    const forced = cli(...args, img, join(tmp, `${out}-gpu.png`), ...extra, '--device', 'gpu', '--json');
    assert.notEqual(JSON.parse(forced.stdout).gpu, null);
    assert.ok(readFileSync(join(tmp, `${out}-auto.png`)).equals(readFileSync(join(tmp, `${out}-gpu.png`))), `${out}: same output either way`);
  }
  const named = cli('equalize', img, join(tmp, 'light-named.png'), '--adapter', gpu.adapter.device.split('-')[0] || 'llvmpipe', '--json');
  assert.notEqual(JSON.parse(named.stdout).gpu, null, 'an adapter asked for by name is used');
});

// CI builds the native pieces (IMGPU_REQUIRE_NATIVE=1), which capture them; elsewhere the test says why it skips.
const capture = loadNativeModule<object>('imgpu-native.node', 'IMGPU_NO_NATIVE_STDERR');
test('GPU commands print no Dawn limit notices ("artificially reduced")', { skip: capture || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native module not built (scripts/build-native.mjs)' }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('equalize', fixture('images', 'coins.png'), join(tmp, 'quiet.png'), '--device', 'gpu');
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /artificially reduced/);
  assert.equal(r.stderr, '');
  const a = cli('adapters');
  assert.doesNotMatch(a.stderr, /artificially reduced/);
});

test('--help: every synopsis is set apart from its summary', () => {
  const r = cli('--help');
  assert.equal(r.status, 0);
  const ops = r.stdout.split('\n').filter((l) => /^ {2}imgpu \S+ .*\[options\]/.test(l));
  assert.ok(ops.length >= 6, r.stdout);
  for (const l of ops) assert.match(l, /\[options\] {2,}\S/, l);
});

test('histogram --device both --json: counts equal numpy.bincount, CPU and GPU identical (both methods, mask)', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const ref = JSON.parse(readFileSync(fixture('histogram', 'histograms.json'), 'utf8'));
  for (const method of ['atomic', 'subhist']) {
    const r = cli('histogram', fixture('images', 'coins.png'), '--device', 'both', '--hist', method, '--json', '--mask', fixture('images', 'coins_mask.png'));
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.identical, true);
    assert.ok(j.gpu.kernels.some((k: { name: string }) => k.name.includes(method)), JSON.stringify(j.gpu.kernels));
    const expected = new Array(256).fill(0);
    for (const [k, v] of Object.entries(ref.coins.masked)) expected[Number(k)] = v;
    assert.deepEqual(j.counts, expected);
  }
  assertOneLineError(cli('histogram', fixture('images', 'coins.png'), '--bins', '0', '--device', 'cpu'), 2, /bins must be ≥ 1/);
  assertOneLineError(cli('histogram', fixture('images', 'coins.png'), '--mask', fixture('images', 'camera.png'), '--device', 'cpu'), 2, /mask is 512×512 but the image is 303×384/);
});

test('threshold --json: numeric threshold equal to cv2/skimage, image equal to cv2 THRESH_OTSU', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const ref = JSON.parse(readFileSync(fixture('threshold', 'thresholds.json'), 'utf8'));
  const out = join(tmp, 'page-otsu.png');
  const r = cli('threshold', fixture('images', 'page.png'), out, '--method', 'otsu', '--device', 'both', '--json');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.threshold, ref.page.otsu);
  assert.equal(j.identical, true);
  assert.ok(compareImages(await readImage(out), await readImage(fixture('threshold', 'page_otsu.png'))).identical);
  const iso = JSON.parse(cli('threshold', fixture('images', 'moon.png'), join(tmp, 'moon-iso.png'), '--method', 'isodata', '--json', '--device', 'gpu').stdout);
  assert.equal(iso.threshold, ref.moon.isodata);
});

test('gmu <atomic|subhist> <equalize|otsu|segmentation> <image>: both paths, both times, identical', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  for (const [hist, method] of [['atomic', 'equalize'], ['subhist', 'otsu'], ['subhist', 'segmentation']]) {
    const r = cli('gmu', hist, method, fixture('images', 'coins.png'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /cpu +total .* ms/);
    assert.match(r.stdout, /gpu +total .* ms/);
    assert.match(r.stdout, new RegExp(`histogram\\.${hist}`));
    assert.match(r.stdout, /outputs are identical/);
  }
  assertOneLineError(cli('gmu', 'atomic', 'blur', fixture('images', 'coins.png')), 2, /usage: imgpu gmu/);
});

test('clahe: colour in, colour out equal to the OpenCV YCrCb recipe; --window on both devices agrees', async (t) => {
  const out = join(tmp, 'chelsea-clahe.png');
  const r = cli('clahe', fixture('images', 'chelsea.png'), out, '--tiles', '8x8', '--clip', '2', '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(compareImages(await readImage(out), await readImage(fixture('clahe', 'chelsea-8x8-2.png'))).identical);
  if (!(await gpuOrSkip(t))) return;
  const w = cli('clahe', fixture('images', 'coins.png'), join(tmp, 'coins-w.png'), '--window', '6', '--clip', '3', '--device', 'both', '--json');
  assert.equal(w.status, 0, w.stderr);
  const j = JSON.parse(w.stdout);
  assert.equal(j.identical, true);
  assert.equal(j.params.window, 6);
  assert.ok(j.gpu.kernels.some((k: { name: string }) => k.name === 'clahe.window.columns'));
});

test('clahe and morph bad arguments: one line, exit 2', () => {
  const img = fixture('images', 'coins.png');
  assertOneLineError(cli('clahe', img, join(tmp, 'x.png'), '--tiles', '8', '--device', 'cpu'), 2, /--tiles expects WxH/);
  assertOneLineError(cli('clahe', img, join(tmp, 'x.png'), '--clip', '0', '--device', 'cpu'), 2, /clip must be > 0/);
  assertOneLineError(cli('clahe', img, join(tmp, 'x.png'), '--window', '500', '--device', 'cpu'), 2, /window radius 500/);
  assertOneLineError(cli('morph', 'thin', img, join(tmp, 'x.png'), '--device', 'cpu'), 2, /op must be one of erode/);
  assertOneLineError(cli('morph', 'erode', img, join(tmp, 'x.png'), '--se', 'disk:3', '--device', 'cpu'), 2, /unknown structuring element/);
  assertOneLineError(cli('morph', 'erode', img, join(tmp, 'x.png'), '--iterations', '0', '--device', 'cpu'), 2, /iterations must be ≥ 1/);
  assertOneLineError(cli('morph', 'erode', img, '--device', 'cpu'), 2, /needs <op> and <in> and <out>/);
});

test('morph <op> <in> <out>: equal to cv2 on both devices, mask element from .npy', async (t) => {
  const out = join(tmp, 'cam-erode.png');
  const device = (await gpuOrSkip(t)) ? 'both' : 'cpu';
  const r = cli('morph', 'erode', fixture('images', 'camera.png'), out, '--se', 'rect:27x27', '--device', device, '--json');
  assert.equal(r.status, 0, r.stderr);
  if (device === 'both') assert.equal(JSON.parse(r.stdout).identical, true);
  assert.ok(compareImages(await readImage(out), await readImage(fixture('morph', 'cv-camera-erode-rect27.png'))).identical);
  const m = cli('morph', 'dilate', fixture('images', 'chelsea_gray_cv2.png'), join(tmp, 'cat-ell.png'), '--se', `mask:${fixture('morph', 'se-ellipse7x7.npy')}`, '--device', device);
  assert.equal(m.status, 0, m.stderr);
  assert.ok(compareImages(await readImage(join(tmp, 'cat-ell.png')), await readImage(fixture('morph', 'cv-cat-dilate-ellipse7x7.png'))).identical);
});

test('outputs: checked before any work (missing folder, unknown extension), written atomically', async () => {
  const img = fixture('images', 'coins.png');
  // A missing or unreadable input after a bad output still reports the output: it is checked first.
  assertOneLineError(cli('equalize', join(tmp, 'no-such-input.png'), join(tmp, 'missing', 'out.png'), '--device', 'cpu'), 3, /folder .*missing does not exist/);
  assertOneLineError(cli('equalize', img, join(tmp, 'out.xyz'), '--device', 'cpu'), 3, /cannot write '\.xyz'/);
  const out = join(tmp, 'atomic.png');
  writeFileSync(out, 'an older file');
  const r = cli('morph', 'dilate', img, out, '--se', 'rect:3x3', '--device', 'cpu');
  assert.equal(r.status, 0, r.stderr);
  assert.ok((await readImage(out)).shape.join() === '303,384', 'the old file was replaced whole');
  const { readdirSync } = await import('node:fs');
  assert.deepEqual(readdirSync(tmp).filter((f) => f.endsWith('.tmp')), [], 'no temporary file is left');
});

test('a .npy whose header claims 10^12 elements is a typed format error, not an allocation failure', () => {
  const header = "{'descr': '|u1', 'fortran_order': False, 'shape': (1000000, 1000000), }";
  const pad = 64 - ((10 + header.length + 1) % 64);
  const h = header + ' '.repeat(pad) + '\n';
  const buf = Buffer.concat([Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, h.length & 255, h.length >> 8]), Buffer.from(h), Buffer.alloc(16)]);
  const path = join(tmp, 'huge.npy');
  writeFileSync(path, buf);
  assertOneLineError(cli('equalize', path, join(tmp, 'huge-out.npy'), '--device', 'cpu'), 3, /truncated/);
});

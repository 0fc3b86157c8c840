import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readImage } from '../../src/io/index.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-detect-'));
const FACE = fixture('detect', 'lbpcascade_frontalface.xml');
const ASTRO = fixture('detect', 'astronaut.png');
const VIDEO = fixture('detect', 'pan.mp4');

const boxes = (line: { detections: { x: number; y: number; width: number; height: number }[] }) => line.detections.map((d) => [d.x, d.y, d.width, d.height]);
function jsonLines(text: string) {
  return text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('detect --device both --json: the astronaut\'s face, CPU and GPU identical, timings split', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('detect', ASTRO, '--classifier', FACE, '--device', 'both', '--json', '--count-discarded');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.deepEqual(boxes(j), [[171, 64, 104, 104]]);
  assert.equal(j.identical, true);
  assert.deepEqual(j.discarded, [0, 0, 0, 0]);
  for (const k of ['host', 'upload', 'kernels', 'download', 'total']) assert.ok(k in j.gpu && k in j.cpu, k);
  assert.ok(j.gpu.kernels.some((k: { name: string }) => /reduce 1/.test(k.name)) && j.gpu.kernels.some((k: { name: string }) => /final/.test(k.name)));
});

test('detect --output: an annotated PNG; --show-pyramid: the levels; text output names the box', async () => {
  const out = join(tmp, 'astro-boxes.png'), pyr = join(tmp, 'pyramid.png');
  const r = cli('detect', ASTRO, '--classifier', FACE, '--device', 'cpu', '--output', out, '--show-pyramid', pyr, '--verbose');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /1 detection from 34 accepted/);
  assert.match(r.stdout, /box x=171 y=64 104×104/);
  const a = await readImage(out);
  assert.equal(a.channels, 3);
  const at = (x: number, y: number) => Array.from(a.data.subarray(3 * (y * 512 + x), 3 * (y * 512 + x) + 3));
  assert.deepEqual(at(171, 64), [0, 255, 0]);
  assert.deepEqual(at(171 + 50, 64 + 1), [0, 255, 0]);
  assert.notDeepEqual(at(171 + 50, 64 + 50), [0, 255, 0]);
  const p = await readImage(pyr);
  assert.equal(p.shape[1], 512);
});

test('classifier convert: the WaldBoost file gives the same detections as the OpenCV cascade; classifier info', () => {
  const wb = join(tmp, 'frontalface-waldboost.xml');
  const c = cli('classifier', 'convert', FACE, wb);
  assert.equal(c.status, 0, c.stderr);
  assert.match(readFileSync(wb, 'utf8'), /<WaldBoostClassifier imageSizeX="24" imageSizeY="24" type="LBP">/);
  const a = cli('detect', fixture('detect', 'lfw_mosaic.png'), '--classifier', FACE, '--device', 'cpu', '--json', '--min-neighbors', '0');
  const b = cli('detect', fixture('detect', 'lfw_mosaic.png'), '--classifier', wb, '--device', 'cpu', '--json', '--min-neighbors', '0');
  assert.equal(a.status, 0, a.stderr);
  assert.deepEqual(boxes(JSON.parse(b.stdout)), boxes(JSON.parse(a.stdout)));
  assert.equal(JSON.parse(a.stdout).detections.length, 621);
  const i = cli('classifier', 'info', wb, '--json');
  assert.deepEqual(JSON.parse(i.stdout), { name: 'frontalface-waldboost.xml', window: { width: 24, height: 24 }, weak: 139, staged: true, stages: 20 });
});

test('detect: bad input is one line and a documented exit code, checked before any work', () => {
  assertOneLineError(cli('detect', ASTRO), 2, /needs --classifier/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', join(tmp, 'none.xml')), 3, /no such classifier file/);
  const bad = join(tmp, 'bad.xml');
  writeFileSync(bad, '<opencv_storage><cascade><stageType>BOOST</stage');
  assertOneLineError(cli('detect', ASTRO, '--classifier', bad), 3, /malformed XML/);
  assertOneLineError(cli('detect', join(tmp, 'missing.png'), '--classifier', FACE), 3, /no such file/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--output', join(tmp, 'no', 'dir', 'x.png')), 3, /does not exist/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--scale', '1'), 2, /scale/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--divisors', '8,x'), 2, /divisors/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--bogus', '1'), 2, /unknown option --bogus/);
  assertOneLineError(cli('classifier', 'convert', FACE), 2, /usage/);
});

test('detect: the scale rule of the API on the command line (> 1, no upper bound: --scale 20 was refused by a cap of 10); kebab-case flags', async () => {
  const api = cli('detect', ASTRO, '--classifier', FACE, '--device', 'cpu', '--json', '--scale', '20', '--min-size', '30x30', '--min-neighbors', '0');
  assert.equal(api.status, 0, api.stderr);
  assert.equal(JSON.parse(api.stdout).windows, 9, 'the 3×3 windows of the one level (factor 20) minSize leaves');
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--scale', '1.00005'), 2, /4096 pyramid levels/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--nms', '2'), 2, /nms must be ≤ 1/);
  assertOneLineError(cli('detect', ASTRO, '--classifier', FACE, '--minNeighbors', '2'), 2, /unknown option --minNeighbors/);
});

test('a file parameter that cannot be read is a file error (exit 3) for every operation: kernel:FILE.json too (was exit 2)', () => {
  assertOneLineError(cli('filter', ASTRO, join(tmp, 'k.png'), '--filter', `kernel:${join(tmp, 'none.json')}`), 3, /no such file/);
});

test('video: every frame\'s detections equal those of the same frame detected as an image; JSON lines, annotated video, frame range', async (t) => {
  const gpu = await gpuOrSkip(t);
  const device = gpu ? 'gpu' : 'cpu';
  const lines = join(tmp, 'pan.jsonl'), annotated = join(tmp, 'pan-boxes.mp4');
  const r = cli('detect', VIDEO, '--classifier', FACE, '--device', device, '--output', lines, '--json', '--min-neighbors', '2');
  assert.equal(r.status, 0, r.stderr);
  const frames = jsonLines(readFileSync(lines, 'utf8'));
  assert.equal(frames.length, 12);
  const out = jsonLines(r.stdout);
  const summary = out.pop().summary;
  assert.equal(summary[device].frames, 12);
  for (const k of ['decodeWait', 'upload', 'kernels', 'readback', 'host']) assert.ok(k in summary[device].perFrameMs, k);
  assert.ok(frames.some((f) => f.detections.length > 0), 'the face is found in some frames');
  // The same frames as PNG images (ffmpeg's RGB, as the video path reads them), detected one by one.
  const dir = join(tmp, 'frames');
  mkdirSync(dir);
  const x = spawnSync('ffmpeg', ['-v', 'error', '-i', VIDEO, '-pix_fmt', 'rgb24', join(dir, 'f%03d.png')]);
  assert.equal(x.status, 0, String(x.stderr));
  assert.equal(readdirSync(dir).length, 12);
  const f = cli('detect', dir, '--classifier', FACE, '--device', device, '--json', '--min-neighbors', '2');
  assert.equal(f.status, 0, f.stderr);
  const images = jsonLines(f.stdout);
  assert.equal(images.length, 12);
  images.forEach((img, k) => assert.deepEqual(boxes(img), boxes(frames[k]), `frame ${k}`));
  const v = cli('detect', VIDEO, '--classifier', FACE, '--device', device, '--output', annotated, '--start-frame', '3', '--max-frames', '4', '--json');
  assert.equal(v.status, 0, v.stderr);
  assert.deepEqual(jsonLines(v.stdout).slice(0, -1).map((l) => l.frame), [3, 4, 5, 6]);
  if (gpu) {
    const both = cli('detect', VIDEO, '--classifier', FACE, '--device', 'both', '--max-frames', '3', '--json');
    assert.equal(both.status, 0, both.stderr);
    const l = jsonLines(both.stdout);
    assert.deepEqual(l.slice(0, -1).map((f) => f.identical), [true, true, true]);
    assert.equal(l.at(-1).summary.cpu.frames, 3);
  }
  const probe = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=nb_read_frames,width', '-of', 'csv=p=0', annotated], { encoding: 'utf8' });
  assert.equal(probe.stdout.trim(), '320,4');
  assert.equal(readdirSync(tmp).filter((n) => n.includes('.tmp')).length, 0, 'no temporary file left');
});

test('detect on a folder runs the loop of batch mode: --recursive, hidden files skipped, a broken image reported and skipped (exit 9), the others detected', () => {
  const dir = join(tmp, 'folder');
  mkdirSync(join(dir, 'sub'), { recursive: true });
  copyFileSync(ASTRO, join(dir, 'a.png'));
  copyFileSync(ASTRO, join(dir, 'sub', 'b.png'));
  copyFileSync(ASTRO, join(dir, '.hidden.png'));
  writeFileSync(join(dir, 'broken.png'), 'not a PNG');
  const flat = cli('detect', dir, '--classifier', FACE, '--device', 'cpu', '--json');
  assert.equal(flat.status, 9, flat.stderr);
  assert.deepEqual(jsonLines(flat.stdout).map((l) => l.file), [join(dir, 'a.png')]);
  assert.match(flat.stderr, /broken\.png/);
  const deep = cli('detect', dir, '--classifier', FACE, '--device', 'cpu', '--json', '--recursive');
  assert.equal(deep.status, 9, deep.stderr);
  const lines = jsonLines(deep.stdout);
  assert.deepEqual(lines.map((l) => l.file), [join(dir, 'a.png'), join(dir, 'sub', 'b.png')]);
  for (const l of lines) assert.deepEqual(boxes(l), [[171, 64, 104, 104]]);
  rmSync(join(dir, 'broken.png'));
  assert.equal(cli('detect', dir, '--classifier', FACE, '--device', 'cpu', '--quiet', '--recursive').status, 0);
  assertOneLineError(cli('detect', join(dir, 'sub', '..', 'sub', 'none'), '--classifier', FACE), 3, /no such file/);
});

test('adapters lists the GPU adapters', async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const r = cli('adapters', '--json');
  assert.equal(r.status, 0, r.stderr);
  const list = JSON.parse(r.stdout);
  assert.ok(list.length >= 1);
  assert.ok(list.every((a: { backend: string }) => typeof a.backend === 'string'));
  assert.ok(existsSync(BIN));
});

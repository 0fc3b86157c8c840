import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages, compareWithin } from '../../src/core/compare.js';
import type { Image } from '../../src/core/image.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { readImage } from '../../src/io/index.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { parsePipeline, runPipeline } from '../../src/ops/pipeline.js';
import { toGray } from '../../src/core/image.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';
import { childrenOf, mkfifo, readerGone, readerOf, running, until } from '../helpers/process.js';
import { RECORDS_FILE } from '../../src/engine/records.js';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
/** Hidden files of an output folder other than its batch record: temporary files left behind. */
const strays = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('.') && f !== RECORDS_FILE);

/** A folder of real photographs (one in a sub-folder) and one corrupt file. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-'));
  const inDir = join(dir, 'in');
  mkdirSync(join(inDir, 'sub'), { recursive: true });
  for (const f of ['camera.png', 'coins.png', 'moon.png', 'page.png']) copyFileSync(fixture('images', f), join(inDir, f));
  copyFileSync(fixture('images', 'chelsea.png'), join(inDir, 'sub', 'chelsea.png'));
  writeFileSync(join(inDir, 'corrupt.png'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(200, 7)]));
  return dir;
}

test('batch: a folder with a corrupt file — good images equal the single-image command, the corrupt one reported, exit 9; a rerun does nothing new', async () => {
  const dir = folder();
  const out = join(dir, 'out');
  const r = cli('equalize', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json');
  assert.equal(r.status, 9, r.stderr);
  const s = JSON.parse(r.stdout);
  assert.equal(s.processed, 5);
  assert.equal(s.failed.length, 1);
  assert.match(s.failed[0].file, /corrupt\.png$/);
  assert.ok(s.images_per_s > 0 && s.phases_ms && s.seconds > 0);
  for (const f of ['camera.png', 'coins.png', 'sub/chelsea.png']) {
    const single = join(dir, `single-${f.replace('/', '-')}`);
    assert.equal(cli('equalize', join(dir, 'in', f), single, '--device', 'cpu').status, 0);
    assert.ok(compareImages(await readImage(join(out, f)), await readImage(single)).identical, f);
  }
  assert.deepEqual(strays(out), [], 'no temporary files left');
  const again = JSON.parse(cli('equalize', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json').stdout);
  assert.equal(again.processed, 0);
  assert.equal(again.skipped, 5);
  // A deleted output (as after a kill) is redone, and only it; --overwrite redoes all.
  rmSync(join(out, 'moon.png'));
  assert.equal(JSON.parse(cli('equalize', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json').stdout).processed, 1);
  const older = new Date(Date.now() - 3600_000);
  utimesSync(join(out, 'page.png'), older, older); // an output older than its input is stale
  assert.equal(JSON.parse(cli('equalize', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json').stdout).processed, 1);
  assert.equal(JSON.parse(cli('equalize', join(dir, 'in'), out, '--recursive', '--overwrite', '--device', 'cpu', '--json').stdout).processed, 5);
});

test('batch --jobs 2: the same files as one process, the corrupt one reported once, exit 9, progress and one summary', async (t) => {
  const dir = folder();
  const one = join(dir, 'one'), two = join(dir, 'two');
  assert.equal(cli('equalize', join(dir, 'in'), one, '--recursive', '--device', 'cpu', '--quiet').status, 9);
  const r = cli('equalize', join(dir, 'in'), two, '--recursive', '--device', 'cpu', '--jobs', '2', '--json');
  assert.equal(r.status, 9, r.stderr);
  const s = JSON.parse(r.stdout.trim());
  assert.equal(s.processes, 2);
  assert.equal(s.processed, 5);
  assert.deepEqual(s.failed.map((f: { file: string }) => f.file.replace(/.*[\\/]/, '')), ['corrupt.png']);
  for (const f of ['camera.png', 'coins.png', 'moon.png', 'page.png', 'sub/chelsea.png']) {
    assert.ok(compareImages(await readImage(join(two, f)), await readImage(join(one, f))).identical, f);
  }
  const again = cli('equalize', join(dir, 'in'), two, '--recursive', '--device', 'cpu', '--jobs', '2');
  assert.equal(again.status, 9);
  assert.match(again.stdout, /0 processed, 5 skipped .* in 2 processes/);
  assert.match(again.stderr, /skipped .*corrupt\.png/);
  assert.equal(cli('equalize', join(dir, 'in'), two, '--jobs', '0').status, 2);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const g = cli('equalize', join(dir, 'in'), join(dir, 'gpu'), '--recursive', '--device', 'gpu', '--jobs', '2', '--json');
  assert.equal(JSON.parse(g.stdout.trim()).processed, 5, g.stderr);
  assert.ok(compareImages(await readImage(join(dir, 'gpu', 'sub', 'chelsea.png')), await readImage(join(one, 'sub', 'chelsea.png'))).identical);
});

test('batch of JPEGs (native codec, recycled decode buffers): CPU and GPU equal the single-image command, byte for byte', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-jpeg-'));
  const inDir = join(dir, 'in');
  mkdirSync(inDir);
  // Several sizes, repeated, so that decode buffers are handed back and reused across images.
  const names = ['chelsea_q90.jpg', 'crop_o1.jpg', 'crop_o6.jpg', 'camera_gray.jpg'];
  for (let k = 0; k < 3; k++) for (const f of names) copyFileSync(fixture('jpeg', f), join(inDir, `${k}-${f}`));
  const gpu = await gpuOrSkip(t);
  for (const device of gpu ? ['cpu', 'gpu'] : ['cpu']) {
    const out = join(dir, device);
    const r = cli('equalize', inDir, out, '--device', device, '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).processed, 12);
    for (const f of names) {
      const single = join(dir, `single-${device}-${f}`);
      assert.equal(cli('equalize', join(inDir, `2-${f}`), single, '--device', device).status, 0);
      for (let k = 0; k < 3; k++) assert.ok(readFileSync(join(out, `${k}-${f}`)).equals(readFileSync(single)), `${device} ${k}-${f}`);
    }
  }
});

test('batch: an output folder inside the input folder is never read back; several files in; --format', async () => {
  const dir = folder();
  const inDir = join(dir, 'in');
  const out = join(inDir, 'results');
  assert.equal(cli('morph', 'erode', inDir, out, '--recursive', '--device', 'cpu', '--quiet').status, 9);
  const second = JSON.parse(cli('morph', 'erode', inDir, out, '--recursive', '--device', 'cpu', '--json').stdout);
  assert.equal(second.processed + second.skipped, 5, 'its own outputs are not inputs');
  const two = join(dir, 'two');
  const r = cli('filter', fixture('images', 'camera.png'), fixture('images', 'coins.png'), two, '--filter', 'sobel', '--format', 'npy', '--device', 'cpu', '--quiet');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(readdirSync(two).sort(), [RECORDS_FILE, 'camera.npy', 'coins.npy']);
  assert.equal((await readImage(join(two, 'camera.npy'))).dtype, 'float32');
  const bad = cli('equalize', inDir, join(dir, 'x'), '--format', 'gif', '--device', 'cpu');
  assert.equal(bad.status, 2);
});

test('batch: two runs writing one output folder at once leave whole, valid files', async () => {
  const dir = folder();
  const out = join(dir, 'out');
  const run = () => new Promise<number>((res) => {
    const p = spawn(process.execPath, [BIN, 'clahe', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--quiet', '--overwrite'], { stdio: 'ignore' });
    p.on('exit', (code) => res(code ?? -1));
  });
  const codes = await Promise.all([run(), run()]);
  assert.deepEqual(codes, [9, 9]);
  for (const f of ['camera.png', 'coins.png', 'moon.png', 'page.png', 'sub/chelsea.png']) {
    const img = await readImage(join(out, f));
    assert.ok(img.data.length > 0 && statSync(join(out, f)).size > 0, f);
  }
  assert.deepEqual(strays(out), []);
});

/** The operations one after another, the way separate commands would run them (gray conversion between). */
async function oneByOne(img: Image, chain: string, on: { gpu?: GpuContext }): Promise<Image> {
  let cur = img;
  for (const s of parsePipeline(chain)) {
    const op = OPERATIONS[s.op];
    cur = (await op.run(op.colour ? cur : toGray(cur), s.params, on)).output;
  }
  return cur;
}

const CHAINS = [
  'equalize | threshold --method otsu',
  'clahe --tiles 8x8 --clip 2 | threshold --method otsu',
  'morph erode --se rect:5x5 | morph dilate --se ellipse:5x5 | equalize',
  'equalize | filter --filter gauss:2 --border reflect101',
];

test('pipeline output equals the operations run one by one (CPU and GPU, colour input)', async (t) => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  const gpu = await gpuOrSkip(t);
  for (const chain of CHAINS) {
    const steps = parsePipeline(chain);
    const cpu = await runPipeline(img, steps, {});
    const ref = await oneByOne(img, chain, {});
    assert.ok(compareImages(cpu.output, ref).identical, `cpu: ${chain}`);
    if (!gpu) continue;
    const g = await runPipeline(img, steps, { gpu });
    const gref = await oneByOne(img, chain, { gpu });
    assert.ok(compareImages(g.output, gref).identical, `gpu: ${chain}`);
    const c = cpu.output.dtype === 'float32' ? compareWithin(g.output, cpu.output, 1e-5) : compareImages(g.output, cpu.output);
    assert.ok(c.identical, `gpu vs cpu: ${chain}`);
    // Resident in, resident out (colour converted on the device by each step's rule; filters and morphology per
    // channel through the host): the host image's pixels, the input left alone.
    const dev = await GpuImage.upload(gpu, img);
    const res = await runPipeline(dev, steps);
    assert.ok(compareImages(await res.output.toHost(), g.output).identical, `resident: ${chain}`);
    res.output.release();
    assert.doesNotThrow(() => dev.assertLive());
    dev.release();
  }
});

test('imgpu pipeline: both devices agree, batch over a folder, a bad chain is exit 2 before any work', async (t) => {
  const gpu = await gpuOrSkip(t);
  const dir = folder();
  const out = join(dir, 'p.png');
  const r = cli('pipeline', fixture('images', 'camera.png'), out, 'equalize | threshold --method otsu', '--device', gpu ? 'both' : 'cpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  if (gpu) assert.equal(JSON.parse(r.stdout).identical, true);
  const b = cli('pipeline', join(dir, 'in'), join(dir, 'pout'), 'clahe --clip 2 | threshold --method otsu', '--device', 'cpu', '--json');
  assert.equal(b.status, 9);
  assert.equal(JSON.parse(b.stdout).processed, 4);
  for (const [chain, pattern] of [['equalize | blur', /unknown operation 'blur'/], ['equalize || threshold', /empty step/], ['threshold --method nope', /pipeline step 1 \(threshold\): .*method must be one of/], ['morph --se rect:3x3 erode --zz 1', /unknown option --zz/]] as const) {
    const e = cli('pipeline', fixture('images', 'camera.png'), out, chain);
    assert.equal(e.status, 2, chain);
    assert.match(e.stderr, pattern);
  }
});

test('--compression (PNG level, default 1) and --quality (JPEG) change the bytes, not the pixels; bad values are exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-codec-'));
  const fast = join(dir, 'fast.png'), small = join(dir, 'small.png');
  assert.equal(cli('equalize', fixture('images', 'chelsea.png'), fast, '--device', 'cpu').status, 0);
  assert.equal(cli('equalize', fixture('images', 'chelsea.png'), small, '--device', 'cpu', '--compression', '9').status, 0);
  assert.ok(statSync(small).size < statSync(fast).size, 'level 9 is smaller than level 1');
  assert.ok(compareImages(await readImage(fast), await readImage(small)).identical);
  const q = join(dir, 'q.jpg'), q95 = join(dir, 'q95.jpg');
  assert.equal(cli('equalize', fixture('images', 'chelsea.png'), q, '--device', 'cpu', '--quality', '50').status, 0);
  assert.equal(cli('equalize', fixture('images', 'chelsea.png'), q95, '--device', 'cpu').status, 0);
  assert.ok(statSync(q).size < statSync(q95).size, 'quality 50 is smaller than the default 95');
  // Each file is cv2.imencode's bytes at its quality, of the same (lossless) equalized pixels.
  const py = "import cv2, sys\nimg = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)\nfor q, f in ((50, sys.argv[2]), (95, sys.argv[3])): open(f, 'wb').write(cv2.imencode('.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, q])[1].tobytes())";
  const r = spawnSync(PYTHON, ['-c', py, fast, join(dir, 'cv50.jpg'), join(dir, 'cv95.jpg')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${PYTHON}: ${r.error?.message ?? r.stderr}`);
  assert.deepEqual(readFileSync(q), readFileSync(join(dir, 'cv50.jpg')), '--quality 50 = cv2.imwrite quality 50');
  assert.deepEqual(readFileSync(q95), readFileSync(join(dir, 'cv95.jpg')), 'default quality = cv2.imwrite quality 95');
  for (const bad of [['--compression', '12'], ['--quality', '0'], ['--quality', 'x']]) {
    const r = cli('equalize', fixture('images', 'chelsea.png'), q, '--device', 'cpu', ...bad);
    assert.equal(r.status, 2, bad.join(' '));
  }
});

test('batch: two inputs that would write one output are an error before any work (exit 2), nothing written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-batch-clash-'));
  for (const d of ['coll', 'd1', 'd2']) mkdirSync(join(dir, d));
  copyFileSync(fixture('images', 'camera.png'), join(dir, 'coll', 'x.png'));
  copyFileSync(fixture('jpeg', 'camera_gray.jpg'), join(dir, 'coll', 'x.jpg'));
  copyFileSync(fixture('images', 'camera.png'), join(dir, 'd1', 'y.png'));
  copyFileSync(fixture('images', 'coins.png'), join(dir, 'd2', 'y.png'));
  const a = cli('equalize', join(dir, 'coll'), join(dir, 'out1'), '--format', 'png', '--device', 'cpu');
  assert.equal(a.status, 2, a.stderr + a.stdout);
  assert.match(a.stderr, /x\.jpg and .*x\.png both write .*out1[\\/]x\.png/);
  const b = cli('equalize', join(dir, 'd1', 'y.png'), join(dir, 'd2', 'y.png'), join(dir, 'out2') + '/', '--device', 'cpu');
  assert.equal(b.status, 2, b.stderr + b.stdout);
  assert.match(b.stderr, /both write .*out2[\\/]y\.png/);
  assert.deepEqual(readdirSync(dir).sort(), ['coll', 'd1', 'd2'], 'no output folder made');
  // Without --format the two formats keep their own names.
  const c = cli('equalize', join(dir, 'coll'), join(dir, 'out3'), '--device', 'cpu', '--json');
  assert.equal(c.status, 0, c.stderr);
  assert.equal(JSON.parse(c.stdout).processed, 2);
  assert.deepEqual(readdirSync(join(dir, 'out3')).filter((f) => !f.startsWith('.')).sort(), ['x.jpg', 'x.png']);
});

test('batch: up to date means the same input, operation, parameters and options; the input folder is refused as the output', async () => {
  const dir = folder();
  const inDir = join(dir, 'in'), out = join(dir, 'out');
  const run = (...extra: string[]) => {
    const r = cli('clahe', inDir, out, '--recursive', '--device', 'cpu', '--json', ...extra);
    assert.equal(r.status, 9, r.stderr);
    return JSON.parse(r.stdout) as { processed: number; skipped: number };
  };
  assert.equal(run('--clip', '2').processed, 5);
  const rerun = run('--clip', '2');
  assert.equal(rerun.processed, 0);
  assert.equal(rerun.skipped, 5);
  // Other parameters: every output is redone (the old results are not "up to date").
  const four = run('--clip', '4');
  assert.equal(four.processed, 5);
  assert.equal(four.skipped, 0);
  const single = join(dir, 'single.png');
  assert.equal(cli('clahe', join(inDir, 'coins.png'), single, '--clip', '4', '--device', 'cpu').status, 0);
  assert.ok(readFileSync(join(out, 'coins.png')).equals(readFileSync(single)), 'the output is the --clip 4 result');
  assert.equal(run('--clip', '4').skipped, 5);
  // Flag order and spelled-out defaults do not matter; another operation does.
  assert.equal(run('--tiles', '8x8', '--clip', '4').skipped, 5);
  assert.equal(JSON.parse(cli('equalize', inDir, out, '--recursive', '--device', 'cpu', '--json').stdout).processed, 5);
  // An input replaced by another image (same name) and an output replaced by another file are redone.
  copyFileSync(fixture('images', 'camera.png'), join(inDir, 'moon.png'));
  copyFileSync(fixture('images', 'camera.png'), join(out, 'page.png'));
  const again = JSON.parse(cli('equalize', inDir, out, '--recursive', '--device', 'cpu', '--json').stdout);
  assert.equal(again.processed, 2);
  // The input folder as the output folder: outputs would replace the inputs (or be read as inputs next time).
  const before = readFileSync(join(inDir, 'camera.png'));
  for (const args of [[inDir, inDir], [join(inDir, 'camera.png'), join(inDir, 'coins.png'), inDir + '/'], [inDir, inDir, '--format', 'npy']]) {
    const r = cli('equalize', ...args, '--device', 'cpu', '--overwrite');
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /is the folder of the inputs/);
  }
  assert.ok(readFileSync(join(inDir, 'camera.png')).equals(before), 'inputs untouched');
  assert.deepEqual(readdirSync(inDir).filter((f) => f.endsWith('.npy') || f.startsWith('.')), []);
});

test('batch --jobs 2 keeps the records too: a rerun skips, other parameters redo', () => {
  const dir = folder();
  const out = join(dir, 'out');
  const run = (...extra: string[]) => JSON.parse(cli('clahe', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--jobs', '2', '--json', ...extra).stdout.trim());
  assert.equal(run('--clip', '2').processed, 5);
  assert.equal(run('--clip', '2').skipped, 5);
  assert.equal(run('--clip', '3').processed, 5);
  assert.equal(JSON.parse(cli('clahe', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json', '--clip', '3').stdout).skipped, 5);
});

test('batch progress counts failed images apart from written ones', () => {
  const dir = folder();
  const r = cli('equalize', join(dir, 'in'), join(dir, 'out'), '--recursive', '--device', 'cpu');
  assert.equal(r.status, 9);
  const last = r.stderr.trim().split('\n').filter((l) => /images/.test(l)).pop();
  assert.match(last ?? '', /^5\/6 images written, 1 failed,/, r.stderr);
});

test('batch: an output sub-folder that cannot be made fails its images as a file error, not an internal one', () => {
  const dir = folder();
  const out = join(dir, 'out');
  mkdirSync(out);
  writeFileSync(join(out, 'sub'), 'a file where the sub-folder would go');
  const r = cli('equalize', join(dir, 'in'), out, '--recursive', '--device', 'cpu', '--json');
  assert.equal(r.status, 9, r.stderr);
  const failed = (JSON.parse(r.stdout) as { failed: { file: string; message: string }[] }).failed.filter((f) => f.file.includes('chelsea'));
  assert.equal(failed.length, 1);
  assert.match(failed[0].message, /^cannot create the folder .*sub: /);
});

test('batch into a read-only file system names it (Node reported ENOENT for the folder to create)', (t) => {
  const dir = folder();
  const ro = join(dir, 'ro');
  mkdirSync(ro);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', ro], { encoding: 'utf8' });
  if (m.status !== 0) {
    if (process.env.CI || process.env.IMGPU_REQUIRE_GPU === '1') assert.fail(`cannot mount a read-only tmpfs here: ${m.stderr}`);
    return t.skip(`cannot mount a read-only tmpfs (needs root): ${m.stderr.trim()}`);
  }
  try {
    for (const out of [join(ro, 'sub'), ro]) {
      const r = cli('equalize', join(dir, 'in'), out, '--device', 'cpu');
      assert.equal(r.status, 3, r.stderr);
      assert.doesNotMatch(r.stderr, /ENOENT/);
      assert.match(r.stderr, /read-only file system|not writable/);
    }
    assert.match(cli('equalize', join(dir, 'in'), join(ro, 'sub'), '--device', 'cpu').stderr, new RegExp(`${ro} is on a read-only file system`));
  } finally {
    spawnSync('umount', [ro]);
  }
});

test('batch --jobs 2: SIGKILL of the parent ends its processes (they went on reading and writing as orphans)', { skip: process.platform !== 'linux' && 'needs Linux /proc and mkfifo' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-jobs-kill-'));
  // Each process's input is a FIFO: it reads until a writer closes it, i.e. it is at work until we say.
  const inputs = ['a.png', 'b.png'].map((f) => join(dir, f));
  for (const f of inputs) mkfifo(f);
  const parent = spawn(process.execPath, [BIN, 'equalize', ...inputs, join(dir, 'out'), '--jobs', '2', '--device', 'cpu', '--quiet'], { stdio: 'ignore' });
  const fds = await Promise.all(inputs.map(readerOf));
  try {
    const kids = childrenOf(parent.pid!);
    assert.equal(kids.length, 2, 'two batch processes');
    parent.kill('SIGKILL');
    for (const fd of fds) await readerGone(fd, 'a batch process still reads its input after its parent was killed');
    for (const k of kids) await until(() => (running(k) ? undefined : true), `batch process ${k} still runs`);
  } finally {
    for (const fd of fds) closeSync(fd);
  }
});

test('imgpu pipeline on a colour input follows its first step\'s colour rule, as the single command does (CLAHE on Y, filter and morph per channel), alone and in batch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-pipe-colour-'));
  const photo = fixture('images', 'chelsea.png');
  for (const [op, args, chain] of [
    ['clahe', ['--clip', '2'], 'clahe --clip 2'],
    ['filter', ['--filter', 'gauss:2', '--saturate'], 'filter --filter gauss:2 --saturate | morph erode --se rect:3x3'],
    ['morph', ['erode', '--se', 'rect:3x3'], 'morph erode --se rect:3x3 | equalize'],
  ] as const) {
    const single = join(dir, `${op}.png`), piped = join(dir, `${op}-pipe.png`);
    assert.equal(cli(op, ...args, photo, single, '--device', 'cpu').status, 0);
    if (op === 'filter') assert.equal(cli('morph', 'erode', '--se', 'rect:3x3', single, single, '--device', 'cpu').status, 0);
    // A colour PNG read gray is libpng's conversion (cv2.imread(IMREAD_GRAYSCALE)'s); inside a pipeline a colour image
    // is converted in memory (cv2.cvtColor's): the single commands hand it over as TIFF, whose gray read is cvtColor's.
    if (op === 'morph') {
      const tif = join(dir, 'morph.tif');
      assert.equal(cli(op, ...args, photo, tif, '--device', 'cpu').status, 0);
      assert.equal(cli('equalize', tif, single, '--device', 'cpu').status, 0);
    }
    const r = cli('pipeline', photo, piped, chain, '--device', 'cpu');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readFileSync(piped), readFileSync(single), `${chain}: the single commands' bytes`);
  }
  // A batch reads as the single-image pipeline does.
  mkdirSync(join(dir, 'in'));
  copyFileSync(photo, join(dir, 'in', 'chelsea.png'));
  const b = cli('pipeline', join(dir, 'in'), join(dir, 'out'), 'clahe --clip 2', '--device', 'cpu', '--quiet');
  assert.equal(b.status, 0, b.stderr);
  assert.deepEqual(readFileSync(join(dir, 'out', 'chelsea.png')), readFileSync(join(dir, 'clahe.png')));
  rmSync(dir, { recursive: true, force: true });
});

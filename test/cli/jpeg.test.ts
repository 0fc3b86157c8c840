import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { jpegInputOnGpu } from '../../src/engine/jpeg.js';
import { compareImages } from '../../src/core/compare.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { RecycledBuffers } from '../../src/node/codec-pool.js';
import { assertOneLineError, cli, cliWith } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gpuOrSkip } from '../helpers/gpu.js';

// --jpeg gpu|cpu|auto (src/engine/jpeg.ts): the path a JPEG input is decoded on when the command runs on the GPU, said
// in the --json summaries; the outputs are the same bytes on either path.
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-cli-jpeg-'));
const photo = (name: string) => fixture('jpeg-gpu', name);

test('--jpeg takes gpu, cpu or auto: another value is exit 2, one line', () => {
  assertOneLineError(cli('equalize', photo('c420.jpg'), join(tmp, 'x.png'), '--jpeg', 'fast'), 2, /--jpeg must be one of gpu\|cpu\|auto, got 'fast'/);
});

test('single image: --jpeg gpu decodes on the GPU, cpu and auto on the CPU, the same output bytes; --json says which', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const run = (jpeg: string, input = photo('c420.jpg'), op = 'equalize') => {
    const out = join(tmp, `${op}-${jpeg}.png`);
    const r = cli(op, input, out, '--device', 'gpu', '--jpeg', jpeg, '--json');
    assert.equal(r.status, 0, r.stderr);
    return { json: JSON.parse(r.stdout) as { jpeg: string | null }, bytes: readFileSync(out), stderr: r.stderr };
  };
  const gpu = run('gpu'), cpu = run('cpu'), auto = run('auto');
  assert.deepEqual([gpu.json.jpeg, cpu.json.jpeg, auto.json.jpeg], ['gpu', 'cpu', 'cpu']);
  assert.ok(gpu.bytes.equals(cpu.bytes) && auto.bytes.equals(cpu.bytes), 'the same output');
  assert.equal(run('gpu', fixture('images', 'coins.png')).json.jpeg, null, 'not a JPEG input');
  const pipe = (jpeg: string) => cli('pipeline', photo('c422.jpg'), join(tmp, `p-${jpeg}.png`), 'equalize | threshold --method otsu', '--device', 'gpu', '--jpeg', jpeg);
  assert.equal(pipe('gpu').status, 0);
  assert.equal(pipe('cpu').status, 0);
  assert.ok(readFileSync(join(tmp, 'p-gpu.png')).equals(readFileSync(join(tmp, 'p-cpu.png'))), 'pipeline: the same output');
  // Any sampling layout on the GPU (4:4:0 here), same output.
  const c440 = run('gpu', photo('c440.jpg'));
  assert.equal(c440.json.jpeg, 'gpu');
  assert.ok(c440.bytes.equals(run('cpu', photo('c440.jpg')).bytes), '4:4:0: the same output');
  // A file the GPU decoder leaves to the CPU (DCT values beyond its IDCT's exact range): said, same output.
  const dqt = run('gpu', fixture('jpeg-damaged', 'dqt.jpg'));
  assert.equal(dqt.json.jpeg, 'cpu');
  assert.match(dqt.stderr, /note: --jpeg gpu: .*dqt\.jpg: DCT values beyond .*decoded on the CPU/);
  assert.ok(dqt.bytes.equals(run('cpu', fixture('jpeg-damaged', 'dqt.jpg')).bytes), 'left to the CPU: the same output');
  const oriented = run('gpu', fixture('jpeg', 'crop_o6.jpg'));
  assert.equal(oriented.json.jpeg, 'gpu', 'EXIF orientation applied on the GPU');
  assert.ok(oriented.bytes.equals(run('cpu', fixture('jpeg', 'crop_o6.jpg')).bytes), 'oriented: the same output');
  // A command on colour (CLAHE of YCrCb's Y): the photo decoded in colour on the GPU, converted there, same output.
  const clahe = run('gpu', photo('c420.jpg'), 'clahe');
  assert.equal(clahe.json.jpeg, 'gpu');
  assert.ok(clahe.bytes.equals(run('cpu', photo('c420.jpg'), 'clahe').bytes), 'colour CLAHE: the same output');
});

test('batch: --jpeg gpu gives the files of --jpeg cpu, and the summary counts the JPEGs each path decoded', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = join(tmp, 'in');
  mkdirSync(inDir, { recursive: true });
  for (const f of ['c420.jpg', 'c422.jpg', 'c444_prog.jpg', 'gray.jpg', 'c440.jpg']) copyFileSync(photo(f), join(inDir, f));
  // One the GPU decoder leaves to the CPU: DCT values beyond its IDCT's exact range (every layout is the GPU's).
  copyFileSync(fixture('jpeg-damaged', 'dqt.jpg'), join(inDir, 'dqt.jpg'));
  copyFileSync(fixture('images', 'coins.png'), join(inDir, 'coins.png'));
  const run = (jpeg: string, ...more: string[]) => {
    const r = cli('equalize', inDir, join(tmp, `out-${jpeg}${more.length ? '-both' : ''}`), '--format', 'png', '--device', 'gpu', '--jpeg', jpeg, '--json', ...more);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { processed: number; jpeg?: Record<string, number>; disagreed?: number };
  };
  const gpu = run('gpu');
  assert.equal(gpu.processed, 7);
  assert.deepEqual(gpu.jpeg, { gpu: 5, cpu: 1 });
  assert.deepEqual(run('cpu').jpeg, { cpu: 6 });
  for (const f of readdirSync(join(tmp, 'out-cpu')).filter((f) => f.endsWith('.png'))) {
    assert.ok(readFileSync(join(tmp, 'out-gpu', f)).equals(readFileSync(join(tmp, 'out-cpu', f))), f);
  }
  const both = JSON.parse(cli('equalize', inDir, join(tmp, 'out-both'), '--format', 'png', '--device', 'both', '--jpeg', 'gpu', '--json').stdout) as { disagreed: number; jpeg: Record<string, number> };
  assert.equal(both.disagreed, 0, 'the CPU run on the downloaded GPU decode agrees');
  assert.deepEqual(both.jpeg, { gpu: 5, cpu: 1 });
});

test('imgpu info says which JPEG path --jpeg auto takes and whether the GPU decoder and encoder are there', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const info = (env: Record<string, string> = {}) => {
    const r = cliWith(env, 'info', '--json');
    assert.equal(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { jpeg: { auto: string; gpu: string; gpuEncode: string } }).jpeg;
  };
  const here = info();
  assert.equal(here.auto, 'cpu');
  assert.equal(here.gpu, 'available');
  assert.equal(here.gpuEncode, 'available');
  assert.match(info({ IMGPU_NO_NATIVE_JPEG: '1' }).gpuEncode, /^unavailable: dist\/native\/imgpu-jpegenc\.node: off/);
  assert.match(cliWith({ IMGPU_NO_NATIVE_JPEG: '1' }, 'info').stdout, /jpeg encode \(batch --jpeg gpu\): gpu path unavailable: dist\/native\/imgpu-jpegenc\.node: off/);
});

test('imgpu info says where the GPU encoder\'s entropy coding runs (IMGPU_JPEG_ENTROPY, else the GPU); a bad value is one line, exit 2', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const entropy = (env: Record<string, string>) => (JSON.parse(cliWith(env, 'info', '--json').stdout) as { jpeg: { gpuEncodeEntropy: string } }).jpeg.gpuEncodeEntropy;
  assert.equal(entropy({}), 'gpu');
  assert.equal(entropy({ IMGPU_JPEG_ENTROPY: 'cpu' }), 'cpu');
  assert.equal(entropy({ IMGPU_JPEG_ENTROPY: 'gpu' }), 'gpu');
  assert.match(cliWith({ IMGPU_JPEG_ENTROPY: 'gpu' }, 'info').stdout, /its entropy coding on the gpu \(IMGPU_JPEG_ENTROPY\)/);
  const bad = cliWith({ IMGPU_JPEG_ENTROPY: 'fpga' }, 'info');
  assert.equal(bad.status, 2, bad.stderr);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /IMGPU_JPEG_ENTROPY must be 'gpu' or 'cpu', got fpga/);
});

test('imgpu info says where the GPU decoder\'s Huffman decoding runs (IMGPU_JPEG_DECODE_ENTROPY, else the GPU); a bad value is one line, exit 2', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const where = (env: Record<string, string>) => (JSON.parse(cliWith(env, 'info', '--json').stdout) as { jpeg: { gpuDecodeEntropy: string } }).jpeg.gpuDecodeEntropy;
  assert.equal(where({}), 'gpu');
  assert.equal(where({ IMGPU_JPEG_DECODE_ENTROPY: 'cpu' }), 'cpu');
  assert.match(cliWith({}, 'info').stdout, /its Huffman decoding on the gpu \(IMGPU_JPEG_DECODE_ENTROPY\)/);
  const bad = cliWith({ IMGPU_JPEG_DECODE_ENTROPY: 'fpga' }, 'info');
  assert.equal(bad.status, 2, bad.stderr);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /IMGPU_JPEG_DECODE_ENTROPY must be 'gpu' or 'cpu', got fpga/);
});

test('batch --jpeg gpu: the summary says where each input\'s Huffman decoding ran, on either path; the same files', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-huffman-'));
  try {
    const src = join(dir, 'in');
    mkdirSync(src);
    for (const name of ['c420', 'c444', 'c420_prog']) copyFileSync(fixture('jpeg-gpu', `${name}.jpg`), join(src, `${name}.jpg`));
    const run = (env: Record<string, string>, out: string) => {
      const r = cliWith(env, 'equalize', src, join(dir, out), '--device', 'gpu', '--jpeg', 'gpu', '--json');
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as { huffman: Record<string, number> };
    };
    assert.deepEqual(run({}, 'gpu').huffman, { gpu: 2, cpu: 1 }, 'the progressive file on the CPU');
    assert.deepEqual(run({ IMGPU_JPEG_DECODE_ENTROPY: 'cpu' }, 'cpu').huffman, { cpu: 3 });
    for (const name of ['c420', 'c444', 'c420_prog']) {
      assert.ok(readFileSync(join(dir, 'gpu', `${name}.jpg`)).equals(readFileSync(join(dir, 'cpu', `${name}.jpg`))), name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch --jpeg gpu with IMGPU_JPEG_ENTROPY=gpu (entropy coding on the GPU): the JPEG files of --jpeg cpu', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = join(tmp, 'in-entropy');
  mkdirSync(inDir, { recursive: true });
  for (const f of ['c420.jpg', 'c444.jpg', 'gray.jpg']) copyFileSync(photo(f), join(inDir, f));
  const run = (jpeg: string, env: Record<string, string>) => {
    const r = cliWith(env, 'equalize', inDir, join(tmp, `out-entropy-${jpeg}`), '--device', 'gpu', '--jpeg', jpeg, '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { processed: number }).processed, 3);
  };
  run('gpu', { IMGPU_JPEG_ENTROPY: 'gpu' });
  run('cpu', {});
  for (const f of readdirSync(inDir)) assert.ok(readFileSync(join(tmp, 'out-entropy-gpu', f)).equals(readFileSync(join(tmp, 'out-entropy-cpu', f))), f);
});

test('batch --jpeg gpu without the GPU encoder\'s entropy coder: every JPEG written, encoded on the CPU, said once', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = join(tmp, 'in-noenc');
  mkdirSync(inDir, { recursive: true });
  for (const f of ['c420.jpg', 'c444.jpg', 'gray.jpg']) copyFileSync(photo(f), join(inDir, f));
  const out = join(tmp, 'out-noenc');
  // IMGPU_NO_NATIVE_JPEG=1: as on a platform without imgpu's native JPEG pieces (the GPU decoder's are kept here).
  const r = cliWith({ IMGPU_NO_NATIVE_JPEG: '1' }, 'equalize', inDir, out, '--device', 'gpu', '--jpeg', 'gpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { processed: number }).processed, 3);
  assert.equal(r.stderr.match(/note: --jpeg gpu: the GPU JPEG encoder's entropy coder is not available \(dist\/native\/imgpu-jpegenc\.node: off\); JPEG outputs encoded on the CPU/g)?.length, 1, r.stderr);
  for (const f of readdirSync(inDir)) assert.ok(readFileSync(join(out, f)).subarray(0, 2).equals(Buffer.from([0xff, 0xd8])), `${f} written as a JPEG`);
});

test('--jpeg gpu without the GPU decoder\'s entropy stage (IMGPU_NO_GPU_JPEG=1): single image and batch (also --jobs 2) decode on the CPU, the same bytes, said once', { skip }, async (t) => {
  if (!(await gpuOrSkip(t))) return;
  const inDir = join(tmp, 'in-nodec');
  mkdirSync(inDir, { recursive: true });
  for (const f of ['c420.jpg', 'c444.jpg', 'gray.jpg']) copyFileSync(photo(f), join(inDir, f));
  const NOTE = /note: --jpeg gpu: [^\n]*the GPU decoder's entropy stage is not available \(dist\/native\/imgpu-jpegcoef\.node: off\); decoded on the CPU/g;
  const off = { IMGPU_NO_GPU_JPEG: '1' };
  const batch = cliWith(off, 'equalize', inDir, join(tmp, 'out-nodec'), '--format', 'png', '--device', 'gpu', '--jpeg', 'gpu', '--json');
  assert.equal(batch.status, 0, batch.stderr);
  assert.deepEqual((JSON.parse(batch.stdout) as { jpeg: Record<string, number> }).jpeg, { cpu: 3 });
  assert.equal(batch.stderr.match(NOTE)?.length, 1, batch.stderr);
  // With --jobs 2 each shard process notes it; the batch says it once, as in one process.
  const jobs = cliWith(off, 'equalize', inDir, join(tmp, 'out-nodec-jobs'), '--format', 'png', '--device', 'gpu', '--jpeg', 'gpu', '--jobs', '2', '--json');
  assert.equal(jobs.status, 0, jobs.stderr);
  assert.equal(jobs.stderr.match(NOTE)?.length, 1, jobs.stderr);
  const ref = cli('equalize', inDir, join(tmp, 'out-nodec-ref'), '--format', 'png', '--device', 'gpu', '--jpeg', 'cpu');
  assert.equal(ref.status, 0, ref.stderr);
  for (const f of readdirSync(join(tmp, 'out-nodec-ref')).filter((f) => f.endsWith('.png'))) {
    assert.ok(readFileSync(join(tmp, 'out-nodec', f)).equals(readFileSync(join(tmp, 'out-nodec-ref', f))), f);
  }
  const single = cliWith(off, 'equalize', photo('c420.jpg'), join(tmp, 'nodec.png'), '--device', 'gpu', '--jpeg', 'gpu', '--json');
  assert.equal(single.status, 0, single.stderr);
  assert.equal((JSON.parse(single.stdout) as { jpeg: string }).jpeg, 'cpu');
  assert.equal(single.stderr.match(NOTE)?.length, 1, single.stderr);
});

test('a batch\'s JPEG input on the GPU path: the file read into the batch\'s recycled memory and given back once decoded, every buffer; the same pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  const path = photo('c420.jpg');
  const recycled = new RecycledBuffers(4);
  const allocs: number[] = [];
  let given = 0;
  const host = { alloc: (n: number) => (allocs.push(n), recycled.alloc(n)), give: (b: ArrayBufferLike) => (given++, recycled.give(b)) };
  const batch = await jpegInputOnGpu(ctx, path, { gray: true }, 'gpu', host);
  const single = await jpegInputOnGpu(ctx, path, { gray: true }, 'gpu');
  assert.ok(batch && single, 'decoded on the GPU');
  assert.equal(allocs.filter((n) => n === statSync(path).size).length, 1, `the file in host memory (allocations: ${allocs})`);
  assert.equal(given, allocs.length, 'every buffer given back');
  assert.ok(compareImages(await batch.image.toHost(), await single.image.toHost()).identical);
  batch.image.release();
  single.image.release();
});

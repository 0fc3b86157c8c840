import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareImages } from '../../src/core/compare.js';
import { UnsupportedFormatError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { readImage, type FailOn } from '../../src/io/index.js';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { RecycledBuffers } from '../../src/node/codec-pool.js';
import { OUT_OF_RANGE } from '../../src/node/jpeg-gpu-decode.js';
import { DAMAGED, readJpegToGpu } from '../../src/node/jpeg-gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { fixture } from '../helpers/fixtures.js';

// Damaged JPEGs (scripts/make_jpeg_damaged_fixtures.py) and cv2.imread's pixels of each (Debian's OpenCV 4.6 /
// libjpeg-turbo 2.1.5, saved as PNG).
const file = (name: string) => fixture('jpeg-damaged', name);
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

function assertIdentical(got: Image, want: Image, what: string) {
  const c = compareImages(got, want);
  assert.ok(c.identical, `${what}: ${got.shape.join('×')}×${got.channels} vs ${want.shape.join('×')}×${want.channels}, ${c.mismatches} bytes differ (max ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

test('a JPEG whose quantization table takes the IDCT beyond where libjpeg-turbo\'s SIMD and C versions agree: the GPU path declines it and gives cv2.imread\'s pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // Bands too (64 KiB bindings): the status word is shared by every band's IDCT.
  const banded = await gpuWithBindingLimit(t, 64 << 10);
  for (const [c, where] of [[ctx, ''], [banded!, ', in bands']] as const) {
    for (const gray of [false, true]) {
      for (const [host, entropy] of [[undefined, 'gpu'], [new RecycledBuffers(1), 'gpu'], [undefined, 'cpu'], [new RecycledBuffers(1), 'cpu']] as const) {
        const what = `dqt.jpg ${gray ? 'gray' : 'colour'}, Huffman decoding on the ${entropy}${host ? ', host memory' : ''}${where}`;
        const r = await readJpegToGpu(c, readFileSync(file('dqt.jpg')), 'dqt.jpg', gray, { jpeg: 'gpu', host, entropy });
        assert.ok(r, what);
        const got = await r.image.toHost();
        r.image.release();
        assertIdentical(got, await readImage(file(`dqt_${gray ? 'gray' : 'rgb'}.png`)), what);
        assert.equal(r.jpeg, 'cpu', `${what}: declined by the GPU decoder`);
        assert.equal(r.fallback, OUT_OF_RANGE, what);
      }
    }
  }
  // The undamaged file it was made from stays on the GPU, with cv2's pixels.
  for (const gray of [false, true]) {
    const r = await readJpegToGpu(ctx, readFileSync(file('base.jpg')), 'base.jpg', gray, { jpeg: 'gpu' });
    assert.equal(r?.jpeg, 'gpu', `base.jpg: ${r?.fallback}`);
    const got = await r.image.toHost();
    r.image.release();
    assertIdentical(got, await readImage(file(`base_${gray ? 'gray' : 'rgb'}.png`)), `base.jpg ${gray ? 'gray' : 'colour'}`);
  }
});

/** What each --fail-on level does with each damaged fixture: decoded (true) or refused. */
const DECODES: Record<string, Record<FailOn, boolean>> = {
  truncated: { none: true, truncated: false, error: false, warning: false },
  corrupt: { none: true, truncated: true, error: true, warning: false },
};

test('failOn: a truncated or corrupt JPEG is refused at the levels above it, and below them decodes to cv2.imread\'s pixels with libjpeg\'s warnings', { skip }, async () => {
  for (const [name, levels] of Object.entries(DECODES)) {
    for (const [failOn, decodes] of Object.entries(levels) as [FailOn, boolean][]) {
      for (const gray of [false, true]) {
        const what = `${name}.jpg, failOn ${failOn}, ${gray ? 'gray' : 'colour'}`;
        const read = readImage(file(`${name}.jpg`), { gray, failOn });
        if (!decodes) {
          await assert.rejects(read, (e) => e instanceof UnsupportedFormatError && (failOn === 'warning' || /is truncated .*Premature end/.test(e.message)), what);
          continue;
        }
        const img = await read;
        assertIdentical(img, await readImage(file(`${name}_${gray ? 'gray' : 'rgb'}.png`)), what);
        assert.match(img.warnings?.join() ?? '', name === 'truncated' ? /Premature end of JPEG file/ : /Corrupt JPEG data/, what);
      }
    }
  }
  // An undamaged file has no warnings at any level.
  assert.equal((await readImage(file('base.jpg'), { failOn: 'none' })).warnings, undefined);
});

test('failOn below warning on the GPU path: a damaged JPEG is handed to libjpeg, with cv2.imread\'s pixels and the warnings; by default it is refused', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  for (const name of ['truncated', 'corrupt']) {
    for (const entropy of ['gpu', 'cpu'] as const) {
      for (const gray of [false, true]) {
        const what = `${name}.jpg ${gray ? 'gray' : 'colour'}, Huffman decoding on the ${entropy}`;
        const buf = readFileSync(file(`${name}.jpg`));
        await assert.rejects(readJpegToGpu(ctx, buf, name, gray, { jpeg: 'gpu', entropy }), UnsupportedFormatError, what);
        const r = await readJpegToGpu(ctx, buf, name, gray, { jpeg: 'gpu', entropy, failOn: 'none' });
        assert.ok(r, what);
        const got = await r.image.toHost();
        r.image.release();
        assertIdentical(got, await readImage(file(`${name}_${gray ? 'gray' : 'rgb'}.png`)), what);
        assert.equal(r.fallback, DAMAGED, what);
        assert.ok(r.warnings?.length, what);
      }
    }
  }
});

test('--fail-on: exit 3 by default for a truncated JPEG, its warning said and exit 0 with --fail-on none, exit 2 for another value; a batch lists each file\'s warnings', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-fail-on-'));
  try {
    const input = file('truncated.jpg');
    assertOneLineError(cli('equalize', input, join(dir, 'a.png'), '--device', 'cpu'), 3, /truncated\.jpg is corrupt or truncated .*Premature end/);
    assertOneLineError(cli('equalize', input, join(dir, 'a.png'), '--device', 'cpu', '--fail-on', 'truncated'), 3, /is truncated .*--fail-on none decodes it/);
    assertOneLineError(cli('equalize', input, join(dir, 'a.png'), '--device', 'cpu', '--fail-on', 'some'), 2, /--fail-on must be one of none\|truncated\|error\|warning/);
    const ok = cli('equalize', input, join(dir, 'a.png'), '--device', 'cpu', '--fail-on', 'none', '--json');
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stderr, /warning: .*truncated\.jpg: libjpeg: Premature end of JPEG file/);
    assert.match(JSON.parse(ok.stdout).warnings.join(), /Premature end/);
    const inputs = join(dir, 'in');
    mkdirSync(inputs);
    for (const n of ['base', 'truncated', 'corrupt']) copyFileSync(file(`${n}.jpg`), join(inputs, `${n}.jpg`));
    const strict = cli('equalize', inputs, join(dir, 'out1'), '--device', 'cpu', '--json', '--quiet');
    assert.equal(strict.status, 9, strict.stderr);
    assert.equal(JSON.parse(strict.stdout).failed.length, 2);
    const batch = cli('equalize', inputs, join(dir, 'out2'), '--device', 'cpu', '--json', '--quiet', '--fail-on', 'error');
    assert.equal(batch.status, 9, batch.stderr); // the truncated file still fails at 'error'
    const summary = JSON.parse(batch.stdout) as { processed: number; warnings: { file: string; warnings: string[] }[] };
    assert.equal(summary.processed, 2);
    assert.deepEqual(summary.warnings.map((w) => w.file), [join(inputs, 'corrupt.jpg')]);
    assert.match(summary.warnings[0].warnings.join(), /Corrupt JPEG data/);
    // --jobs: the parent's summary merges the processes' warnings.
    const jobs = cli('equalize', inputs, join(dir, 'out3'), '--device', 'cpu', '--json', '--quiet', '--fail-on', 'none', '--jobs', '2');
    assert.equal(jobs.status, 0, jobs.stderr);
    assert.deepEqual((JSON.parse(jobs.stdout) as typeof summary).warnings.map((w) => w.file).sort(), ['corrupt.jpg', 'truncated.jpg'].map((n) => join(inputs, n)));
    // A CPU lane beside the GPU: the files its workers decode report their warnings too.
    const lane = cli('equalize', inputs, join(dir, 'out4'), '--device', 'gpu', '--jpeg', 'gpu', '--cpu-lane', '2', '--json', '--quiet', '--fail-on', 'none');
    assert.equal(lane.status, 0, lane.stderr);
    const laned = JSON.parse(lane.stdout) as typeof summary & { lanes?: { cpu: number } };
    assert.ok((laned.lanes?.cpu ?? 0) > 0, `the lane took images: ${JSON.stringify(laned.lanes)}`);
    assert.deepEqual(laned.warnings.map((w) => w.file).sort(), ['corrupt.jpg', 'truncated.jpg'].map((n) => join(inputs, n)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 40 item 3: filter and morph on a colour photo process each channel, as OpenCV's functions do on cv2.imread's image.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { toGray, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { filter, type FilterOptions } from '../../src/ops/convolve/index.js';
import { morph, type MorphOptions } from '../../src/ops/morph/index.js';
import { fixture } from '../helpers/fixtures.js';
import { countReadbacks, gpuOrSkip } from '../helpers/gpu.js';
import { colour, pythonArrays } from '../helpers/python.js';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));

function assertSame(got: Image, want: Image, what: string): void {
  assert.equal(got.channels, want.channels, `${what}: channels`);
  const c = compareImages(got, want);
  assert.ok(c.identical, `${what}: ${c.mismatches} of ${want.data.length} values differ (max ${c.maxAbsDiff}, first at ${c.firstMismatch})`);
}

// cv2 on the image cv2.imread returns (BGR; each channel alone, so the order does not matter), turned RGB to compare.
const CASES: [what: string, run: (img: Image, o: FilterOptions & MorphOptions) => Promise<{ output: Image }>, cv2: string][] = [
  ['box:5x3', (img, o) => filter(img, 'box:5x3', { border: 'reflect101', saturate: true, ...o }), 'cv2.blur(x, (5, 3))'],
  ['sobel-x', (img, o) => filter(img, 'sobel-x', { border: 'reflect101', saturate: true, ...o }), 'cv2.Sobel(x, -1, 1, 0)'],
  ['erode rect:5x5', (img, o) => morph(img, { op: 'erode', se: 'rect:5x5', ...o }), 'cv2.erode(x, np.ones((5, 5), np.uint8))'],
  ['open ellipse:7x5', (img, o) => morph(img, { op: 'open', se: 'ellipse:7x5', ...o }), 'cv2.morphologyEx(x, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 5)))'],
];

test('filter and morph of a colour photo (8- and 16-bit, 451×300) equal cv2.blur/Sobel/erode/morphologyEx byte for byte, per channel, CPU and GPU', async (t) => {
  const photos = { u8: await readImage(fixture('images', 'chelsea.png')), u16: await readImage(fixture('images', 'chelsea16.png')) };
  assert.equal(photos.u8.channels, 3);
  const script = CASES.map(([, , cv], i) => `
for n in ('u8', 'u16'):
    x = cv2.imread('${fixture('images', 'chelsea')}' + ('16' if n == 'u16' else '') + '.png', cv2.IMREAD_UNCHANGED)
    O[f'{n}-${i}'] = ${cv}[:, :, ::-1]`).join('');
  const refs = pythonArrays(script, {});
  const gpu = await gpuOrSkip(t);
  for (const [i, [what, run]] of CASES.entries()) {
    for (const [n, img] of Object.entries(photos)) {
      const want = colour(refs[`${n}-${i}`]);
      assertSame((await run(img, {})).output, want, `CPU ${what} ${n}`);
      if (gpu) assertSame((await run(img, { gpu })).output, want, `GPU ${what} ${n}`);
    }
  }
});

test('gauss --truncate 3 of an 8-bit colour photo equals cv2.GaussianBlur byte for byte (its fixed point and kernel size), every implementation, CPU and GPU', async (t) => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  const SIGMAS = [[0.8], [1.1], [2], [3.3], [1.5, 2.5]];
  const refs = pythonArrays(`
x = cv2.imread('${fixture('images', 'chelsea.png')}')
for i, s in enumerate(${JSON.stringify(SIGMAS)}):
    O[f'g{i}'] = cv2.GaussianBlur(x, (0, 0), s[0], sigmaY=s[-1])[:, :, ::-1]
O['wrap'] = cv2.GaussianBlur(x, (0, 0), 2, borderType=cv2.BORDER_REPLICATE)[:, :, ::-1]
`, {});
  const gpu = await gpuOrSkip(t);
  const impls = ['naive', 'tiled', 'separable', 'fused'] as const;
  for (const [i, s] of SIGMAS.entries()) {
    const spec = `gauss:${s.join(',')}`, o: FilterOptions = { saturate: true, truncate: 3, border: 'reflect101' };
    const want = colour(refs[`g${i}`]);
    assertSame((await filter(img, spec, o)).output, want, `CPU ${spec}`);
    // One GPU implementation per sigma, in turn: all meet the integer kernels; each costs shader compilations.
    if (gpu) assertSame((await filter(img, spec, { ...o, gpu, impl: impls[i % impls.length] })).output, want, `GPU ${impls[i % impls.length]} ${spec}`);
  }
  assertSame((await filter(img, 'gauss:2', { saturate: true, truncate: 3, border: 'replicate' })).output, colour(refs.wrap), 'CPU gauss:2 replicate');
});

test('a resident colour GpuImage (8- and 16-bit) is filtered and eroded per channel on the device: the host path\'s pixels, resident out; gray converts on the device; a float result of 8-bit channels too', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  // `onDevice`: nothing read back on the way (a result of another type than the channels' is interleaved on the host).
  const resident = async (img: Image, f: (x: GpuImage) => Promise<{ output: unknown }>, onDevice = true): Promise<Image> => {
    const dev = await GpuImage.upload(gpu, img);
    const { readbacks, result } = await countReadbacks(gpu, () => f(dev));
    const out = result.output as GpuImage;
    assert.ok(out instanceof GpuImage, 'resident in, resident out');
    if (onDevice) assert.equal(readbacks, 0, 'on the device: nothing read back to the host on the way');
    assert.doesNotThrow(() => dev.assertLive(), 'the input is left alone');
    const host = await out.toHost();
    out.release();
    dev.release();
    return host;
  };
  const photos = { u8: await readImage(fixture('images', 'chelsea.png')), u16: await readImage(fixture('images', 'chelsea16.png')) };
  for (const [what, run] of CASES) {
    for (const [n, img] of Object.entries(photos)) {
      const want = (await run(img, {})).output;
      assertSame(await resident(img, (x) => run(x as unknown as Image, {})), want, `resident ${what} ${n}`);
    }
  }
  const img = photos.u8;
  const o: FilterOptions = { saturate: true, truncate: 3, border: 'reflect101' };
  assertSame(await resident(img, (x) => filter(x as unknown as Image, 'gauss:2', o)), (await filter(img, 'gauss:2', o)).output, 'resident gauss:2 --saturate');
  const gray = await resident(img, (x) => filter(x as unknown as Image, 'box:5', { saturate: true, gray: true }));
  assert.equal(gray.channels, 1);
  assertSame(gray, (await filter(toGray(img), 'box:5', { saturate: true })).output, 'resident box:5 gray');
  assertSame(await resident(img, (x) => filter(x as unknown as Image, 'box:3'), false), (await filter(img, 'box:3', { gpu })).output, 'resident float box:3');
});

test('gray stays available: with `gray` a colour image is converted first (OpenCV\'s weights), as before', async () => {
  const img = await readImage(fixture('images', 'chelsea.png'));
  const gray = toGray(img);
  const a = (await filter(img, 'box:5', { saturate: true, gray: true })).output;
  assert.equal(a.channels, 1);
  assertSame(a, (await filter(gray, 'box:5', { saturate: true })).output, 'filter --gray');
  const m = (await morph(img, { op: 'dilate', gray: true })).output;
  assertSame(m, (await morph(gray, { op: 'dilate' })).output, 'morph --gray');
});

test('the CLI writes a colour photo filtered per channel (gauss --saturate to .png, box to .jpg), and gray with --gray', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-colour-'));
  const photo = fixture('jpeg', 'chelsea_q90.jpg');
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args, '--device', 'cpu'], { encoding: 'utf8' });
  for (const [out, extra] of [['g.png', ['--filter', 'gauss:2', '--saturate']], ['b.png', ['--filter', 'box:5x3', '--saturate', '--border', 'reflect101']], ['gray.png', ['--filter', 'box:5x3', '--saturate', '--border', 'reflect101', '--gray']]] as const) {
    const r = run('filter', photo, join(dir, out), ...extra);
    assert.equal(r.status, 0, r.stderr);
  }
  const refs = pythonArrays(`
x = cv2.imread('${photo}')
O['b'] = cv2.blur(x, (5, 3))[:, :, ::-1]
O['gray'] = cv2.blur(cv2.imread('${photo}', cv2.IMREAD_GRAYSCALE), (5, 3))
`, {});
  assertSame(await readImage(join(dir, 'b.png')), colour(refs.b), 'CLI box colour');
  assertSame(await readImage(join(dir, 'gray.png')), refs.gray, 'CLI box --gray');
  assert.equal((await readImage(join(dir, 'g.png'))).channels, 3, 'gauss:2 --saturate of a colour photo is a colour image');
  const g3 = run('filter', photo, join(dir, 'g3.png'), '--filter', 'gauss:2', '--saturate', '--truncate', '3', '--border', 'reflect101');
  assert.equal(g3.status, 0, g3.stderr);
  const gr = pythonArrays(`O['g'] = cv2.GaussianBlur(cv2.imread('${photo}'), (0, 0), 2)[:, :, ::-1]`, {});
  assertSame(await readImage(join(dir, 'g3.png')), colour(gr.g), 'CLI gauss:2 --truncate 3 = cv2.GaussianBlur');
  const m = run('morph', 'erode', photo, join(dir, 'e.png'), '--se', 'rect:5x5');
  assert.equal(m.status, 0, m.stderr);
  const e = pythonArrays(`O['e'] = cv2.erode(cv2.imread('${photo}'), np.ones((5, 5), np.uint8))[:, :, ::-1]`, {});
  assertSame(await readImage(join(dir, 'e.png')), colour(e.e), 'CLI erode colour');
});

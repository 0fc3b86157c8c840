import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EmptyImageError, InvalidArgumentError } from '../../src/core/errors.js';
import { GpuImage } from '../../src/core/gpu/gpu-image.js';
import { imageFrom, type Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { histogram, HISTOGRAM_METHODS, type HistogramOptions } from '../../src/ops/histogram/index.js';
import { fixture, randomBytes, randomU16 } from '../helpers/fixtures.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { assertOneLineError, cli } from '../helpers/cli.js';

type Sparse = Record<string, number>;
const REF = JSON.parse(readFileSync(fixture('histogram', 'histograms.json'), 'utf8')) as Record<string, Record<string, Sparse>>;

function dense(s: Sparse, n: number): number[] {
  const out = new Array<number>(n).fill(0);
  for (const [k, v] of Object.entries(s)) out[Number(k)] = v;
  return out;
}

/** Reference counts computed the obvious way, for random inputs. */
function naive(img: Image, bins: number, mask?: Uint8Array): number[] {
  const bits = img.dtype === 'uint8' ? 8 : 16;
  const out = new Array<number>(bins).fill(0);
  img.data.forEach((v, i) => {
    if (!mask || mask[i]) out[Math.floor((v * bins) / 2 ** bits)]++;
  });
  return out;
}

const CASES: [file: string, key: string, bins?: number][] = [
  ['camera.png', 'camera'], ['moon.png', 'moon'], ['coins.png', 'coins'], ['moon16.npy', 'moon16'],
];

for (const [file, key] of CASES) {
  test(`histogram of ${file} equals numpy.bincount (CPU, GPU atomic, GPU subhist)`, async (t) => {
    const img = await readImage(fixture('images', file));
    const n = img.dtype === 'uint8' ? 256 : 65536;
    const ref = dense(REF[key].bincount, n);
    assert.deepEqual([...(await histogram(img)).output], ref, 'cpu');
    const gpu = await gpuOrSkip(t);
    if (!gpu) return;
    for (const method of HISTOGRAM_METHODS) assert.deepEqual([...(await histogram(img, { gpu, method })).output], ref, method);
  });
}

test('--bins equals np.histogram(range=(0, 2^bits)) for 8- and 16-bit, CPU and GPU', async (t) => {
  const cam = await readImage(fixture('images', 'camera.png'));
  const m16 = await readImage(fixture('images', 'moon16.npy'));
  const gpu = await gpuOrSkip(t);
  for (const [img, key, bins] of [[cam, 'bins64', 64], [cam, 'bins100', 100], [m16, 'bins1000', 1000]] as const) {
    const ref = dense(REF[img === cam ? 'camera' : 'moon16'][key], bins);
    assert.deepEqual([...(await histogram(img, { bins })).output], ref, `cpu ${key}`);
    if (!gpu) continue;
    for (const method of HISTOGRAM_METHODS) assert.deepEqual([...(await histogram(img, { gpu, method, bins })).output], ref, `${method} ${key}`);
  }
});

test('a mask counts only its non-zero pixels, as cv2.calcHist', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const mask = await readImage(fixture('images', 'coins_mask.png'));
  const ref = dense(REF.coins.masked, 256);
  assert.deepEqual([...(await histogram(img, { mask })).output], ref, 'cpu');
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const method of HISTOGRAM_METHODS) assert.deepEqual([...(await histogram(img, { gpu, method, mask })).output], ref, method);
});

test('GPU equals the naive count on odd sizes, masks and bin counts, 8- and 16-bit', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const shapes: [number, number][] = [[1, 1], [1, 7], [3, 5], [17, 31], [129, 257]];
  for (const [i, shape] of shapes.entries()) {
    const n = shape[0] * shape[1];
    const u8 = imageFrom(randomBytes(n, i + 1, 200), shape);
    const u16 = imageFrom(randomU16(n, i + 2), shape);
    const mask = imageFrom(randomBytes(n, i + 3, 2), shape);
    for (const img of [u8, u16]) {
      for (const bins of [img.dtype === 'uint8' ? 256 : 65536, 10, 1]) {
        for (const m of [undefined, mask]) {
          const ref = naive(img, bins, m?.data as Uint8Array | undefined);
          assert.deepEqual([...(await histogram(img, { bins, mask: m })).output], ref, `cpu ${shape} ${img.dtype} ${bins} ${!!m}`);
          for (const method of HISTOGRAM_METHODS) {
            assert.deepEqual([...(await histogram(img, { gpu, method, bins, mask: m })).output], ref, `${method} ${shape} ${img.dtype} ${bins} ${!!m}`);
          }
        }
      }
    }
  }
});

test('worker pool, 3D volumes and resident GpuImages give the same counts', async (t) => {
  const vol = imageFrom(randomBytes(4 * 300 * 1000, 5), [4, 300, 1000] as never);
  const ref = naive(vol, 256);
  const pool = new NodeWorkerPool(2);
  try {
    assert.deepEqual([...(await histogram(vol, { pool })).output], ref);
  } finally {
    await pool.close();
  }
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const dev = await GpuImage.upload(gpu, vol);
  for (const method of HISTOGRAM_METHODS) {
    const r = await histogram(dev, { method });
    assert.deepEqual([...r.output], ref, method);
    assert.equal(r.timings.upload, 0);
  }
  dev.release();
});

test('bad input: bins 0 or too many, mask of the wrong size or type, empty image', async () => {
  const img = imageFrom(randomBytes(12, 1), [3, 4]);
  await assert.rejects(histogram(img, { bins: 0 }), /bins must be ≥ 1/);
  await assert.rejects(histogram(img, { bins: 257 }), /257 bins exceed the 256 values/);
  await assert.rejects(histogram(img, { bins: 2.5 }), InvalidArgumentError);
  await assert.rejects(histogram(img, { mask: imageFrom(new Uint8Array(6), [2, 3]) }), /mask is 2×3 but the image is 3×4/);
  await assert.rejects(histogram(img, { mask: imageFrom(new Uint16Array(12), [3, 4]) }), /mask must be one 8-bit channel/);
  await assert.rejects(histogram(img, { method: 'magic' as never }), /hist must be one of atomic\|subhist/);
  await assert.rejects(histogram({ data: new Uint8Array(0), shape: [0, 3], channels: 1, dtype: 'uint8' }), EmptyImageError);
});

test('roi counts one rectangle (and ANDs with a mask), CPU and GPU', async (t) => {
  const img = imageFrom(randomBytes(30 * 40, 8), [30, 40]);
  const roi = { x: 5, y: 7, width: 13, height: 11 };
  const inRoi = new Uint8Array(30 * 40).map((_, i) => (i % 40 >= 5 && i % 40 < 18 && Math.floor(i / 40) >= 7 && Math.floor(i / 40) < 18 ? 1 : 0));
  const mask = imageFrom(randomBytes(30 * 40, 9, 2), [30, 40]);
  const both = inRoi.map((v, i) => v & (mask.data[i] ? 1 : 0));
  assert.deepEqual([...(await histogram(img, { roi })).output], naive(img, 256, inRoi));
  assert.deepEqual([...(await histogram(img, { roi, mask })).output], naive(img, 256, both));
  const gpu = await gpuOrSkip(t);
  if (gpu) for (const method of HISTOGRAM_METHODS) assert.deepEqual([...(await histogram(img, { roi, mask, gpu, method })).output], naive(img, 256, both), method);
  await assert.rejects(histogram(img, { roi: { x: 30, y: 0, width: 11, height: 1 } }), /lies outside the 40×30 image/);
  await assert.rejects(histogram(img, { roi: { x: 0, y: 0, width: 0, height: 1 } }), /width, height ≥ 1/);
});

test('images beyond one storage binding are counted range by range: both methods, masks, bins, 8/16-bit', async (t) => {
  // Bindings of 64 KiB, and 1 MiB for 16-bit "subhist" with 65536 bins (one 256 KiB partial histogram per range).
  const [h, w] = [293, 611]; // 179 023 pixels: 3 ranges of 8-bit, 6 of 16-bit, and a partial vector at the end
  const mask = imageFrom(randomBytes(h * w, 9, 2), [h, w]);
  const [h2, w2] = [733, 811];
  const mask2 = imageFrom(randomBytes(h2 * w2, 10, 2), [h2, w2]);
  const cases = [
    { img: imageFrom(randomBytes(h * w, 7), [h, w]), mask, limit: 64 << 10, bins: [undefined, 100] },
    { img: imageFrom(randomU16(h * w, 8), [h, w]), mask, limit: 64 << 10, bins: [100, 1000] },
    { img: imageFrom(randomU16(h2 * w2, 11), [h2, w2]), mask: mask2, limit: 1 << 20, bins: [undefined] },
  ];
  for (const c of cases) {
    const gpu = await gpuWithBindingLimit(t, c.limit);
    if (!gpu) return;
    for (const method of HISTOGRAM_METHODS) {
      for (const bins of c.bins) {
        const r = await histogram(c.img, { gpu, method, bins, mask: c.mask });
        assert.ok((r.timings.slabs ?? 1) > 1, 'split');
        const n = bins ?? (c.img.dtype === 'uint8' ? 256 : 65536);
        assert.deepEqual([...r.output], naive(c.img, n, c.mask.data as Uint8Array), `${c.img.dtype} ${method} bins ${n}`);
      }
    }
  }
});

test('HistogramOptions is derived from the declaration: impl and its old names method and hist, an image mask, a rect roi', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const mask = await readImage(fixture('images', 'coins_mask.png'));
  const opts: HistogramOptions = { impl: 'subhist', bins: 64, mask, roi: { x: 10, y: 20, width: 100, height: 50 } };
  // @ts-expect-error: not a histogram algorithm (the declaration's choices are the type)
  const wrong: HistogramOptions = { method: 'magic' };
  // @ts-expect-error: a roi is a rectangle
  const wrongRoi: HistogramOptions = { roi: [1, 2, 3, 4] };
  await assert.rejects(histogram(img, wrong), /impl\/method\/hist must be one of atomic\|subhist, got magic/);
  await assert.rejects(histogram(img, wrongRoi), /roi must be non-negative integers/);
  await assert.rejects(histogram(img, { impl: 'atomic', method: 'subhist' }), /impl and method \(another name for it\) are both given/);
  const ref = [...(await histogram(img, opts)).output];
  assert.equal(ref.length, 64);
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const name of ['impl', 'method', 'hist'] as const) {
    for (const m of HISTOGRAM_METHODS) {
      const r = await histogram(img, { ...opts, impl: undefined, [name]: m, gpu, profile: true });
      assert.ok(r.timings.kernels.every((k) => k.name.startsWith(`histogram.${m}.`)), `${name}: ${m} ran (${r.timings.kernels.map((k) => k.name)})`);
      assert.deepEqual([...r.output], ref, `${name}: ${m}`);
    }
  }
});

test('a resident mask is read on the device; with a roi, or on the CPU, a host mask is needed', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const mask = await readImage(fixture('images', 'coins_mask.png'));
  const ref = [...(await histogram(img, { mask })).output];
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const devMask = await GpuImage.upload(gpu, mask);
  const dev = await GpuImage.upload(gpu, img);
  try {
    assert.deepEqual([...(await histogram(img, { gpu, mask: devMask })).output], ref, 'host image, resident mask');
    assert.deepEqual([...(await histogram(dev, { mask: devMask, method: 'subhist' })).output], ref, 'both resident');
    await assert.rejects(histogram(img, { mask: devMask }), /a GpuImage mask needs the GPU path; pass a host image/);
    await assert.rejects(histogram(dev, { mask: devMask, roi: { x: 0, y: 0, width: 4, height: 4 } }), /needs the GPU path and no roi/);
  } finally {
    devMask.release();
    dev.release();
  }
});

test('CLI: --impl, and the old --hist; --mask PATH; the counts summary', async (t) => {
  const img = fixture('images', 'coins.png');
  const text = cli('histogram', img, '--device', 'cpu', '--bins', '16');
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /16 bins, 116352 pixels counted, \d+ non-zero bins in \[\d+, \d+\], mode bin \d+ \(\d+\)/);
  assertOneLineError(cli('histogram', img, '--hist', 'magic', '--device', 'cpu'), 2, /impl\/method\/hist must be one of atomic\|subhist/);
  if (!(await gpuOrSkip(t))) return;
  for (const flag of ['--impl', '--hist', '--method']) {
    const r = cli('histogram', img, '--device', 'gpu', flag, 'subhist', '--json', '--mask', fixture('images', 'coins_mask.png'));
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.params.impl, 'subhist', flag);
    assert.ok(j.gpu.kernels.every((k: { name: string }) => k.name.startsWith('histogram.subhist.')), flag);
    assert.deepEqual(j.counts, dense(REF.coins.masked, 256), flag);
  }
});

test('an image `out` (a run option of every operation) is no place for counts: ignored, as before', async (t) => {
  const img = await readImage(fixture('images', 'coins.png'));
  const ref = [...(await histogram(img)).output];
  const out = imageFrom(new Uint8Array(img.data.length), [...img.shape] as [number, number]);
  const cpu = await histogram(img, { out });
  assert.ok(cpu.output instanceof Uint32Array);
  assert.deepEqual([...cpu.output], ref, 'cpu');
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  const r = await histogram(img, { gpu, out });
  assert.ok(r.output instanceof Uint32Array);
  assert.deepEqual([...r.output], ref, 'gpu');
  const dev = await GpuImage.upload(gpu, img);
  try {
    assert.deepEqual([...(await histogram(dev, { out })).output], ref, 'resident');
  } finally {
    dev.release();
  }
  assert.ok(out.data.every((v) => v === 0), 'out untouched');
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import { allocPixels, type Dtype, type Geometry, type Image } from '../../src/core/image.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { runChunked, slabBytes, slabPlanes, writeOmeZarr, type SlabPipe } from '../../src/io/chunked.js';
import { createOmeZarr, downsample, openOmeZarr, readOmeZarr, readPlanes, writePlanes, ZARR_COMPRESSORS, type ZarrWriteOptions } from '../../src/io/zarr.js';
import { nativeLayout } from '../../src/io/zarr-native.js';
import { ZarrChunkPool } from '../../src/io/zarr-pool.js';
import { inlinePool } from '../../src/core/cpu/pool.js';
import { filter, type FilterPlan } from '../../src/ops/convolve/index.js';
import { denseKernel } from '../../src/ops/convolve/kernel.js';
import { gamma } from '../../src/ops/gamma/index.js';
import { morph } from '../../src/ops/morph/index.js';
import { assertOneLineError, cli } from '../helpers/cli.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';

const tmp = mkdtempSync(join(tmpdir(), 'imgpu-zarr-'));
const CHILD = fileURLToPath(new URL('../helpers/zarr-memory-child.js', import.meta.url));
let serial = 0;
const fresh = (name: string) => join(tmp, `${serial++}-${name}.zarr`);

/** Smooth structures plus seeded noise (compresses like real data), [d, h, w]. */
function volume(shape: [number, number, number], dtype: Dtype, seed = 1, geometry?: Geometry): Image {
  const [d, h, w] = shape;
  const data = allocPixels(dtype, d * h * w);
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const top = dtype === 'uint8' ? 255 : dtype === 'uint16' ? 4000 : 1;
  for (let z = 0, i = 0; z < d; z++) for (let y = 0; y < h; y++) for (let x = 0; x < w; x++, i++) {
    const v = 0.5 + 0.3 * Math.sin(x / 5 + z / 3) * Math.cos(y / 7) + 0.2 * (rnd() - 0.5);
    data[i] = dtype === 'float32' ? v * top - 0.3 : Math.round(Math.max(0, Math.min(1, v)) * top);
  }
  return { data, shape, channels: 1, dtype, geometry };
}

/** Python (Debian's, with python3-zarr and scipy) runs `code`, which prints one JSON value. */
function python(code: string): unknown {
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `python: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const cpuRun = (params: Record<string, unknown>) => async (slab: Image) => (await filter.op.run(slab, params, { pool: inlinePool })).output as Image;

/** Chunk threads of the tests' chunked runs: fixed (not the machine's cores), since their budgets are computed for them. */
const THREADS = 2;
/** What the chunk threads and the slab read ahead add to a slab's memory, for chunks of `chunks`. */
const pipeOf = (chunks: readonly number[], threads = THREADS): SlabPipe | undefined => (threads ? { threads, chunkVoxels: chunks.reduce((a, b) => a * b, 1), readAhead: true } : undefined);

/** The operation chunked from a Zarr of `chunks` within the memory of slabs of `planes` planes, read back whole, and the same in memory. */
async function chunkedAndWhole(img: Image, params: Record<string, unknown>, chunks: [number, number, number], planes: number, gpu?: GpuContext, threads = THREADS): Promise<{ chunked: Image; whole: Image; slabs: number }> {
  const op = 'op' in params ? morph.op : filter.op;
  const src = fresh('in'), out = fresh('out');
  await writeOmeZarr(src, img, { chunks });
  const on = gpu ? { gpu, pool: inlinePool } : { pool: inlinePool };
  const run = async (slab: Image) => (await op.run(slab, params, on)).output as Image;
  const outDtype = op.outputOf(params, img).dtype;
  const reach = op.reach(params, img);
  const [, h, w] = img.shape as number[];
  const memory = slabBytes(h * w, planes, reach ?? { before: 0, after: 0 }, img.dtype, outDtype, chunks[0], pipeOf(chunks, threads));
  const rep = await runChunked(src, out, run, reach, outDtype, { memory, recipe: 't', chunkThreads: threads });
  const whole = (await op.run(img, params, on)).output as Image;
  return { chunked: await readOmeZarr(out), whole, slabs: rep.slabs };
}

function assertBitIdentical(a: Image, b: Image, what: string): void {
  assert.deepEqual(a.shape, b.shape, what);
  assert.equal(a.dtype, b.dtype, what);
  // Bytes, not values: NaN == NaN and -0 ≠ 0 here.
  assert.ok(Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength).equals(Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength)), `${what}: not bit for bit`);
}

test('every compressor and both OME versions round-trip a volume exactly (uint16, float32; odd shape, partial chunks)', async () => {
  for (const dtype of ['uint16', 'float32'] as const) {
    const img = volume([7, 13, 11], dtype, 3);
    for (const ome of ['0.4', '0.5'] as const) {
      for (const compressor of ZARR_COMPRESSORS) {
        const p = fresh(`${ome}-${compressor}`);
        await writeOmeZarr(p, img, { ome, compressor, chunks: [3, 5, 4] });
        const back = await readOmeZarr(p);
        assertBitIdentical(back, img, `${dtype} ${ome} ${compressor}`);
        const meta = JSON.parse(readFileSync(join(p, ome === '0.4' ? '0/.zarray' : '0/zarr.json'), 'utf8'));
        assert.equal(meta.zarr_format, ome === '0.4' ? 2 : 3);
      }
    }
  }
});

test('python-zarr reads what imgpu writes as OME-Zarr 0.4 (gzip, zstd, blosc, raw), and imgpu reads what python-zarr writes', async () => {
  const img = volume([6, 9, 10], 'uint16', 5);
  const paths: Record<string, string> = {};
  for (const c of ZARR_COMPRESSORS) {
    paths[c] = fresh(c);
    await writeOmeZarr(paths[c], img, { compressor: c, chunks: [4, 4, 4] });
  }
  const expected = Array.from(img.data);
  const got = python(`
import zarr, json, numpy as np
out = {}
for c, p in ${JSON.stringify(paths)}.items():
    g = zarr.open_group(p, mode='r')
    out[c] = g['0'][:].ravel().tolist()
# python's defaults (blosc lz4), zstd and gzip chunks, written by python for imgpu to read
for name, comp in [('py-blosc', zarr.storage.default_compressor), ('py-zstd', __import__('numcodecs').Zstd(level=3)), ('py-gzip', __import__('numcodecs').GZip(level=5))]:
    z = zarr.open_array('${tmp}/' + name + '.zarr', mode='w', shape=(6, 9, 10), chunks=(4, 4, 4), dtype='<u2', compressor=comp)
    z[:] = np.array(${JSON.stringify(expected)}, dtype='<u2').reshape(6, 9, 10)
print(json.dumps(out))`) as Record<string, number[]>;
  for (const c of ZARR_COMPRESSORS) assert.deepEqual(got[c], expected, c);
  for (const name of ['py-blosc', 'py-zstd', 'py-gzip']) assertBitIdentical(await readOmeZarr(join(tmp, `${name}.zarr`)), img, name);
});

test('an edge chunk written again (read back, the planes set, encoded) is the same file, byte for byte (gzip, raw)', async () => {
  for (const compressor of ['gzip', 'raw'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'imgpu-zarr-rewrite-'));
    const img = volume([4, 5, 20], 'float32', 3);
    const z = await createOmeZarr(join(dir, 'a.zarr'), [4, 5, 20], 'float32', undefined, { chunks: [2, 4, 16], compressor });
    await writePlanes(z.levels[0], img, 0);
    const edge = join(dir, 'a.zarr', '0', '1', '1', '1'); // z 2–3, y 4 (of 4–7), x 16–19 (of 16–31): a partial chunk
    const first = readFileSync(edge);
    await writePlanes(z.levels[0], { ...img, data: img.data.subarray(2 * 100), shape: [2, 5, 20] }, 2);
    assert.ok(readFileSync(edge).equals(first), `${compressor}: rewritten ${readFileSync(edge).length} bytes, first ${first.length}`);
  }
});

test('a pyramid: each level the 2×2×2 mean of the one above (odd edges: the voxels present), scale 2^i and the half-voxel translation', async () => {
  const geometry: Geometry = { spacing: [0.5, 0.75, 2], origin: [10, -4, 3], direction: [1, 0, 0, 0, 1, 0, 0, 0, 1] };
  const img = volume([9, 12, 7], 'uint16', 7, geometry);
  const p = fresh('pyramid');
  await writeOmeZarr(p, img, { levels: 3, chunks: [2, 5, 3] });
  const r = python(`
import zarr, json, numpy as np
g = zarr.open_group('${p}', mode='r')
ms = g.attrs['multiscales'][0]
levels = [g[d['path']][:].astype(np.float64) for d in ms['datasets']]
def down(a):
    d, h, w = a.shape
    pad = np.full((d + d % 2, h + h % 2, w + w % 2), np.nan); pad[:d, :h, :w] = a
    b = pad.reshape(pad.shape[0] // 2, 2, pad.shape[1] // 2, 2, pad.shape[2] // 2, 2)
    return np.floor(np.nanmean(b, axis=(1, 3, 5)) + 0.5)
ok = [bool(np.array_equal(down(levels[i - 1]), levels[i])) for i in (1, 2)]
print(json.dumps({'ok': ok, 'shapes': [list(l.shape) for l in levels], 'datasets': ms['datasets'], 'axes': [a['name'] for a in ms['axes']]}))`) as { ok: boolean[]; shapes: number[][]; datasets: { coordinateTransformations: { type: string; scale?: number[]; translation?: number[] }[] }[]; axes: string[] };
  assert.deepEqual(r.ok, [true, true]);
  assert.deepEqual(r.shapes, [[9, 12, 7], [5, 6, 4], [3, 3, 2]]);
  assert.deepEqual(r.axes, ['z', 'y', 'x']);
  for (let i = 0; i < 3; i++) {
    const [scale, trans] = r.datasets[i].coordinateTransformations;
    const f = 2 ** i, sp = [2, 0.75, 0.5], org = [3, -4, 10];
    assert.deepEqual(scale.scale, sp.map((s) => s * f), `level ${i} scale`);
    assert.deepEqual(trans.translation, org.map((o, a) => o + ((f - 1) / 2) * sp[a]), `level ${i} translation`);
  }
  assert.deepEqual((await readOmeZarr(p)).geometry, geometry, 'geometry back');
});

test('acceptance: imgpu\'s OME-Zarr 0.4 read by python-zarr; its Gaussian (chunked, chunks thinner than the halo) equals scipy.ndimage.gaussian_filter (float32, rtol 1e-5) and the in-memory result bit for bit', async () => {
  const img = volume([21, 19, 23], 'float32', 11);
  const src = fresh('accept-in'), out = fresh('accept-out');
  await writeOmeZarr(src, img, { chunks: [2, 8, 8] });
  const params = { filter: 'gauss:2,1.5,1' }; // σz 1: radius 4, chunks of 2 planes
  const reach = filter.op.reach(params, img)!;
  const rep = await runChunked(src, out, cpuRun(params), reach, 'float32', { memory: slabBytes(19 * 23, 4, reach, 'float32', 'float32', 2, pipeOf([2, 8, 8])), recipe: 'accept', chunkThreads: THREADS });
  assert.ok(rep.slabs > 3, `${rep.slabs} slabs`);
  const whole = (await filter(img, 'gauss:2,1.5,1')).output;
  assertBitIdentical(await readOmeZarr(out), whole, 'chunked vs in memory');
  const r = python(`
import zarr, json, numpy as np
from scipy import ndimage
a = zarr.open_group('${src}', mode='r')['0'][:]
b = zarr.open_group('${out}', mode='r')['0'][:]
ref = ndimage.gaussian_filter(a.astype(np.float32), sigma=(1, 1.5, 2), truncate=4.0, mode='reflect')
print(json.dumps({'dtype': str(a.dtype), 'close': bool(np.allclose(b, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())), 'max': float(np.abs(b - ref).max())}))`) as { dtype: string; close: boolean; max: number };
  assert.equal(r.dtype, 'float32');
  assert.ok(r.close, `max |Δ| ${r.max}`);
});

test('pyramid means of float32 and uint16: the vectorised interior equals the voxel-by-voxel float64 mean of the voxels present, bit for bit (−0, NaN, odd edges)', () => {
  for (const dtype of ['float32', 'uint16'] as const) {
    const shape: [number, number, number] = [5, 7, 9];
    const img = volume(shape, dtype, 11);
    if (dtype === 'float32') {
      // Rows 0–1 of planes 0–1 −0: whole 2×2×2 blocks of −0, whose mean is +0 (the sum starts from 0).
      img.data.fill(-0, 0, 2 * 9).fill(-0, 63, 63 + 2 * 9);
      img.data[3 * 63 + 20] = NaN;
    }
    const got = downsample(img, shape, 0, 3);
    const want = allocPixels(dtype, 3 * 4 * 5);
    for (let z = 0, i = 0; z < 3; z++) for (let y = 0; y < 4; y++) for (let x = 0; x < 5; x++, i++) {
      let sum = 0, n = 0;
      for (let dz = 0; dz < 2 && 2 * z + dz < 5; dz++) for (let dy = 0; dy < 2 && 2 * y + dy < 7; dy++) for (let dx = 0; dx < 2 && 2 * x + dx < 9; dx++) {
        sum += img.data[((2 * z + dz) * 7 + 2 * y + dy) * 9 + 2 * x + dx];
        n++;
      }
      want[i] = dtype === 'float32' ? sum / n : Math.floor((sum + n / 2) / n);
    }
    assertBitIdentical(got, { data: want, shape: [3, 4, 5], channels: 1, dtype }, dtype);
  }
});

test('chunked equals in memory bit for bit: every border, anisotropic σ, chunks thinner than the halo, shapes not multiples of the chunk, an off-centre kernel; morphology in both conventions', async () => {
  const img = volume([17, 19, 13], 'float32', 21);
  const offCentre: FilterPlan = { name: 'k', combine: 'single', components: [denseKernel(Float32Array.from({ length: 5 * 2 * 3 }, (_, i) => ((i * 7) % 11) - 5), [5, 2, 3], [3, 1, 1])] };
  const cases: [string, Record<string, unknown>, [number, number, number], number][] = [];
  for (const border of ['reflect', 'reflect101', 'replicate', 'wrap', 'constant']) {
    cases.push([`gauss ${border}`, { filter: 'gauss:1,2,1.2', border, cval: 0.7 }, [1, 4, 5], 3]);
    cases.push([`kernel ${border}`, { filter: offCentre, border, cval: -2 }, [3, 19, 13], 6]);
  }
  cases.push(['sobel', { filter: 'sobel' }, [2, 3, 3], 4]);
  for (const border of ['opencv', 'scipy']) {
    for (const op of ['erode', 'open', 'blackhat']) cases.push([`morph ${op} ${border}`, { op, se: 'box:3x3x4', border, iterations: 2 }, [1, 5, 5], 3]);
    cases.push([`morph close ${border} cross`, { op: 'close', se: 'cross:3', border }, [2, 5, 5], 3]);
  }
  cases.push(['box uint16 saturate', { filter: 'box:3x3x5', saturate: true }, [4, 6, 6], 4]);
  for (const [what, params, chunks, memory] of cases) {
    const src = what.startsWith('box') ? volume([17, 19, 13], 'uint16', 4) : img;
    const { chunked, whole, slabs } = await chunkedAndWhole(src, params, chunks, memory);
    assert.ok(slabs > 2, `${what}: ${slabs} slabs`);
    assertBitIdentical(chunked, whole, what);
  }
});

/** Every file under `root` (relative path → bytes). */
function filesOf(root: string): Map<string, Buffer> {
  return new Map(readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => {
    const path = join(e.parentPath, e.name);
    return [path.slice(root.length), readFileSync(path)];
  }));
}

test('chunk threads write the main thread\'s files byte for byte (raw, gzip, zstd, blosc; OME 0.4 and 0.5; edge chunks; the pyramid, level 1 from level 0\'s slabs; float32), reading ahead slab after slab', async () => {
  const img = volume([13, 11, 10], 'uint16', 5);
  const params = { filter: 'gauss:1' };
  const reach = filter.op.reach(params, img)!;
  for (const ome of ['0.4', '0.5'] as const) {
    for (const compressor of ZARR_COMPRESSORS) {
      const src = fresh(`threads-in-${ome}-${compressor}`);
      await writeOmeZarr(src, img, { chunks: [4, 4, 3], compressor, ome });
      const write = { compressor, ome, levels: 2 } satisfies ZarrWriteOptions;
      // Slabs of 8 planes, two level-1 chunk rows: level 1 computed from each level-0 slab as it is written (levelOneWith).
      const memory = slabBytes(11 * 10, 8, reach, 'uint16', 'float32', 4, pipeOf([4, 4, 3]));
      const main = fresh('threads-main'), threaded = fresh('threads-pool');
      await runChunked(src, main, cpuRun(params), reach, 'float32', { memory, write, recipe: 'threads', chunkThreads: 0 });
      const rep = await runChunked(src, threaded, cpuRun(params), reach, 'float32', { memory, write, recipe: 'threads', chunkThreads: THREADS });
      assert.ok(rep.readAhead && rep.chunkThreads === THREADS && rep.slabs === 2, `${ome} ${compressor}: ${JSON.stringify(rep)}`);
      const a = filesOf(main), b = filesOf(threaded);
      assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort(), `${ome} ${compressor}: the same files`);
      for (const [path, bytes] of a) assert.ok(bytes.equals(b.get(path)!), `${ome} ${compressor}: ${path} differs`);
      assertBitIdentical(await readOmeZarr(threaded), (await filter(img, params.filter)).output, `${ome} ${compressor}`);
    }
  }
});

test('chunk threads read zarr-python\'s chunks natively (zstd, gzip, zlib; \'.\' keys) and python-zarr reads the chunks and pyramid they write natively (zstd, gzip, raw; OME 0.4); blosc and F order stay on zarrita', async () => {
  const img = volume([6, 9, 10], 'uint16', 9);
  const codecs = { zstd: 'numcodecs.Zstd(level=3)', gzip: 'numcodecs.GZip(level=5)', zlib: 'numcodecs.Zlib(level=1)', blosc: 'numcodecs.Blosc()' };
  const py = Object.fromEntries(Object.keys(codecs).map((c) => [c, fresh(`py-native-${c}`)]));
  const pyF = fresh('py-native-forder');
  python(`
import zarr, numcodecs, json, numpy as np
a = np.array(${JSON.stringify(Array.from(img.data))}, dtype='<u2').reshape(6, 9, 10)
for c, p in ${JSON.stringify(py)}.items():
    zarr.open_array(p, mode='w', shape=a.shape, chunks=(4, 4, 3), dtype='<u2', compressor=eval({'zstd': '${codecs.zstd}', 'gzip': '${codecs.gzip}', 'zlib': '${codecs.zlib}', 'blosc': '${codecs.blosc}'}[c]))[:] = a
zarr.open_array('${pyF}', mode='w', shape=a.shape, chunks=(4, 4, 3), dtype='<u2', order='F', compressor=numcodecs.Zstd(level=3))[:] = a
print('null')`);
  for (const c of ['zstd', 'gzip', 'zlib']) assert.ok(nativeLayout(py[c], ''), `${c}: python's chunks read natively`);
  for (const p of [py.blosc, pyF]) assert.equal(nativeLayout(p, ''), undefined, `${p}: zarrita's`);
  const outs: Record<string, string> = {};
  for (const [c, src] of Object.entries({ zstd: py.zstd, gzip: py.gzip, raw: py.zlib, blosc: py.blosc, forder: pyF })) {
    const compressor = c === 'forder' ? 'zstd' : c as 'zstd' | 'gzip' | 'raw' | 'blosc';
    outs[c] = fresh(`native-out-${c}`);
    // The identity (what `convert` runs): chunks read by the threads, written by them, the pyramid's means by them.
    const rep = await runChunked(src, outs[c], async (slab) => slab, { before: 0, after: 0 }, 'uint16', { memory: 1 << 26, write: { compressor, levels: 2, chunks: [4, 4, 3] }, recipe: 'native', chunkThreads: THREADS });
    assert.equal(rep.chunkThreads, THREADS);
    assert.equal(Boolean(nativeLayout(outs[c], '1')), compressor !== 'blosc', `${c}: written natively`);
    assertBitIdentical(await readOmeZarr(outs[c]), img, `${c}: read back`);
  }
  const got = python(`
import zarr, json
print(json.dumps({c: [zarr.open_group(p, mode='r')[l][:].ravel().tolist() for l in ('0', '1')] for c, p in ${JSON.stringify(outs)}.items()}))`) as Record<string, [number[], number[]]>;
  const opened = await openOmeZarr(outs.blosc);
  const level1 = Array.from((await readPlanes(opened.levels[1], 'uint16', 0, opened.levels[1].shape[0])).data);
  for (const c of Object.keys(outs)) {
    assert.deepEqual(got[c][0], Array.from(img.data), `${c}: python reads level 0`);
    assert.deepEqual(got[c][1], level1, `${c}: python reads level 1, the main thread's means (blosc: written by zarrita from them)`);
  }
});

test('a caller\'s chunk threads, kept across runs, write an output store removed and made again at the same path', async () => {
  const img = volume([8, 9, 10], 'uint16', 13);
  const src = fresh('pool-reuse-in'), out = fresh('pool-reuse-out');
  await writeOmeZarr(src, img, { chunks: [4, 4, 4], compressor: 'zstd' });
  const chunkPool = new ZarrChunkPool(2);
  try {
    for (const recipe of ['first', 'second']) {
      rmSync(out, { recursive: true, force: true });
      await runChunked(src, out, async (slab) => slab, { before: 0, after: 0 }, 'uint16', { memory: 1 << 26, write: { compressor: 'zstd', chunks: [4, 4, 4] }, recipe, chunkPool });
      assertBitIdentical(await readOmeZarr(out), img, recipe);
    }
  } finally {
    await chunkPool.close();
  }
});

test('slab planes: the halo gathered by the border rule or clipped, at least the kernel\'s extent and two planes', () => {
  const reflect = { before: 3, after: 2, gather: (z: number, n: number) => (z < 0 ? -z - 1 : z >= n ? 2 * n - z - 1 : z) };
  assert.deepEqual(slabPlanes(0, 2, 10, reflect), { planes: [2, 1, 0, 0, 1, 2, 3], first: 3 });
  assert.deepEqual(slabPlanes(8, 10, 10, reflect), { planes: [5, 6, 7, 8, 9, 9, 8], first: 3 });
  assert.deepEqual(slabPlanes(0, 2, 10, { before: 3, after: 2 }), { planes: [0, 1, 2, 3, 4, 5], first: 0 });
  assert.deepEqual(slabPlanes(9, 10, 10, { before: 3, after: 2 }), { planes: [4, 5, 6, 7, 8, 9], first: 5 });
  assert.deepEqual(slabPlanes(4, 6, 10, { before: 3, after: 2 }), { planes: [1, 2, 3, 4, 5, 6, 7], first: 3 });
  assert.deepEqual(slabPlanes(9, 10, 10, { before: 0, after: 0 }), { planes: [8, 9], first: 1 });
});

test('an operation that needs the whole volume runs whole when it fits, and is refused (typed) when it does not', async () => {
  const img = volume([6, 8, 8], 'float32', 2);
  img.data[100] = NaN; // a float box spreads NaN down its line: no declared reach
  const params = { filter: 'box:3' };
  assert.equal(filter.op.reach(params, img), undefined);
  const { chunked, whole } = await chunkedAndWhole(img, params, [2, 8, 8], 6);
  assertBitIdentical(chunked, whole, 'box over NaN, whole');
  const src = fresh('whole');
  await writeOmeZarr(src, img, { chunks: [2, 8, 8] });
  await assert.rejects(runChunked(src, fresh('x'), cpuRun(params), undefined, 'float32', { memory: 5000, recipe: 'w' }), (e) => e instanceof InvalidArgumentError && /whole/.test(e.message));
  await assert.rejects(runChunked(src, fresh('y'), cpuRun({ filter: 'gauss:0.5' }), filter.op.reach({ filter: 'gauss:0.5' }, img), 'float32', { memory: 1000, recipe: 'w' }), (e) => e instanceof InvalidArgumentError && /one row of output chunks/.test(e.message));
});

test('an interrupted run resumes from its finished chunk rows (the manifest), and another recipe starts afresh', async () => {
  const img = volume([20, 14, 14], 'uint16', 9);
  const src = fresh('resume-in'), out = fresh('resume-out');
  await writeOmeZarr(src, img, { chunks: [2, 5, 5] });
  const params = { filter: 'gauss:1.5' };
  const reach = filter.op.reach(params, img);
  let calls = 0;
  const failing = async (slab: Image) => {
    if (++calls === 3) throw new Error('interrupted');
    return cpuRun(params)(slab);
  };
  const opts = { memory: 80_000, recipe: 'resume', write: { levels: 2 } satisfies ZarrWriteOptions, chunkThreads: THREADS };
  await assert.rejects(runChunked(src, out, failing, reach, 'float32', opts), /interrupted/);
  let again = 0;
  const rep = await runChunked(src, out, async (slab) => { again++; return cpuRun(params)(slab); }, reach, 'float32', opts);
  const total = rep.slabs + rep.skipped;
  assert.equal(rep.skipped, 2, 'the two finished slabs are not redone');
  assert.equal(again, total - 2);
  assertBitIdentical(await readOmeZarr(out), (await filter(img, 'gauss:1.5')).output, 'resumed result');
  assert.deepEqual(readdirSync(join(out, '0'), { recursive: true }).filter((f) => String(f).includes('.tmp')), [], 'no temporary chunk files left');
  const done = await runChunked(src, out, cpuRun(params), reach, 'float32', opts);
  assert.equal(done.slabs, 0, 'a finished run does nothing');
  const other = await runChunked(src, out, cpuRun({ filter: 'gauss:1' }), reach, 'float32', { ...opts, recipe: 'other' });
  assert.equal(other.skipped, 0, 'another recipe redoes everything');
  assertBitIdentical(await readOmeZarr(out), (await filter(img, 'gauss:1')).output, 'other recipe');
});

test('GPU: chunked equals the in-memory GPU result bit for bit (small volume, chunks thinner than the halo)', async (t) => {
  const gpu = await gpuOrSkip(t);
  if (!gpu) return;
  for (const [border, dtype] of [['reflect', 'float32'], ['constant', 'uint16'], ['wrap', 'float32']] as const) {
    const img = volume([14, 12, 14], dtype, 17);
    const { chunked, whole, slabs } = await chunkedAndWhole(img, { filter: 'gauss:1.2,1,1.4', border, cval: 3 }, [2, 6, 7], 4, gpu);
    assert.ok(slabs > 2, `${slabs} slabs`);
    assertBitIdentical(chunked, whole, `gpu ${border} ${dtype}`);
  }
  const img = volume([9, 8, 8], 'float32', 3);
  img.data.forEach((v, i) => (img.data[i] = Math.abs(v)));
  const src = fresh('gamma'), out = fresh('gamma-out');
  await writeOmeZarr(src, img, { chunks: [1, 8, 8] });
  await runChunked(src, out, async (s) => (await gamma(s, { gamma: 0.6, gpu })).output, gamma.op.reach({ gamma: 0.6 }, img), 'float32', { memory: slabBytes(64, 2, { before: 0, after: 0 }, 'float32', 'float32', 1, pipeOf([1, 8, 8])), recipe: 'g', chunkThreads: THREADS });
  assertBitIdentical(await readOmeZarr(out), (await gamma(img, { gamma: 0.6, gpu })).output, 'gamma');
});

test('memory bound: a volume 4× the budget is filtered with peak resident memory within the budget plus 80 MiB', async () => {
  const budget = 8 * 2 ** 20;
  const shape: [number, number, number] = [2048, 32, 256]; // uint16: 32 MiB in, float32 out: 64 MiB
  const src = fresh('big'), out = fresh('big-out');
  const z = await createOmeZarr(src, shape, 'uint16', undefined, { chunks: [8, 32, 128], compressor: 'raw' });
  for (let z0 = 0; z0 < shape[0]; z0 += 64) await writePlanes(z.levels[0], volume([64, shape[1], shape[2]], 'uint16', z0 + 1), z0);
  // Peak RSS depends on when V8 collects the pool's shared buffers, in the main thread and in the workers: alone on
  // the machine a run grows by +31–33 MiB; in CI's full runs on 2 cores (test files in parallel) runs grew by
  // +64–66 MiB, and once +97.7 MiB. The stated constant is 80 MiB — below what holding the whole output would
  // take (64 MiB float32 beside the ~32 MiB the run holds anyway) — and up to three runs in fresh processes are
  // allowed; each run's figure is logged. The two chunk threads are started (zarrita loaded) before the baseline:
  // their start-up (+27 MiB measured, logged) is a constant of its own; their chunks and the slab read ahead are
  // in the budget (slabBytes).
  const grown: string[] = [];
  let within = false;
  for (let attempt = 0; attempt < 3 && !within; attempt++) {
    rmSync(out, { recursive: true, force: true });
    const r = spawnSync(process.execPath, ['--max-semi-space-size=4', CHILD, src, out, String(budget), 'gauss:1'], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, r.stderr);
    const { before, peak, report, threadsStarted } = JSON.parse(r.stdout) as { before: number; peak: number; threadsStarted: number; report: { slabs: number; estimate: number; chunkThreads: number; readAhead: boolean } };
    const grew = peak - before;
    t_log(`resident before ${mib(before)} (two chunk threads started: +${mib(threadsStarted)}), peak ${mib(peak)}: +${mib(grew)} for a budget of ${mib(budget)} (${report.slabs} slabs, estimate ${mib(report.estimate)})`);
    assert.ok(report.slabs >= 8, `${report.slabs} slabs`);
    assert.ok(report.chunkThreads === 2 && report.readAhead, 'chunks on two threads, the next slab read ahead: the budget holds them too');
    grown.push(mib(grew));
    within = grew <= budget + 80 * 2 ** 20;
  }
  assert.ok(within, `peak grew by ${grown.join(', then ')}`);
  assert.equal((await openOmeZarr(out)).dtype, 'float32');
});

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const t_log = (s: string) => console.log(`# ${s}`);

test('CLI: convert NIfTI → OME-Zarr (pyramid, 0.5) → NIfTI keeps voxels and geometry; filter .zarr → .zarr equals filter in memory; bad options are one-line errors', async () => {
  const geometry: Geometry = { spacing: [0.8, 0.9, 2.5], origin: [1, 2, 3], direction: [1, 0, 0, 0, 1, 0, 0, 0, 1] };
  const img = volume([10, 14, 12], 'uint16', 13, geometry);
  const nii = join(tmp, 'v.nii.gz');
  await writeImage(nii, img);
  const zp = fresh('cli'), back = join(tmp, 'back.nii.gz');
  let r = cli('convert', nii, zp, '--levels', '2', '--ome', '0.5', '--chunks', '5x4x3', '--compressor', 'zstd');
  assert.equal(r.status, 0, r.stderr);
  const opened = await openOmeZarr(zp);
  assert.equal(opened.ome, '0.5');
  assert.deepEqual(opened.levels.map((l) => l.shape), [[10, 14, 12], [5, 7, 6]]);
  assert.deepEqual(opened.levels[0].chunks, [3, 4, 5]);
  r = cli('convert', zp, back);
  assert.equal(r.status, 0, r.stderr);
  const reread = await readImage(back);
  assert.ok(compareImages(reread, img).identical);
  assert.deepEqual(reread.geometry?.spacing.map((s) => Math.fround(s)), geometry.spacing.map((s) => Math.fround(s)));
  const out = fresh('cli-out');
  r = cli('filter', zp, out, '--filter', 'gauss:1mm', '--border', 'mirror', '--memory', '40K', '--device', 'cpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).slabs > 1);
  // The reference from the NIfTI as read back: its spacing is float32, so are the sigmas in voxels.
  const whole = (await filter(reread, 'gauss:1mm', { border: 'reflect101' })).output;
  assertBitIdentical(await readOmeZarr(out), whole, 'CLI chunked filter');
  assertOneLineError(cli('convert', nii, fresh('bad'), '--ome', '0.6'), 2, /ome must be 0\.4 or 0\.5/);
  assertOneLineError(cli('filter', zp, fresh('bad'), '--memory', '1K', '--device', 'cpu'), 2, /--memory .*one row of output chunks/);
  assertOneLineError(cli('filter', zp, fresh('bad'), '--device', 'both'), 2, /--device both/);
  assertOneLineError(cli('filter', join(tmp, 'none.zarr'), fresh('bad'), '--device', 'cpu'), 3, /not a Zarr store/);
  python(`
import zarr, numcodecs, json
z = zarr.open_array('${tmp}/lzma.zarr', mode='w', shape=(4, 4, 4), chunks=(2, 4, 4), dtype='<u2', compressor=numcodecs.LZMA())
z[:] = 1
print(json.dumps(0))`);
  assertOneLineError(cli('filter', join(tmp, 'lzma.zarr'), fresh('bad'), '--device', 'cpu'), 3, /lzma|cannot be decoded|codec/i);
});

test('CLI: the volume operations take a .zarr (whole where they need the whole volume: equalize, global threshold), equal to their in-memory runs', async () => {
  const img = volume([9, 12, 10], 'uint16', 31);
  const src = fresh('ops');
  await writeOmeZarr(src, img, { chunks: [2, 6, 5] });
  const npy = join(tmp, 'ops.npy');
  await writeImage(npy, img);
  for (const args of [['equalize'], ['threshold', '--method', 'otsu'], ['morph', 'erode', '--se', 'box:3x3x3'], ['gamma', '--gamma', '0.5']]) {
    const out = fresh('ops-out'), ref = join(tmp, `ops-ref-${serial++}.npy`);
    const positional = args[0] === 'morph' ? [args[0], args[1]] : [args[0]];
    const rest = args.slice(positional.length);
    let r = cli(...positional, src, out, ...rest, '--device', 'cpu', '--memory', '64K', '--json');
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).whole, args[0] === 'equalize' || args[0] === 'threshold', `${args[0]}: whole or chunked`);
    r = cli(...positional, npy, ref, ...rest, '--device', 'cpu');
    assert.equal(r.status, 0, r.stderr);
    assertBitIdentical(await readOmeZarr(out), await readImage(ref), args.join(' '));
  }
});

test('CLI: a chunked filter SIGKILLed mid-run leaves whole chunk files only, and the rerun finishes it from there, equal to the uninterrupted result', async () => {
  const img = volume([64, 40, 48], 'float32', 41);
  const src = fresh('kill'), out = fresh('kill-out');
  await writeOmeZarr(src, img, { chunks: [2, 40, 48], compressor: 'raw' });
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url)), 'filter', src, out, '--filter', 'gauss:1.5', '--memory', '1200K', '--chunk-threads', '2', '--device', 'cpu'], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Killed once its third slab is written (its progress line), whatever the machine's speed.
  await new Promise<void>((resolve) => {
    child.stderr.on('data', (b: Buffer) => {
      if (/slab 3 of/.test(b.toString())) child.kill('SIGKILL');
    });
    child.on('exit', () => resolve());
  });
  assert.equal(child.signalCode, 'SIGKILL', 'killed mid-run');
  const r = cli('filter', src, out, '--filter', 'gauss:1.5', '--memory', '1200K', '--chunk-threads', '2', '--device', 'cpu', '--json');
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(r.stdout) as { skipped: number; slabs: number };
  assert.ok(rep.skipped >= 3 && rep.slabs >= 1, `skipped ${rep.skipped}, ran ${rep.slabs}`);
  assertBitIdentical(await readOmeZarr(out), (await filter(img, 'gauss:1.5')).output, 'resumed after SIGKILL');
  assert.deepEqual(readdirSync(out, { recursive: true }).filter((f) => String(f).includes('.tmp')), [], 'no temporary files left');
});

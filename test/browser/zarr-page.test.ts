import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { pixelChecksum as checksum } from '../../src/core/compare.js';
import { allocPixels, type Image } from '../../src/core/image.js';
import { openOmeZarr, readPlanes } from '../../src/io/zarr.js';
import { parseParamValue } from '../../src/core/params.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { chromiumOrSkip, launchChromium, openIdle, pageErrors, runInPage, serveLocal, servePlayground, WEBGPU } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { PYTHON } from '../helpers/parity.js';

type Axis = 'axial' | 'coronal' | 'sagittal';
const AXIS_INDEX = { axial: 0, coronal: 1, sagittal: 2 } as const;
interface Level { path: string; shape: [number, number, number]; chunks: [number, number, number] }
interface ZarrState { url: string; dtype: string; ome: string | null; levels: Level[]; shown: { level: number; axis: Axis; index: number; shape: number[]; checksum: string }[]; view: string | null }

/**
 * Zarr stores over HTTP as a static host serves them (404 for a missing key), from a folder and from `virtual`
 * (a store made up key by key), every request's path logged; CORS open (the page is another origin) and no caching
 * (the log then holds every chunk each view reads).
 */
async function serveZarrs(dir: string, virtual: (path: string) => Uint8Array | undefined) {
  const log: string[] = [];
  const server = await serveLocal((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    log.push(path);
    const headers = { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' };
    const file = join(dir, normalize(path));
    const body = virtual(path) ?? (file.startsWith(dir) && existsSync(file) && statSync(file).isFile() ? readFileSync(file) : undefined);
    if (body) res.writeHead(200, headers).end(body);
    else res.writeHead(404, headers).end();
  });
  return { ...server, log };
}

/** Plane `k` across `axis` of a [z, y, x] image, as a one-plane region ([1, h, w], [d, 1, w] or [d, h, 1]). */
function plane(img: Image, axis: Axis, k: number): Image {
  const [d, h, w] = img.shape as number[];
  const shape = [d, h, w];
  shape[AXIS_INDEX[axis]] = 1;
  const data = allocPixels(img.dtype, shape[0] * shape[1] * shape[2]);
  let i = 0;
  for (let z = 0; z < shape[0]; z++) for (let y = 0; y < shape[1]; y++) for (let x = 0; x < shape[2]; x++) {
    const [zz, yy, xx] = axis === 'axial' ? [k, y, x] : axis === 'coronal' ? [z, k, x] : [z, y, k];
    data[i++] = img.data[(zz * h + yy) * w + xx];
  }
  return { data, shape: shape as Image['shape'], channels: 1, dtype: img.dtype };
}

/** The chunk keys of a level that plane `k` across `axis` crosses, as `key([cz, cy, cx])` names them. */
function chunksOfPlane(l: Level, axis: Axis, k: number, key: (c: number[]) => string): string[] {
  const a = AXIS_INDEX[axis];
  const ranges = l.shape.map((n, i) => (i === a ? [Math.floor(k / l.chunks[i])] : Array.from({ length: Math.ceil(n / l.chunks[i]) }, (_, j) => j)));
  const keys: string[] = [];
  for (const z of ranges[0]) for (const y of ranges[1]) for (const x of ranges[2]) keys.push(key([z, y, x]));
  return keys.sort();
}

/** The chunk files requested (metadata left out), sorted. */
const chunkRequests = (log: readonly string[], prefix: string) => log.filter((p) => p.startsWith(prefix) && !/(\.zarray|\.zattrs|\.zgroup|zarr\.json)$/.test(p)).sort();

const state = (page: Page) => page.evaluate(() => (window as unknown as { __zarr: ZarrState }).__zarr);

/** Waits until the page has finished reading the view `view` (`axis:index:level`), and says what it drew. */
async function viewed(page: Page, view: string): Promise<ZarrState> {
  try {
    // A guard against a hang, not a speed check: on a loaded 2-core machine (load 19) a view once took over 60 s.
    await page.waitForFunction((v) => (window as unknown as { __zarr?: ZarrState }).__zarr?.view === v, view, { timeout: 180_000 });
  } catch (e) {
    const s = await state(page).catch(() => undefined);
    throw new Error(`view ${view} not shown: ${(e as Error).message}; the page shows ${JSON.stringify({ view: s?.view, shown: s?.shown.map((x) => x.level) })}, says '${await page.textContent('#upload-error')}'`);
  }
  return state(page);
}

/**
 * Sets the axis, slice (level-0 index) and level of the page's view at once, then tells the page (one input event:
 * a control changed alone reads its own view, whose chunks would be in the log too).
 */
async function setView(page: Page, axis: Axis, k: number, level: string): Promise<void> {
  await page.evaluate(([a, v, l]) => {
    const get = (id: string) => document.getElementById(id) as HTMLInputElement;
    Object.assign(get('axis'), { value: a });
    Object.assign(get('level'), { value: l });
    Object.assign(get('slice'), { max: String(v), value: String(v) });
    get('slice').dispatchEvent(new Event('input'));
  }, [axis, k, level] as const);
}

/** A uint16 OME-Zarr 0.4 written by python3-zarr: zstd chunks of 7×11×9 named with zarr-python's default '.' separator, two levels. */
function pythonZarr(root: string): void {
  const r = spawnSync(PYTHON, ['-c', `
import sys, zarr, numcodecs, numpy as np
rng = np.random.default_rng(38)
z, y, x = np.mgrid[0:20, 0:30, 0:26]
v0 = (1000 * np.sin(z / 4.0) * np.cos(y / 5.0) + 30 * x + 2000 + rng.integers(0, 50, z.shape)).astype('<u2')
g = zarr.open_group(sys.argv[1], mode='w')
for i, v in enumerate([v0, v0[::2, ::2, ::2].copy()]):
    g.create_dataset(str(i), data=v, chunks=(7, 11, 9), compressor=numcodecs.Zstd(level=3))
ds = lambda i: {'path': str(i), 'coordinateTransformations': [{'type': 'scale', 'scale': [2.0 ** i * s for s in (3.0, 0.5, 0.5)]}]}
g.attrs['multiscales'] = [{'version': '0.4', 'axes': [{'name': n, 'type': 'space', 'unit': 'millimeter'} for n in 'zyx'], 'datasets': [ds(0), ds(1)]}]
`, root], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${PYTHON} with python3-zarr failed: ${r.error?.message ?? r.stderr}`);
}

/**
 * A made-up OME-Zarr 0.4 of 131072³ uint16 voxels (4.5 PB at level 0), ten levels down to 256³, raw 16×64×64
 * chunks whose voxel (z, y, x) of level i is (7z + 3y + x + 1000·i) mod 65536: served key by key, never whole.
 */
const HUGE = { side: 2 ** 17, levels: 10, chunks: [16, 64, 64] as [number, number, number] };
const hugeValue = (i: number, z: number, y: number, x: number) => (7 * z + 3 * y + x + 1000 * i) % 65536;
function hugeZarr(path: string): Uint8Array | undefined {
  const m = /^\/huge\.zarr\/(.*)$/.exec(path);
  if (!m) return undefined;
  const json = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
  if (m[1] === '.zgroup') return json({ zarr_format: 2 });
  if (m[1] === '.zattrs') {
    const datasets = Array.from({ length: HUGE.levels }, (_, i) => ({ path: String(i), coordinateTransformations: [{ type: 'scale', scale: [2 ** i, 2 ** i, 2 ** i] }] }));
    return json({ multiscales: [{ version: '0.4', axes: ['z', 'y', 'x'].map((name) => ({ name, type: 'space' })), datasets }] });
  }
  const a = /^(\d+)\/\.zarray$/.exec(m[1]);
  if (a) {
    const n = HUGE.side >> Number(a[1]);
    return json({ zarr_format: 2, shape: [n, n, n], chunks: HUGE.chunks, dtype: '<u2', compressor: null, fill_value: 0, order: 'C', filters: null, dimension_separator: '/' });
  }
  const c = /^(\d+)\/(\d+)\/(\d+)\/(\d+)$/.exec(m[1]);
  if (!c) return undefined;
  const [i, cz, cy, cx] = c.slice(1).map(Number);
  const [dz, dy, dx] = HUGE.chunks;
  const out = new Uint16Array(dz * dy * dx);
  let n = 0;
  for (let z = 0; z < dz; z++) for (let y = 0; y < dy; y++) for (let x = 0; x < dx; x++) out[n++] = hugeValue(i, cz * dz + z, cy * dy + y, cx * dx + x);
  return new Uint8Array(out.buffer);
}

/**
 * The volume page opens OME-Zarr over HTTP in headless Chromium: OME 0.4 (Zarr v2, gzip) and 0.5 (Zarr v3, blosc)
 * written by `imgpu convert`, and 0.4 written by python3-zarr (zstd, '.' chunk keys). Each slice is shown coarsest
 * level first, then finer ones; its voxels are Node's reading of the same store from disk (checksums), and the
 * server's log shows only the chunks that slice crosses were fetched. A 4.5 PB volume is looked through the same way.
 */
test('volume page: OME-Zarr over HTTP, coarsest level first, slices equal to Node\'s reading, only the chunks a slice crosses fetched', { timeout: 900_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-zarr-page-'));
  const anatomical = fixture('volumes', 'anatomical.nii');
  for (const [name, args] of [['a4.zarr', ['--chunks', '8']], ['a5.zarr', ['--ome', '0.5', '--compressor', 'blosc', '--chunks', '8x16x4']]] as const) {
    const r = cli('convert', anatomical, join(dir, name), '--levels', '3', ...args);
    assert.equal(r.status, 0, r.stderr);
  }
  pythonZarr(join(dir, 'py.zarr'));
  const data = await serveZarrs(dir, hugeZarr);
  const { server, url } = await servePlayground();
  const browser = await launchChromium(WEBGPU);
  try {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    const open = async (store: string, query = '') => {
      await openIdle(page, `${url}volume.html?zarr=${encodeURIComponent(`${data.url}${store}`)}${query}`);
    };

    for (const [store, key] of [
      ['a4.zarr', (l: Level, c: number[]) => `/a4.zarr/${l.path}/${c.join('/')}`],
      ['a5.zarr', (l: Level, c: number[]) => `/a5.zarr/${l.path}/c/${c.join('/')}`],
      ['py.zarr', (l: Level, c: number[]) => `/py.zarr/${l.path}/${c.join('.')}`],
    ] as const) {
      await t.test(`${store}: every view's slices, coarsest level first, are Node's reading; only their chunks fetched`, async () => {
        const node = await openOmeZarr(join(dir, store));
        const levels = await Promise.all(node.levels.map((l) => readPlanes(l, node.dtype, 0, l.shape[0])));
        await open(store);
        const first = await state(page);
        assert.deepEqual(first.levels.map((l) => [l.path, l.shape, l.chunks]), node.levels.map((l) => [l.path, l.shape, l.chunks]));
        assert.equal(first.dtype, node.dtype);
        const [d, h, w] = node.levels[0].shape;
        assert.match((await page.textContent('#insize')) ?? '', new RegExp(`^${store}: ${w}×${h}×${d} ${node.dtype}, .*OME-Zarr ${node.ome}, ${node.levels.length} levels$`));
        // The view it opens on (the middle axial slice, every level), then one per axis at the finest level only.
        const mid = Math.floor(d / 2);
        const views: [Axis, number, string][] = [['axial', mid, 'auto'], ['coronal', h - 3, '0'], ['sagittal', 1, '0'], ['sagittal', w - 1, 'auto']];
        for (const [axis, k, level] of views) {
          if (axis !== 'axial') {
            data.log.length = 0;
            await setView(page, axis, k, level);
          }
          const s = await viewed(page, `${axis}:${k}:${level}`).catch((e: Error) => { throw new Error(`${e.message}; ${data.log.length} requests since`); });
          const target = level === 'auto' ? 0 : Number(level);
          const order = Array.from({ length: node.levels.length - target }, (_, j) => node.levels.length - 1 - j);
          assert.deepEqual(s.shown.map((x) => x.level), order, `${axis} ${k}: levels shown coarsest first`);
          for (const x of s.shown) {
            const expected = plane(levels[x.level], axis, Math.floor(k / 2 ** x.level));
            assert.deepEqual(x.shape, expected.shape, `${axis} ${k} level ${x.level}: shape`);
            assert.equal(x.checksum, checksum(expected), `${axis} ${k} level ${x.level}: the voxels Node reads from disk`);
          }
          if (axis === 'axial') continue; // the first view's log holds the opening's metadata reads and the sample's page
          const wanted = order.flatMap((i) => chunksOfPlane(node.levels[i], axis, Math.floor(k / 2 ** i), (c) => key(node.levels[i], c))).sort();
          assert.deepEqual(chunkRequests(data.log, `/${store}/`), wanted, `${axis} ${k}: exactly the chunks the slice crosses`);
        }
        const [cols, rows] = await page.$eval('#in', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]);
        assert.deepEqual([cols, rows], [h, d], 'the last view (sagittal at level 0) is drawn h × d');
      });
    }

    await t.test('Run on the slice shown: the filter on WebGPU and in the CPU worker equals Node\'s on the same plane', async () => {
      const node = await openOmeZarr(join(dir, 'a4.zarr'));
      const l0 = await readPlanes(node.levels[0], node.dtype, 0, node.levels[0].shape[0]);
      await open('a4.zarr');
      const k = Math.floor(node.levels[0].shape[0] / 2);
      await viewed(page, `axial:${k}:auto`);
      assert.match((await page.textContent('#status')) ?? '', /^WebGPU: /);
      const values = { filter: 'gauss:1.5' };
      const r = await runInPage(page, 'filter', values);
      const p = plane(l0, 'axial', k);
      const slice2d: Image = { ...p, shape: p.shape.slice(1) as Image['shape'] };
      const params = { filter: parseParamValue(OPERATIONS.filter.params.find((x) => x.name === 'filter')!, values.filter) };
      const expected = (await OPERATIONS.filter.run(slice2d, params, {})).output as Image;
      assert.equal(r.gpuError, null, 'the GPU runs it');
      assert.equal(r.cpu, checksum(expected), 'the CPU worker\'s result is Node\'s, bit for bit');
      assert.equal(r.identical, true, `GPU and CPU agree: ${await page.textContent('#verdict')}`);
      const dims = (id: string) => page.$eval(id, (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]);
      assert.deepEqual(await dims('#out'), await dims('#in'), 'the result drawn as the slice');
      assert.equal(await page.$eval('#save', (a) => (a as HTMLAnchorElement).download), 'a4-filter.nii', 'saved under the store\'s name');
      // Another slice: the result, which belongs to the previous one, is gone.
      await setView(page, 'axial', k + 1, 'auto');
      await viewed(page, `axial:${k + 1}:auto`);
      assert.deepEqual(await dims('#out'), [0, 0]);
    });

    await t.test('a 131072³ uint16 volume (4.5 PB): slices from the coarsest level to the finest that fits, exact, only their chunks fetched', async () => {
      data.log.length = 0;
      await open('huge.zarr', '&maxSliceVoxels=262144');
      assert.match((await page.textContent('#insize')) ?? '', /^huge\.zarr: 131072×131072×131072 uint16, .*10 levels$/);
      const k = 100_000;
      for (const [axis, at] of [['axial', 65536], ['coronal', k]] as const) {
        if (axis !== 'axial') { data.log.length = 0; await setView(page, axis, at, 'auto'); }
        const s = await viewed(page, `${axis}:${at}:auto`);
        // 512² = 262144 voxels: level 8 is the finest whose slice fits; level 9 (256³) is shown first.
        assert.deepEqual(s.shown.map((x) => x.level), [9, 8]);
        const levels: Level[] = [];
        for (const x of s.shown) {
          const n = HUGE.side >> x.level;
          const shape: [number, number, number] = [n, n, n];
          shape[AXIS_INDEX[axis]] = 1;
          const exp = new Uint16Array(n * n);
          let i = 0;
          const idx = Math.floor(at / 2 ** x.level);
          for (let z = 0; z < shape[0]; z++) for (let y = 0; y < shape[1]; y++) for (let xx = 0; xx < shape[2]; xx++) {
            exp[i++] = axis === 'axial' ? hugeValue(x.level, idx, y, xx) : hugeValue(x.level, z, idx, xx);
          }
          assert.deepEqual(x.shape, shape);
          assert.equal(x.checksum, checksum({ data: exp }), `${axis} level ${x.level}: the voxels served`);
          levels[x.level] = { path: String(x.level), shape: [n, n, n], chunks: HUGE.chunks };
        }
        const wanted = [9, 8].flatMap((i) => chunksOfPlane(levels[i], axis, Math.floor(at / 2 ** i), (c) => `/huge.zarr/${i}/${c.join('/')}`)).sort();
        assert.deepEqual(chunkRequests(data.log, '/huge.zarr/'), wanted, `${axis}: exactly the chunks the slices cross`);
      }
    });

    await t.test('a URL that holds no Zarr: one line beside the drop zone naming it; the volume shown stays', async () => {
      const before = await page.textContent('#insize');
      await page.fill('#zarr-url', `${data.url}missing.zarr`);
      await page.click('#zarr-open');
      await page.waitForFunction(() => document.getElementById('upload-error')?.textContent);
      const line = (await page.textContent('#upload-error')) ?? '';
      assert.match(line, new RegExp(`^${data.url.replace(/[.]/g, '\\.')}missing\\.zarr is not a Zarr store \\(`));
      assert.ok(!line.includes('\n'), 'one line');
      assert.equal(await page.textContent('#insize'), before);
    });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.kill();
    data.close();
  }
});

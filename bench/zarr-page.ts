/**
 * The volume page looking through an OME-Zarr over HTTP: `node dist/bench/zarr-page.js [--shape 512x512x512]
 * [--chunks 64] [--levels 4] [--compressor gzip] [--dir /tmp/imgpu-zarr-page] [--out zarr-page]`.
 *
 * A generated uint16 volume (smooth waves plus seeded noise) written by `imgpu convert` as an OME-Zarr 0.4 pyramid,
 * served by a local HTTP server that counts requests and bytes; headless Chromium opens it in the volume page
 * (`volume.html?zarr=URL`, no GPU needed to look) and shows the middle axial, coronal and sagittal slices at the
 * 'auto' level. Reported per view: milliseconds until the coarsest level and until the finest level were drawn,
 * chunk files fetched and their bytes (against the volume's compressed size), and the tab's JS heap after a GC
 * (V8's usedJSHeapSize: the voxels read live in typed arrays, counted there). Writes bench/results/<out>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allocPixels } from '../src/core/image.js';
import { createOmeZarr, writePlanes, type ZarrCompressor } from '../src/io/zarr.js';
import { CHROMIUM, QUIET, servePlayground } from '../test/helpers/browser.js';

const BIN = fileURLToPath(new URL('../../bin/imgpu.js', import.meta.url));
const arg = (name: string, def: string) => { const i = process.argv.indexOf(`--${name}`); return i >= 0 ? process.argv[i + 1] : def; };

const [w, h, d] = arg('shape', '512x512x512').split('x').map(Number);
const chunk = Number(arg('chunks', '64')), levels = arg('levels', '4'), compressor = arg('compressor', 'gzip') as ZarrCompressor;
const dir = arg('dir', '/tmp/imgpu-zarr-page');

/** Bytes of the files under `p`. */
const sizeOf = (p: string): number => readdirSync(p, { recursive: true }).reduce((s: number, f) => s + statSync(join(p, String(f))).size, 0);

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const flat = join(dir, 'flat.zarr'), store = join(dir, 'v.zarr');
const z = await createOmeZarr(flat, [d, h, w], 'uint16', undefined, { chunks: [chunk, chunk, chunk], compressor: 'raw' });
let seed = 38;
for (let z0 = 0; z0 < d; z0 += chunk) {
  const n = Math.min(chunk, d - z0), data = allocPixels('uint16', n * h * w);
  for (let i = 0; i < data.length; i++) {
    const x = i % w, y = Math.floor(i / w) % h, zz = z0 + Math.floor(i / (w * h));
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    data[i] = 30000 + 15000 * Math.sin(x / 31) * Math.sin(y / 43) * Math.cos(zz / 27) + (seed >>> 24);
  }
  await writePlanes(z.levels[0], { data, shape: [n, h, w], channels: 1, dtype: 'uint16' }, z0);
}
const conv = spawnSync(process.execPath, [BIN, 'convert', flat, store, '--levels', levels, '--compressor', compressor, '--chunks', String(chunk), '--quiet'], { encoding: 'utf8' });
if (conv.status !== 0) throw new Error(`imgpu convert: ${conv.stderr}`);
rmSync(flat, { recursive: true, force: true });
const stored = sizeOf(store);

let requests = 0, bytes = 0;
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  const file = join(dir, normalize(path));
  let body: Buffer | undefined;
  try { body = file.startsWith(dir) ? readFileSync(file) : undefined; } catch { body = undefined; }
  requests++;
  bytes += body?.length ?? 0;
  res.writeHead(body ? 200 : 404, { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' }).end(body);
});
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const dataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v.zarr`;
const { server: pg, url } = await servePlayground();
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...QUIET, '--disable-webgpu', '--js-flags=--expose-gc'] });
type Shown = { level: number; ms: number; shape: number[] };
const heap = () => page.evaluate(() => { (globalThis as unknown as { gc(): void }).gc(); return (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize; });
const page = await browser.newPage();
await page.goto(`${url}playground.css`); // the browser started, before anything is timed or counted
requests = 0; bytes = 0;
const rows: Record<string, unknown>[] = [];
try {
  // The axial view's requests include the opening's metadata reads (a few small JSON files).
  await page.goto(`${url}volume.html?zarr=${encodeURIComponent(dataUrl)}`);
  await page.waitForSelector('body[data-state="idle"]', { timeout: 120_000 });
  const mid = { axial: Math.floor(d / 2), coronal: Math.floor(h / 2), sagittal: Math.floor(w / 2) };
  for (const axis of ['axial', 'coronal', 'sagittal'] as const) {
    const view = `${axis}:${mid[axis]}:auto`;
    if (axis !== 'axial') {
      requests = 0; bytes = 0;
      // The opening view is the axial one; the others are asked for as a user moving the controls does.
      await page.evaluate(([a, k]) => {
        const get = (id: string) => document.getElementById(id) as HTMLInputElement;
        Object.assign(get('axis'), { value: a });
        Object.assign(get('slice'), { max: String(k), value: String(k) });
        get('slice').dispatchEvent(new Event('input'));
      }, [axis, mid[axis]] as const);
    }
    await page.waitForFunction((v) => (window as unknown as { __zarr: { view: string } }).__zarr.view === v, view, { timeout: 300_000 });
    const shown = await page.evaluate(() => (window as unknown as { __zarr: { shown: Shown[] } }).__zarr.shown);
    const row = {
      view: axis, firstLevel: shown[0].level, firstMs: shown[0].ms, finestLevel: shown.at(-1)!.level, finestMs: shown.at(-1)!.ms,
      requests, fetchedMB: +(bytes / 1e6).toFixed(2), heapMB: +((await heap()) / 1e6).toFixed(1),
    };
    rows.push(row);
    console.log(`${axis.padEnd(8)} level ${row.firstLevel} in ${row.firstMs} ms, level ${row.finestLevel} in ${row.finestMs} ms; ${requests} requests, ${row.fetchedMB} MB fetched; JS heap ${row.heapMB} MB`);
  }
} finally {
  await browser.close();
  pg.kill();
  server.close();
}
const summary = { shape: [w, h, d], dtype: 'uint16', chunks: chunk, levels: Number(levels), compressor, logicalGB: +((w * h * d * 2) / 1e9).toFixed(3), storedMB: +(stored / 1e6).toFixed(1), cpus: cpus().length, rows };
console.log(`volume ${w}×${h}×${d} uint16 (${summary.logicalGB} GB logical, ${summary.storedMB} MB stored ${compressor}), chunks ${chunk}³, ${levels} levels`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(join('bench/results', `${arg('out', 'zarr-page')}.json`), `${JSON.stringify(summary, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });

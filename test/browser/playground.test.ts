import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { pixelChecksum as checksum } from '../../src/core/compare.js';
import { imageFrom, toGray } from '../../src/core/image.js';
import { parseParamValue } from '../../src/core/params.js';
import { encodeNpy, readImage } from '../../src/io/index.js';
import { loadFileParams } from '../../src/io/params.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { chromiumOrSkip, lastRun, launchChromium, NO_WEBGPU, openIdle, pageErrors, ROOT, runInPage, servePlayground, WEBGPU, withPlayground } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';

// [sample, operation, form values]: every registry operation at least once, colour CLAHE, both CLAHE forms.
const CASES: [string, string, Record<string, string>][] = [
  ['coins.png', 'equalize', {}],
  ['coins.png', 'threshold', { method: 'otsu' }],
  ['coins.png', 'threshold', { method: 'mean', window: '15' }],
  ['coins.png', 'clahe', { tiles: '8x8', clip: '2' }],
  ['coins.png', 'clahe', { window: '5', clip: '3' }],
  ['coins.png', 'morph', { op: 'open', se: 'rect:5x5' }],
  ['coins.png', 'morph', { op: 'gradient', se: 'ellipse:5x5' }],
  ['chelsea.png', 'clahe', { tiles: '4x4', clip: '2' }],
  // Added on the skeleton (issue 19) with no playground code: colour kept, every channel corrected.
  ['chelsea.png', 'gamma', { gamma: '0.5' }],
  ['coins.png', 'gamma', { gamma: '2.2', gain: '1.2' }],
];

/**
 * The playground served by its own script (COOP/COEP headers, so the page is cross-origin isolated), driven in
 * headless Chromium on WebGPU (SwiftShader): every operation runs on the GPU and in the CPU worker, the two
 * agree, and both equal the Node CPU path on the same decoded sample; the screenshot is not blank.
 */
test('playground: every operation on WebGPU and in the CPU worker equals the Node CPU path', { timeout: 600_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { server, url } = await servePlayground();
  const browser = await launchChromium(WEBGPU);
  try {
    const page = await browser.newPage({ viewport: { width: 1800, height: 1000 } });
    const errors = pageErrors(page);
    await openIdle(page, url);
    const statusLine = await page.textContent('#status');
    assert.match(statusLine ?? '', /^WebGPU: /, `the page found no WebGPU adapter: ${statusLine}`);
    assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'the COOP/COEP headers make the page cross-origin isolated');
    assert.deepEqual(await page.$$eval('#op option', (os) => os.map((o) => (o as HTMLOptionElement).value)), Object.keys(OPERATIONS), 'the operations come from the registry');
    let loaded = '';
    for (const [sample, op, values] of CASES) {
      if (loaded !== sample) {
        await page.click(`#sample-${sample.replace('.', '\\.')}`);
        await page.waitForFunction((s) => document.getElementById('insize')?.textContent?.startsWith(s), sample);
        const img = await readImage(fixture('images', sample));
        assert.equal(await page.evaluate(() => (window as unknown as { __input: string }).__input), checksum(img), `the browser decodes ${sample} as sharp does`);
        loaded = sample;
      }
      const last = await runInPage(page, op, values);
      const img = await readImage(fixture('images', sample));
      const spec = OPERATIONS[op];
      const params: Record<string, unknown> = {};
      for (const p of spec.params) if (values[p.name] !== undefined) params[p.name] = parseParamValue(p, values[p.name]);
      const expected = checksum((await spec.run(spec.colour ? img : toGray(img), params, {})).output);
      const what = `${op} ${JSON.stringify(values)} on ${sample}`;
      assert.equal(last.gpuError, null, `${what}: GPU failed`);
      assert.equal(last.identical, true, `${what}: GPU and CPU differ in the page`);
      assert.equal(last.gpu, expected, `${what}: the page's GPU result differs from the Node CPU path`);
      assert.equal(last.cpu, expected, `${what}: the page's CPU worker result differs from the Node CPU path`);
      assert.match((await page.textContent('#verdict')) ?? '', /identical/);
      assert.match((await page.textContent('#timings')) ?? '', /gpu +total .* = host .* upload .* kernels .* download/);
    }
    const shot = await page.screenshot();
    const stats = await sharp(shot).stats();
    assert.ok(stats.channels[0].stdev > 20, `the screenshot looks blank (stdev ${stats.channels[0].stdev})`);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.kill();
  }
});

test('playground without WebGPU: one line says so and the CPU path still runs', { timeout: 120_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  await withPlayground(NO_WEBGPU, async (browser, url) => {
    const page = await browser.newPage();
    await openIdle(page, url);
    assert.match((await page.textContent('#status')) ?? '', /^WebGPU is not available in this browser .*: running on the CPU only$/);
    assert.equal(await page.textContent('#run'), 'Run on the CPU', 'the button says what it will do');
    await page.click('#sample-coins\\.png');
    await page.waitForSelector('body[data-state="ready"]');
    await page.click('#run');
    await page.waitForSelector('body[data-state="done"]', { timeout: 60_000 });
    const last = await lastRun(page);
    const img = await readImage(fixture('images', 'coins.png'));
    assert.equal(last.gpu, null);
    assert.equal(last.cpu, checksum((await OPERATIONS.equalize.run(img, {}, {})).output));
    // Every page takes the rules the pages share from playground.css (served, and applied before the page's own).
    for (const name of ['index.html', 'volume.html', 'detect.html']) {
      const missing: string[] = [];
      page.on('response', (r) => { if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`); });
      await page.goto(`${url}${name}`);
      const style = await page.evaluate(() => [getComputedStyle(document.body).margin, getComputedStyle(document.querySelector('h1')!).fontSize]);
      assert.deepEqual(style, ['16px', '18px'], `${name} has the shared style`);
      assert.deepEqual(missing, [], `${name} loads everything it names`);
      page.removeAllListeners('response');
    }
  });
});

/** The columns of a histogram canvas (2 px a bin) that hold a bar: how many of the 256 bins are drawn. */
function barsIn(page: import('playwright-core').Page, id: string): Promise<number> {
  return page.evaluate((id) => {
    const c = document.getElementById(id) as HTMLCanvasElement;
    if (c.width === 0) return 0;
    const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let bars = 0;
    for (let b = 0; b < c.width / 2; b++) {
      let drawn = false;
      for (let y = 0; y < c.height && !drawn; y++) drawn = px[4 * (y * c.width + 2 * b)] !== 255;
      if (drawn) bars++;
    }
    return bars;
  }, id);
}

/** Issue 23's defects, each seen in the page as a user would meet it. */
test('playground defects: failed runs, rejected uploads, W×H, the run button, the icon, float histograms, file parameters', { timeout: 600_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { server, url } = await servePlayground();
  const browser = await launchChromium(WEBGPU);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-playground-files-'));
  try {
    const page = await browser.newPage({ viewport: { width: 1800, height: 1000 } });
    const failed: string[] = [];
    page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
    page.on('requestfailed', (r) => failed.push(`${r.failure()?.errorText} ${r.url()}`));
    await openIdle(page, url);
    const statusLine = (await page.textContent('#status')) ?? '';
    assert.match(statusLine, /^WebGPU: /);
    const runWith = (op: string, values: Record<string, string>) => runInPage(page, op, values);
    await t.test('the start page shows a sample, its histogram, and can run at once', async () => {
      const { width, height } = await sharp(join(ROOT, 'samples', 'camera.png')).metadata();
      assert.match((await page.textContent('#insize')) ?? '', /^camera\.png: /, 'the input names the sample');
      assert.deepEqual(await page.$eval('#in', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]), [width, height]);
      assert.ok((await barsIn(page, 'inhist')) > 50, `the input histogram has ${await barsIn(page, 'inhist')} bars`);
      assert.equal(await page.isEnabled('#run'), true);
    });

    await page.click('#sample-coins\\.png');
    await page.waitForSelector('body[data-state="ready"]');

    await t.test('a failed run clears the previous result and says it failed', async () => {
      await runWith('equalize', {});
      assert.equal(await page.isVisible('#download'), true);
      await runWith('morph', { se: 'blob:3' });
      assert.match((await page.textContent('#verdict')) ?? '', /failed/);
      assert.match((await page.textContent('#outwhich')) ?? '', /failed/);
      assert.equal(await page.isVisible('#download'), false, 'the previous result\'s download link is gone');
      assert.deepEqual(await page.$eval('#out', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]), [0, 0], 'the previous result image is gone');
      assert.equal(await barsIn(page, 'outhist'), 0, 'the previous result\'s histogram is gone');
    });

    await t.test('a rejected upload says so in its own place, the status line stays, the next upload clears it', async () => {
      // (A TIFF was the rejected file until the page read TIFF itself: now a file that is no image at all.)
      const bad = join(dir, 'notes.txt');
      writeFileSync(bad, 'not an image\n');
      await page.setInputFiles('#file', bad);
      await page.waitForFunction(() => document.getElementById('upload-error')?.textContent);
      assert.match((await page.textContent('#upload-error')) ?? '', /cannot decode/);
      assert.equal(await page.textContent('#status'), statusLine, 'the WebGPU status line keeps saying what it said');
      await page.setInputFiles('#file', fixture('images', 'cat_29x45.png'));
      await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('cat_29x45.png'));
      assert.equal(await page.textContent('#upload-error'), '', 'a successful upload clears the error');
      assert.equal(await page.textContent('#status'), statusLine);
    });

    await t.test('sizes read W×H', async () => {
      const { width, height } = await sharp(fixture('images', 'cat_29x45.png')).metadata();
      assert.match((await page.textContent('#insize')) ?? '', new RegExp(`^cat_29x45.png: ${width}×${height} `));
      await runWith('equalize', {});
      assert.match((await page.textContent('#outwhich')) ?? '', new RegExp(`^GPU: ${width}×${height} `));
    });

    await t.test('the run button says what it will do', async () => {
      assert.equal(await page.textContent('#run'), 'Run on GPU and CPU');
    });

    await t.test('float32 results: histogram and image mapped by their range, labelled with it', async () => {
      await page.click('#sample-coins\\.png');
      await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('coins.png'));
      await runWith('filter', { filter: 'sobel-x' });
      const out = (await OPERATIONS.filter.run(toGray(await readImage(fixture('images', 'coins.png'))), { filter: 'sobel-x' }, {})).output;
      assert.equal(out.dtype, 'float32');
      let lo = Infinity, hi = -Infinity;
      for (const v of out.data) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      assert.ok((await barsIn(page, 'outhist')) > 50, `the histogram has ${await barsIn(page, 'outhist')} bars`);
      assert.ok((await page.textContent('#outwhich'))?.includes(`range ${lo}…${hi}`), `${await page.textContent('#outwhich')} names the range ${lo}…${hi}`);
    });

    await t.test('kernel:FILE and mask:FILE: a typed path says to choose the file; a chosen .npy/PNG runs as in Node', async () => {
      const kernel = join(dir, 'edge.npy');
      writeFileSync(kernel, encodeNpy(imageFrom(Float32Array.from([1, 2, 0, 0, 0, 0, 0, -2, -1]), [3, 3])));
      const mask = join(dir, 'plus.png');
      const plus = Uint8Array.from({ length: 25 }, (_, i) => (i % 5 === 2 || Math.floor(i / 5) === 2 ? 255 : 0));
      await sharp(plus, { raw: { width: 5, height: 5, channels: 1 } }).toColourspace('b-w').png().toFile(mask);
      const coins = toGray(await readImage(fixture('images', 'coins.png')));
      for (const [op, param, file, prefix] of [['filter', 'filter', kernel, 'kernel:'], ['morph', 'se', mask, 'mask:']] as const) {
        await runWith(op, { [param]: `${prefix}${file}` });
        assert.match((await page.textContent('#verdict')) ?? '', /choose the file/, `${op}: a typed ${prefix}PATH says what to do`);
        await page.setInputFiles(`#param-${param}-file`, file);
        const name = file.slice(dir.length + 1);
        await page.waitForFunction(([id, v]) => (document.getElementById(id) as HTMLInputElement).value === v, [`param-${param}`, `${prefix}${name}`]);
        await page.click('#run');
        await page.waitForSelector('body[data-state="done"]', { timeout: 300_000 });
        const last = await lastRun(page);
        const spec = OPERATIONS[op];
        const expected = checksum((await spec.run(coins, await loadFileParams(spec.params, { [param]: `${prefix}${file}` }), {})).output);
        assert.equal(last.gpuError, null, `${op} ${prefix}${name}: GPU failed`);
        assert.equal(last.cpuError, null, `${op} ${prefix}${name}: CPU failed`);
        assert.equal(last.gpu, expected, `${op} ${prefix}${name}: the page's GPU result differs from Node's`);
        assert.equal(last.cpu, expected, `${op} ${prefix}${name}: the page's CPU worker result differs from Node's`);
        await page.fill(`#param-${param}`, '');
      }
    });

    await t.test('an 8000×6000 RGB image (144 MB) past the binding limit runs on the GPU in slabs, equal to the CPU paths', async () => {
      const [w, h] = [8000, 6000];
      const rgb = new Uint8Array(w * h * 3);
      for (let y = 0, i = 0; y < h; y++) for (let x = 0; x < w; x++, i += 3) { rgb[i] = x; rgb[i + 1] = y; rgb[i + 2] = (x ^ y) >> 3; }
      const big = join(dir, 'big.png');
      await sharp(rgb, { raw: { width: w, height: h, channels: 3 } }).png({ compressionLevel: 1 }).toFile(big);
      // SwiftShader binds more than 144 MB: the page is opened with lavapipe's 128 MiB, as a smaller GPU has it.
      const small = await browser.newPage();
      try {
        await openIdle(small, `${url}?maxStorageBufferBindingSize=${128 * 2 ** 20}`);
        await small.setInputFiles('#file', big);
        await small.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('big.png'), undefined, { timeout: 120_000 });
        const last = await runInPage(small, 'gamma', { gamma: '0.5' });
        const expected = checksum((await OPERATIONS.gamma.run(imageFrom(rgb, [h, w], 3), { gamma: 0.5 }, {})).output);
        const timings = (await small.textContent('#timings')) ?? '';
        t.diagnostic(`8000×6000 RGB in the page at a 128 MiB binding: ${timings.replace(/\n/g, ' | ')}`);
        assert.equal(last.gpuError, null, 'the GPU runs it');
        assert.match(timings, /gpu +total .*, \d+ slabs/, 'in slabs');
        assert.equal(last.gpu, expected, 'the page\'s GPU result equals the Node CPU path');
        assert.equal(last.cpu, expected, 'the page\'s CPU worker result equals the Node CPU path');
      } finally {
        await small.close();
      }
    });

    await t.test('the page has an icon (no /favicon.ico 404) and loads no missing file', async () => {
      // Chromium asks for /favicon.ico outside the page's own requests (none of the events above sees it): the
      // page declares its icon, which the browser then takes instead, and that icon loads.
      const icon = await page.$eval('link[rel="icon"]', (l) => (l as HTMLLinkElement).href).catch(() => null);
      assert.ok(icon, 'index.html declares an icon');
      assert.equal(await page.evaluate(async (href) => (await fetch(href)).ok, icon), true, `the icon ${icon.slice(0, 40)}… loads`);
      assert.deepEqual(failed, []);
    });
  } finally {
    await browser.close();
    server.kill();
  }
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { imageFrom } from '../../src/core/image.js';
import { equalize } from '../../src/index.js';
import { chromiumOrSkip, pageErrors, ROOT, serveLocal, WEBGPU, withChromium } from '../helpers/browser.js';
import { randomBytes } from '../helpers/fixtures.js';

const ENTRY = fileURLToPath(new URL('../../src/browser.js', import.meta.url));

const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
import * as imgpu from '/imgpu.js';
window.runEqualize = async () => {
  const ctx = await imgpu.createBrowserGpuContext();
  const w = 333, h = 217, data = new Uint8Array(w * h);
  for (let i = 0, s = 7; i < data.length; i++) { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; data[i] = (s >>> 0) % 180 + (i % w) / 8; }
  const img = imgpu.imageFrom(data, [h, w]);
  const cpu = await imgpu.equalize(img);
  const gpu = await imgpu.equalize(img, { gpu: ctx });
  const cmp = imgpu.compareImages(cpu.output, gpu.output);
  const adapter = ctx.adapter.description || ctx.adapter.vendor;
  ctx.destroy();
  return { identical: cmp.identical, mismatches: cmp.mismatches, adapter, kernels: gpu.timings.kernels.length, sample: Array.from(gpu.output.data.slice(0, 8)) };
};
window.ready = true;
</script>`;

/**
 * The same `equalize` bundled for the browser (which proves core/ and ops/ import nothing Node-only: esbuild
 * fails on a Node built-in for platform 'browser') and run in headless Chromium on WebGPU (SwiftShader),
 * compared with the CPU path in the same page.
 */
test('browser: equalize on WebGPU in headless Chromium equals the CPU path', async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { build } = await import('esbuild');
  const bundle = await build({ entryPoints: [ENTRY], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  const js = bundle.outputFiles[0].text;
  const server = await serveLocal((req, res) => {
    if (req.url === '/imgpu.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  try {
    await withChromium(WEBGPU, async (browser) => {
      const page = await browser.newPage();
      const errors = pageErrors(page);
      await page.goto(server.url);
      await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 30_000 });
      const r = await page.evaluate(() => (window as unknown as { runEqualize: () => Promise<{ identical: boolean; mismatches: number; adapter: string; kernels: number }> }).runEqualize());
      assert.deepEqual(errors, []);
      assert.equal(r.identical, true, `GPU differs from CPU in ${r.mismatches} pixels on ${r.adapter}`);
      assert.ok(r.kernels >= 1);
      t.diagnostic(`browser adapter: ${r.adapter}`);
    });
  } finally {
    server.close();
  }
});

/** The README's minimal browser example: the ```js block after the `browser-example` marker. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const m = /<!-- browser-example[^>]*-->\s*```js\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README.md has no ```js block after <!-- browser-example -->');
  return m[1];
}

/**
 * The README's browser example, bundled by esbuild against the real `imgpu/browser` entry (a renamed export fails
 * the build) and run in headless Chromium on a canvas: the canvas it leaves equals Node's equalize of the same RGBA.
 */
test('browser: the README example (navigator.gpu → context → equalize of an ImageData) builds and runs', async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { build } = await import('esbuild');
  const bundle = await build({
    stdin: { contents: readmeExample(), resolveDir: ROOT, loader: 'js' }, alias: { 'imgpu/browser': ENTRY },
    bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent',
  });
  const [w, h] = [64, 48];
  const rgba = randomBytes(w * h * 4, 23);
  for (let i = 3; i < rgba.length; i += 4) rgba[i] = 255; // opaque: the canvas keeps the values as they are
  const page = `<!doctype html><meta charset="utf-8"><canvas width="${w}" height="${h}"></canvas><script>
    document.querySelector('canvas').getContext('2d').putImageData(new ImageData(Uint8ClampedArray.from(${JSON.stringify(Array.from(rgba))}), ${w}, ${h}), 0, 0);
  </script><script type="module" src="/example.js"></script>`;
  const server = await serveLocal((req, res) => {
    if (req.url === '/example.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0].text);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  try {
    await withChromium(WEBGPU, async (browser) => {
      const tab = await browser.newPage();
      const errors = pageErrors(tab);
      const logged = tab.waitForEvent('console', { predicate: (m) => m.text().startsWith('equalize: '), timeout: 60_000 });
      await tab.goto(server.url);
      t.diagnostic((await logged).text());
      const shown = await tab.evaluate(() => Array.from(document.querySelector('canvas')!.getContext('2d')!.getImageData(0, 0, 64, 48).data));
      const expected = (await equalize(imageFrom(rgba, [h, w], 4))).output.data;
      assert.deepEqual(errors, []);
      for (let i = 0; i < w * h; i++) {
        const px = shown.slice(4 * i, 4 * i + 4);
        if (px[0] !== expected[i] || px[1] !== expected[i] || px[2] !== expected[i]) assert.fail(`pixel ${i}: the page shows ${px}, Node's equalize gives ${expected[i]}`);
      }
    });
  } finally {
    server.close();
  }
});

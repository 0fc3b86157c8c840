import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHROMIUM = process.env.IMGPU_CHROMIUM ?? '/usr/bin/chromium';
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
  if (!existsSync(CHROMIUM)) {
    if (process.env.IMGPU_REQUIRE_BROWSER === '1') throw new Error(`IMGPU_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (scripts/install-system-deps.sh installs it)`);
    t.skip(`no Chromium at ${CHROMIUM}`);
    return;
  }
  const { build } = await import('esbuild');
  const bundle = await build({ entryPoints: [ENTRY], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  const js = bundle.outputFiles[0].text;
  const server: Server = createServer((req, res) => {
    if (req.url === '/imgpu.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 30_000 });
    const r = await page.evaluate(() => (window as unknown as { runEqualize: () => Promise<{ identical: boolean; mismatches: number; adapter: string; kernels: number }> }).runEqualize());
    assert.deepEqual(errors, []);
    assert.equal(r.identical, true, `GPU differs from CPU in ${r.mismatches} pixels on ${r.adapter}`);
    assert.ok(r.kernels >= 1);
    t.diagnostic(`browser adapter: ${r.adapter}`);
  } finally {
    await browser.close();
    server.close();
  }
});

// imgpu/browser's decodeImage in a real page: a bundle of the entry decodes a 16-bit PNG (fetched as bytes), runs an
// operation on it, and both the decoded pixels and the result equal Node's readImage (sharp) and the same operation.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pixelChecksum } from '../../src/core/compare.js';
import { clahe } from '../../src/index.js';
import { readImage } from '../../src/io/index.js';
import { chromiumOrSkip, pageErrors, serveLocal, WEBGPU, withChromium } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';

const ENTRY = fileURLToPath(new URL('../../src/browser.js', import.meta.url));
const OPTS = { tiles: { width: 4, height: 4 }, clip: 3 };

/** The page's script: bytes → decodeImage → clahe on the CPU path, reported as checksums. */
const SCRIPT = `import { clahe, decodeImage, pixelChecksum } from 'imgpu/browser';
const bytes = new Uint8Array(await (await fetch('/moon16.png')).arrayBuffer());
const img = await decodeImage(bytes, { name: 'moon16.png' });
const out = (await clahe(img, ${JSON.stringify(OPTS)})).output;
window.result = { shape: img.shape, channels: img.channels, dtype: img.dtype, decoded: pixelChecksum(img), clahe: pixelChecksum(out), outDtype: out.dtype };`;

test('browser: decodeImage (imgpu/browser) reads a 16-bit PNG as Node does, and clahe on it gives Node\'s pixels', async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { build } = await import('esbuild');
  const bundle = await build({
    stdin: { contents: SCRIPT, resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'js' }, alias: { 'imgpu/browser': ENTRY },
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
  });
  const png = readFileSync(fixture('images', 'moon16.png'));
  const routes: Record<string, [string, string | Buffer]> = {
    '/decode.js': ['text/javascript', bundle.outputFiles[0].text],
    '/moon16.png': ['image/png', png],
    '/': ['text/html', '<!doctype html><meta charset="utf-8"><script type="module" src="/decode.js"></script>'],
  };
  const server = await serveLocal((req, res) => {
    const [type, body] = routes[req.url ?? '/'] ?? routes['/'];
    res.writeHead(200, { 'content-type': type }).end(body);
  });
  try {
    await withChromium(WEBGPU, async (browser) => {
      const page = await browser.newPage();
      const errors = pageErrors(page);
      await page.goto(server.url);
      await page.waitForFunction(() => 'result' in window, undefined, { timeout: 60_000 });
      const r = await page.evaluate(() => (window as unknown as { result: Record<string, unknown> }).result);
      assert.deepEqual(errors, []);
      const node = await readImage(fixture('images', 'moon16.png'));
      const expected = (await clahe(node, OPTS)).output;
      assert.deepEqual({ shape: r.shape, channels: r.channels, dtype: r.dtype }, { shape: node.shape, channels: 1, dtype: 'uint16' });
      assert.equal(r.decoded, pixelChecksum(node), 'the page decodes the PNG to the pixels sharp gives in Node');
      assert.equal(r.outDtype, 'uint16');
      assert.equal(r.clahe, pixelChecksum(expected), 'clahe in the page equals clahe in Node');
    });
  } finally {
    server.close();
  }
});

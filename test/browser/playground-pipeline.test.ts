import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { pixelChecksum as checksum } from '../../src/core/compare.js';
import { toGray, type Image } from '../../src/core/image.js';
import { parseParamValue } from '../../src/core/params.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { OPERATIONS } from '../../src/ops/registry.js';
import { cli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { chromiumOrSkip, lastRun, openIdle, pageErrors, runInPage, WEBGPU, withPlayground } from '../helpers/browser.js';

type Page = import('playwright-core').Page;

/** The page with its WebGPU status line up, on a fresh server; `body` gets the page and closes all after. */
async function withPage(t: { skip(msg: string): void }, body: (page: Page) => Promise<void>): Promise<void> {
  if (!chromiumOrSkip(t)) return;
  await withPlayground(WEBGPU, async (browser, url) => {
    const page = await browser.newPage({ viewport: { width: 1800, height: 1200 }, acceptDownloads: true });
    const errors = pageErrors(page);
    await openIdle(page, url);
    assert.match((await page.textContent('#status')) ?? '', /^WebGPU: /);
    await body(page);
    assert.deepEqual(errors, []);
  });
}

/** Uploads a file and waits until the page shows it as the input. */
async function upload(page: Page, path: string): Promise<void> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  await page.setInputFiles('#file', path);
  await page.waitForFunction((n) => document.getElementById('insize')?.textContent?.startsWith(`${n}:`) || document.getElementById('upload-error')?.textContent, name);
  assert.equal(await page.textContent('#upload-error'), '', `${name} is read`);
}


/** Clicks the download link and saves the file under `dir` by the name the page gives it. */
async function download(page: Page, dir: string): Promise<string> {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const path = join(dir, dl.suggestedFilename());
  await dl.saveAs(path);
  return path;
}

/** The registry operation on a host image as Node runs it (CPU), from the form's values. */
async function nodeResult(img: Image, op: string, values: Record<string, string>): Promise<Image> {
  const spec = OPERATIONS[op];
  const params: Record<string, unknown> = {};
  for (const p of spec.params) if (values[p.name] !== undefined) params[p.name] = parseParamValue(p, values[p.name]);
  return (await spec.run(spec.colour ? img : toGray(img), params, {})).output;
}

test('playground: 16-bit PNG and TIFF stay 16-bit, run as 16-bit on the GPU and in the worker as in Node, download as 16-bit PNG / float .npy', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-playground-16-'));
  await withPage(t, async (page) => {
    const moon = await readImage(fixture('images', 'moon16.png'));
    assert.equal(moon.dtype, 'uint16');
    await upload(page, fixture('images', 'moon16.png'));
    assert.match((await page.textContent('#insize')) ?? '', /^moon16\.png: 512×512 uint16 \(PNG, uint16, decodeImage\), range \d+…\d+ shown as black…white$/);
    assert.equal(await page.evaluate(() => (window as unknown as { __input: string }).__input), checksum(moon), 'the page reads moon16.png as Node does');

    for (const [op, values] of [['equalize', {}], ['clahe', { tiles: '8x8', clip: '2' }], ['threshold', { method: 'otsu' }], ['gamma', { gamma: '0.5' }], ['filter', { filter: 'sobel-x' }]] as const) {
      const last = await runInPage(page, op, values);
      const expected = await nodeResult(moon, op, values);
      const what = `${op} ${JSON.stringify(values)} on moon16.png`;
      assert.equal(last.gpuError, null, `${what}: GPU failed`);
      assert.equal(last.dtype, expected.dtype, `${what}: the result's dtype`);
      assert.equal(last.gpu, checksum(expected), `${what}: the page's GPU result differs from Node's`);
      assert.equal(last.cpu, checksum(expected), `${what}: the page's CPU worker result differs from Node's`);
      let lo = Infinity, hi = -Infinity;
      for (const v of expected.data) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      assert.ok((await page.textContent('#outwhich'))?.endsWith(`${expected.dtype}, range ${lo}…${hi} shown as black…white`), `${what}: ${await page.textContent('#outwhich')}`);
      if (op === 'equalize' || op === 'filter') {
        const saved = await download(page, dir);
        assert.equal(saved, join(dir, op === 'equalize' ? 'moon16-equalize.png' : 'moon16-filter.npy'));
        const back = await readImage(saved);
        assert.equal(back.dtype, expected.dtype, `${what}: the downloaded file keeps ${expected.dtype}`);
        assert.equal(checksum(back), checksum(expected), `${what}: the downloaded file reads back equal`);
      }
    }

    // A 16-bit TIFF (LZW, as imgpu writes it) and a 16-bit RGB PNG read as Node reads them; colour gamma on 16 bits.
    const tif = join(dir, 'moon16.tif');
    await writeImage(tif, moon);
    await upload(page, tif);
    assert.match((await page.textContent('#insize')) ?? '', /^moon16\.tif: 512×512 uint16 \(TIFF, uint16, decodeImage\)/);
    assert.equal(await page.evaluate(() => (window as unknown as { __input: string }).__input), checksum(moon));
    const chelsea = await readImage(fixture('images', 'chelsea16.png'));
    await upload(page, fixture('images', 'chelsea16.png'));
    assert.equal(await page.evaluate(() => (window as unknown as { __input: string }).__input), checksum(chelsea));
    const last = await runInPage(page, 'gamma', { gamma: '2.2' });
    const expected = await nodeResult(chelsea, 'gamma', { gamma: '2.2' });
    assert.equal(last.gpu, checksum(expected));
    assert.equal(last.cpu, checksum(expected));
  });
});

/** Runs the pipeline text in the page and waits for it (or for its one-line error). */
async function runChain(page: Page, chain: string): Promise<Record<string, unknown>> {
  await page.fill('#chain', chain);
  await page.click('#run-pipeline');
  await page.waitForSelector('body[data-state="done"]', { timeout: 300_000 });
  return lastRun(page);
}

test('playground: a pipeline runs on the GPU and in the worker equal to `imgpu pipeline`, each stage shown; errors name the step', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-playground-pipe-'));
  await withPage(t, async (page) => {
    for (const [file, chain] of [['coins.png', 'clahe --clip 2 | threshold --method otsu'], ['moon16.png', 'gamma --gamma 0.5 | morph open --se ellipse:5x5']]) {
      await upload(page, fixture('images', file));
      const last = await runChain(page, chain);
      const out = join(dir, `${file}-pipeline.png`);
      const r = cli('pipeline', fixture('images', file), out, chain, '--device', 'cpu');
      assert.equal(r.status, 0, r.stderr);
      const expected = await readImage(out);
      const what = `'${chain}' on ${file}`;
      assert.equal(last.gpuError, null, `${what}: GPU failed`);
      assert.equal(last.cpuError, null, `${what}: CPU failed`);
      assert.equal(last.dtype, expected.dtype);
      assert.equal(last.gpu, checksum(expected), `${what}: the page's GPU pipeline differs from the CLI's`);
      assert.equal(last.cpu, checksum(expected), `${what}: the page's CPU worker pipeline differs from the CLI's`);
      assert.equal(last.identical, true);
      // Each stage: the first equals its operation alone; both shown, with their times.
      const [first] = chain.split('|');
      const firstOut = join(dir, `${file}-first.png`);
      // --keep-gray: the page takes a gray file as it is (the CLI would read a gray JPEG with three channels, as
      // cv2.imread does, for a first step that takes colour).
      assert.equal(cli('pipeline', fixture('images', file), firstOut, first, '--device', 'cpu', '--keep-gray').status, 0);
      const stages = last.stages as { op: string; gpu: string; cpu: string }[];
      assert.deepEqual(stages.map((s) => s.op), chain.split('|').map((s) => s.trim().split(' ')[0]));
      assert.equal(stages[0].gpu, checksum(await readImage(firstOut)), `${what}: stage 1 on the GPU`);
      assert.equal(stages[0].cpu, stages[0].gpu, `${what}: stage 1 in the worker`);
      assert.equal(stages[1].gpu, last.gpu);
      const shown = await page.$$eval('#stages .stage', (els) => els.map((e) => [e.textContent, (e.querySelector('canvas')!).width]));
      assert.equal(shown.length, 2);
      for (const [text, width] of shown) {
        assert.match(text as string, /gpu [\d.]+ ms recorded.* · cpu [\d.]+ ms · GPU = CPU/);
        assert.ok((width as number) > 0, 'the stage is drawn');
      }
      assert.match((await page.textContent('#timings')) ?? '', /of which 1 intermediate stage\(s\) downloaded only to be shown: /);
    }
    // The README's screenshot is taken here (the page after a pipeline: input, output, stages): IMGPU_PLAYGROUND_SHOT=docs/images/playground.png.
    if (process.env.IMGPU_PLAYGROUND_SHOT) await sharp(await page.screenshot({ fullPage: true })).resize(1200).png({ palette: true }).toFile(process.env.IMGPU_PLAYGROUND_SHOT);

    await t.test('errors: one line naming the step, nothing shown as a result', async () => {
      for (const [chain, pattern] of [
        ['equalize | blur 3', /^pipeline step 2: unknown operation 'blur' \(/],
        ['equalize | threshold --method nope', /^pipeline step 2 \(threshold\): .*method must be one of/],
        ['equalize | morph --se blob:3', /^pipeline step 2 \(morph\): .*blob/],
        ['filter --filter kernel:edge.npy', /^pipeline step 1 \(filter\): kernel:edge\.npy: a web page cannot open a path/],
      ] as const) {
        await runChain(page, chain);
        const line = (await page.textContent('#pipeline-error')) ?? '';
        assert.match(line, pattern, chain);
        assert.doesNotMatch(line, /\n/, 'one line');
        assert.equal(await page.isVisible('#download'), false, `${chain}: no result to download`);
        assert.equal(await page.$$eval('#stages .stage', (els) => els.length), 0);
      }
    });
  });
});

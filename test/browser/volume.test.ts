import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { pixelChecksum as checksum } from '../../src/core/compare.js';
import type { Image } from '../../src/core/image.js';
import { parseParamValue } from '../../src/core/params.js';
import { affineOf, decodeNifti, encodeNifti, readImage } from '../../src/io/index.js';
import { ALL_OPERATIONS, OPERATIONS } from '../../src/ops/registry.js';
import { chromiumOrSkip, launchChromium, NO_WEBGPU, openIdle, pageErrors, runInPage, servePlayground, WEBGPU, withPlayground } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';

const ANATOMICAL = fixture('volumes', 'anatomical.nii');

interface Last { op: string; identical: boolean | null; gpu: string | null; cpu: string | null; gpuError: string | null; cpuError: string | null; slabs: number | null }
interface Loaded { name: string; shape: number[]; dtype: string; geometry: Image['geometry'] | null; checksum: string }

const loaded = (page: Page) => page.evaluate(() => (window as unknown as { __volume: Loaded }).__volume);

/** Sets the operation and its form values in the page, runs it, waits for the result. */
const runIn = async (page: Page, op: string, values: Record<string, string>) => (await runInPage(page, op, values)) as unknown as Last;

/** The Node CPU path on the same volume with the same form values (parsed by the declarations, as the page does). */
async function nodeResult(vol: Image, op: string, values: Record<string, string>): Promise<Image> {
  const spec = OPERATIONS[op];
  const params: Record<string, unknown> = {};
  for (const p of spec.params) if (values[p.name] !== undefined) params[p.name] = parseParamValue(p, values[p.name]);
  const out = (await spec.run(vol, params, {})).output;
  return { ...out, geometry: out.geometry ?? vol.geometry };
}

/** The file behind a save link of the page, as downloaded. */
async function saved(page: Page, id: string, dir: string): Promise<{ name: string; bytes: Uint8Array }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#${id}`)]);
  const path = join(dir, download.suggestedFilename());
  await download.saveAs(path);
  return { name: download.suggestedFilename(), bytes: readFileSync(path) };
}

/**
 * The page's result saved as NIfTI and read back by Node: the data agree with Node's CPU result by the operation's
 * comparison (bit for bit where it compares so), and the header — geometry included — is byte for byte the one
 * Node's writer makes of Node's result.
 */
async function checkSaved(page: Page, dir: string, expected: Image, op: string): Promise<void> {
  const nii = await saved(page, 'save', dir);
  const gz = await saved(page, 'save-gz', dir);
  assert.match(nii.name, new RegExp(`-${op}\\.nii$`));
  assert.match(gz.name, new RegExp(`-${op}\\.nii\\.gz$`));
  const back = decodeNifti(nii.bytes, nii.name);
  const cmp = OPERATIONS[op].compare(expected, back);
  assert.ok(cmp.identical, `the saved ${op} result differs from Node's: ${JSON.stringify(cmp)}`);
  assert.deepEqual(Buffer.from(nii.bytes.subarray(0, 352)), Buffer.from(encodeNifti(expected, false).subarray(0, 352)), 'the header (shape, dtype, pixdim, sform) is the Node writer\'s');
  assert.deepEqual(affineOf(back.geometry!), affineOf(decodeNifti(encodeNifti(expected, false), 'node').geometry!), 'the affine read back is Node\'s');
  assert.equal(checksum(decodeNifti(gz.bytes, gz.name)), checksum(back), 'the .nii.gz holds the same volume');
}

/**
 * The volume page in headless Chromium on WebGPU (SwiftShader): a real MR scan (nibabel's anatomical.nii, 33×41×25)
 * opened and read as Node reads it, the three views, the 3D filters and 3D morphology on the GPU and in the CPU
 * worker equal to Node's CPU path, the result saved as NIfTI and read back by Node; in slabs at a lowered binding
 * limit; a DICOM series opened from its files and from its folder; bad files refused on one line.
 */
test('volume page: NIfTI and DICOM in, 3D filters and morphology on WebGPU and the CPU worker equal to Node, NIfTI out', { timeout: 600_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { server, url } = await servePlayground();
  const browser = await launchChromium(WEBGPU);
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-volume-page-'));
  const anatomical = await readImage(ANATOMICAL);
  try {
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    const errors = pageErrors(page);
    await openIdle(page, `${url}volume.html`);
    const statusLine = (await page.textContent('#status')) ?? '';
    assert.match(statusLine, /^WebGPU: /, `the page found no WebGPU adapter: ${statusLine}`);

    await t.test('the operations are the registry\'s that declare volumes, the 3D filters and morphology among them', async () => {
      const offered = await page.$$eval('#op option', (os) => os.map((o) => (o as HTMLOptionElement).value));
      assert.deepEqual(offered, Object.keys(OPERATIONS).filter((n) => ALL_OPERATIONS[n].input.volumes));
      assert.ok(offered.includes('filter') && offered.includes('morph') && !offered.includes('clahe'), offered.join());
    });

    await t.test('the page opens on a real scan, read as Node reads it (voxels, shape, geometry)', async () => {
      const v = await loaded(page);
      assert.equal(v.name, 'anatomical.nii');
      assert.deepEqual(v.shape, anatomical.shape);
      assert.equal(v.dtype, anatomical.dtype);
      assert.deepEqual(v.geometry, anatomical.geometry);
      assert.equal(v.checksum, checksum(anatomical));
      assert.match((await page.textContent('#insize')) ?? '', /^anatomical\.nii: 33×41×25 float32, /);
    });

    await t.test('axial, coronal and sagittal views: slice size and slider follow the axis', async () => {
      const [d, h, w] = anatomical.shape as number[];
      for (const [axis, cols, rows, count] of [['coronal', w, d, h], ['sagittal', h, d, w], ['axial', w, h, d]] as const) {
        await page.selectOption('#axis', axis);
        assert.deepEqual(await page.$eval('#in', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]), [cols, rows], axis);
        assert.equal(await page.$eval('#slice', (s) => (s as HTMLInputElement).max), String(count - 1), axis);
      }
      // Window/level: a window of 1 at the level of the volume's maximum leaves only the brightest voxels white.
      let max = -Infinity;
      for (const v of anatomical.data) max = Math.max(max, v);
      await page.fill('#in-window', '1');
      await page.fill('#in-level', String(max + 0.5));
      const white = await page.$eval('#in', (c) => {
        const cv = c as HTMLCanvasElement;
        const px = cv.getContext('2d')!.getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i] > 0) n++;
        return n;
      });
      assert.ok(white < 20, `${white} voxels above black at a window beyond the maximum`);
      await page.fill('#in-window', '');
      await page.fill('#in-level', '');
    });

    // 'valid' shrinks the volume and moves its origin: the saved geometry is the filter's, not the input's.
    for (const [op, values] of [['filter', { filter: 'gauss:1.5' }], ['filter', { filter: 'sobel', border: 'valid' }], ['morph', { op: 'close', se: 'box:3x3x3' }]] as const) {
      await t.test(`${op} ${JSON.stringify(values)} on the scan: GPU and CPU worker equal Node's CPU path; saved NIfTI read back by Node`, async () => {
        const r = await runIn(page, op, values);
        const expected = await nodeResult(anatomical, op, values);
        assert.equal(r.gpuError, null, 'the GPU runs it');
        assert.equal(r.cpu, checksum(expected), 'the CPU worker\'s result is Node\'s, bit for bit');
        assert.equal(r.identical, true, `GPU and CPU agree in the page: ${await page.textContent('#verdict')}`);
        if (op === 'morph') assert.equal(r.gpu, checksum(expected), 'morphology on the GPU is Node\'s, bit for bit');
        const [d, h, w] = expected.shape as number[];
        assert.ok((await page.textContent('#outwhich'))?.startsWith(`GPU: ${w}×${h}×${d} float32, `), (await page.textContent('#outwhich')) ?? '');
        await checkSaved(page, dir, expected, op);
      });
    }

    await t.test('a DICOM series opened from its files (in any order) and from its folder, as Node reads the folder', async () => {
      const series = fixture('volumes', 'ct-series');
      const node = await readImage(series);
      const files = readdirSync(series).reverse().map((f) => join(series, f));
      for (const [input, what] of [['#file', files], ['#folder', series]] as const) {
        await page.setInputFiles('#file', ANATOMICAL);
        await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('anatomical.nii'));
        await page.setInputFiles(input, what);
        await page.waitForFunction(() => !document.getElementById('insize')?.textContent?.startsWith('anatomical.nii'));
        assert.equal(await page.textContent('#upload-error'), '', `${input}: no error`);
        const v = await loaded(page);
        assert.deepEqual([v.shape, v.dtype, v.checksum], [node.shape, node.dtype, checksum(node)], `${input}: the voxels Node reads`);
        assert.deepEqual(v.geometry, node.geometry, `${input}: the geometry Node reads`);
        assert.match((await page.textContent('#insize')) ?? '', input === '#folder' ? /^ct-series: 128×128×6 float32/ : /^6 files: 128×128×6 float32/);
      }
      const r = await runIn(page, 'morph', { op: 'erode', se: 'box:3x3x3' });
      assert.equal(r.gpu, checksum(await nodeResult(node, 'morph', { op: 'erode', se: 'box:3x3x3' })));
      assert.equal(r.cpu, r.gpu);
    });

    await t.test('a DICOM series dropped on the page (its files, in any order) opens as Node reads it', async () => {
      const series = fixture('volumes', 'ct-series');
      const node = await readImage(series);
      await page.setInputFiles('#file', ANATOMICAL);
      await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('anatomical.nii'));
      const files = readdirSync(series).map((f) => ({ name: f, b64: readFileSync(join(series, f)).toString('base64') }));
      const dt = await page.evaluateHandle((fs) => {
        const d = new DataTransfer();
        for (const f of fs) d.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
        return d;
      }, files);
      await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
      await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('6 files'));
      const v = await loaded(page);
      assert.deepEqual([v.shape, v.checksum, v.geometry], [node.shape, checksum(node), node.geometry]);
    });

    await t.test('a gzipped NIfTI (.nii.gz, inflated in the page by the reader) opened as Node reads it; a 4D one refused', async () => {
      const gz = fixture('volumes', 'standard.nii.gz');
      const node = await readImage(gz);
      await page.setInputFiles('#file', gz);
      await page.waitForFunction(() => document.getElementById('insize')?.textContent?.startsWith('standard.nii.gz'));
      const v = await loaded(page);
      assert.deepEqual([v.shape, v.dtype, v.checksum, v.geometry], [node.shape, node.dtype, checksum(node), node.geometry]);
      await page.setInputFiles('#file', fixture('volumes', 'example_nifti2.nii.gz'));
      await page.waitForFunction(() => document.getElementById('upload-error')?.textContent);
      assert.match((await page.textContent('#upload-error')) ?? '', /^example_nifti2\.nii\.gz is a .* series of volumes; imgpu reads one 3D volume/);
      await page.evaluate(() => { document.getElementById('upload-error')!.textContent = ''; });
    });

    await t.test('bad files: one line beside the drop zone naming the file; the volume and the status line stay', async () => {
      const before = await page.textContent('#insize');
      const truncated = join(dir, 'truncated.nii');
      writeFileSync(truncated, readFileSync(ANATOMICAL).subarray(0, 5000));
      const png = fixture('images', 'coins.png');
      const gz = join(dir, 'broken.nii.gz');
      writeFileSync(gz, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.alloc(40, 7)]));
      for (const [file, message] of [[truncated, /^truncated\.nii is truncated: /], [png, /^coins\.png is neither a NIfTI file \(\.nii, \.nii\.gz\) nor DICOM$/], [gz, /^broken\.nii\.gz: corrupt gzip stream/]] as const) {
        await page.setInputFiles('#file', file);
        await page.waitForFunction(() => document.getElementById('upload-error')?.textContent);
        const line = (await page.textContent('#upload-error')) ?? '';
        assert.match(line, message);
        assert.ok(!line.includes('\n'), 'one line');
        assert.equal(await page.textContent('#insize'), before, 'the volume shown stays');
        assert.equal(await page.textContent('#status'), statusLine, 'the status line stays');
        await page.evaluate(() => { document.getElementById('upload-error')!.textContent = ''; });
      }
    });

    await t.test('the screenshot (docs/images/volume.png with IMGPU_VOLUME_SHOT) shows the scan and a result', async () => {
      await page.setInputFiles('#file', ANATOMICAL);
      await page.waitForSelector('body[data-state="ready"]');
      await page.selectOption('#axis', 'sagittal');
      await page.$eval('#slice', (s) => { (s as HTMLInputElement).value = '16'; s.dispatchEvent(new Event('input')); });
      await runIn(page, 'filter', { filter: 'gauss:1.5' });
      const shot = await page.screenshot();
      if (process.env.IMGPU_VOLUME_SHOT) await sharp(shot).resize(1000).png({ palette: true }).toFile(process.env.IMGPU_VOLUME_SHOT);
      const stats = await sharp(shot).stats();
      assert.ok(stats.channels[0].stdev > 20, `the screenshot looks blank (stdev ${stats.channels[0].stdev})`);
    });
    assert.deepEqual(errors, []);

    await t.test('past a lowered binding limit (?maxStorageBufferBindingSize=98304, the scan is 135 KB) the GPU runs it in slabs, equal to Node', async () => {
      const small = await browser.newPage();
      try {
        await openIdle(small, `${url}volume.html?maxStorageBufferBindingSize=98304`);
        for (const [op, values] of [['filter', { filter: 'gauss:1.5' }], ['morph', { op: 'close', se: 'box:3x3x3' }]] as const) {
          const r = await runIn(small, op, values);
          const timings = (await small.textContent('#timings')) ?? '';
          t.diagnostic(`${op} at a 96 KiB binding: ${timings.replace(/\n/g, ' | ')}`);
          assert.equal(r.gpuError, null, `${op}: the GPU runs it`);
          assert.ok((r.slabs ?? 0) > 1, `${op}: in slabs (${r.slabs})`);
          assert.match(timings, /gpu +total .*, \d+ slabs/);
          const expected = await nodeResult(anatomical, op, values);
          assert.equal(r.cpu, checksum(expected));
          assert.equal(r.identical, true, `${op}: GPU in slabs and CPU agree`);
          await checkSaved(small, dir, expected, op);
        }
      } finally {
        await small.close();
      }
    });
  } finally {
    await browser.close();
    server.kill();
  }
});

test('volume page without WebGPU: one line says so; the CPU worker runs and its result keeps the filter\'s geometry', { timeout: 300_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-volume-cpu-'));
  await withPlayground(NO_WEBGPU, async (browser, url) => {
    const page = await browser.newPage();
    await openIdle(page, `${url}volume.html`);
    assert.match((await page.textContent('#status')) ?? '', /^WebGPU is not available in this browser .*: running on the CPU only$/);
    assert.equal(await page.textContent('#run'), 'Run on the CPU');
    const values = { filter: 'gauss:1', border: 'valid' };
    const r = await runIn(page, 'filter', values);
    const expected = await nodeResult(await readImage(ANATOMICAL), 'filter', values);
    assert.deepEqual([r.gpu, r.cpu], [null, checksum(expected)]);
    await checkSaved(page, dir, expected, 'filter');
  });
});

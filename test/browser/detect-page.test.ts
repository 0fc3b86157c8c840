import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { imageFrom } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { parseClassifierXml } from '../../src/ops/detect/classifier-xml.js';
import { detect, type DetectOptions } from '../../src/ops/detect/index.js';
import { fixture } from '../helpers/fixtures.js';
import { chromiumOrSkip, launchChromium, openIdle, pageErrors, QUIET, servePlayground, WEBGPU } from '../helpers/browser.js';

/** A processed frame as the page reports it (playground/detect.ts FrameRecord). */
interface FrameRecord {
  backend: 'gpu' | 'cpu';
  source: string;
  width: number;
  height: number;
  pixels: string;
  boxes: { x: number; y: number; width: number; height: number }[];
  classifier: string;
  options: DetectOptions;
  upload: string;
}

/** Photographs with faces (the detection fixtures), 320×240 each, fitted and padded, as OpenCV finds faces in all three. */
const PHOTOS = ['astronaut.png', 'lfw_mosaic.png', 'frame_640x352.png'];

/**
 * A clip of the photographs, 1 s each at 10 frames/s, made by ffmpeg: a .y4m for Chromium's fake camera, or
 * another container by the name's extension (a .webm for the page's video file input).
 */
function photoClip(path: string): string {
  const inputs = PHOTOS.flatMap((p) => ['-loop', '1', '-t', '1', '-i', fixture('detect', p)]);
  const fit = PHOTOS.map((_, i) => `[${i}]scale=320:240:force_original_aspect_ratio=decrease,pad=320:240:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=10[v${i}]`);
  const graph = `${fit.join(';')};${PHOTOS.map((_, i) => `[v${i}]`).join('')}concat=n=${PHOTOS.length}:v=1:a=0,format=yuv420p`;
  const codec = path.endsWith('.webm') ? ['-c:v', 'libvpx', '-b:v', '1M'] : [];
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...inputs, '-filter_complex', graph, ...codec, path], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`ffmpeg could not make ${path}: ${r.error?.message ?? r.stderr}`);
  return path;
}

const FACE = fixture('detect', 'lbpcascade_frontalface.xml');

/**
 * The Node detector (the detect operation, on the CPU) on the frame's own pixels with the page's options and
 * classifier (the bundled one, or a detection fixture the test chose in the page: the same file).
 */
async function nodeBoxes(r: FrameRecord): Promise<FrameRecord['boxes']> {
  const img = imageFrom(new Uint8Array(Buffer.from(r.pixels, 'base64')), [r.height, r.width], 4);
  const file = fixture('detect', r.classifier);
  const classifier = parseClassifierXml(readFileSync(file, 'utf8'), file);
  const out = (await detect(img, classifier, r.options)).output;
  return out.detections.map(({ x, y, width, height }) => ({ x, y, width, height }));
}

/**
 * The next frame the page processes on `backend` after `trigger` (the waiter is registered before the trigger
 * runs: evaluate's body runs up to its first await when it arrives, before the next command).
 */
async function frameAfter(page: Page, backend: 'gpu' | 'cpu', trigger: () => Promise<unknown> = async () => undefined): Promise<FrameRecord> {
  const next = page.evaluate(async (b) => {
    const d = (window as unknown as { __detect: { next(): Promise<FrameRecord> } }).__detect;
    for (;;) {
      const r = await d.next();
      if (r.backend === b) return r;
    }
  }, backend);
  await trigger();
  return next;
}

/** The page's exceptions and console errors as they come: the detect page logs none in a good run. */
function pageProblems(page: Page): string[] {
  const problems = pageErrors(page, 'exception: ');
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  return problems;
}

/** Frames on one backend, each equal to the Node detector on its pixels; the boxes they found. */
async function checkFrames(page: Page, backend: 'gpu' | 'cpu', n: number, what: string): Promise<FrameRecord[]> {
  const got: FrameRecord[] = [];
  for (let i = 0; i < n; i++) {
    const r = await frameAfter(page, backend);
    assert.equal(r.backend, backend);
    assert.equal(r.pixels.length > 0, true, `${what}: the page exposes the frame's pixels`);
    assert.deepEqual(r.boxes, await nodeBoxes(r), `${what}, ${backend} frame ${i}: the page's boxes differ from the Node detector's on the same pixels`);
    got.push(r);
  }
  return got;
}

/**
 * The live detection page in headless Chromium (WebGPU on SwiftShader; with ANGLE and Vulkan on SwiftShader too,
 * video frames can go to WebGPU: without them Chromium refuses to import or copy them, and with ANGLE alone the
 * import loses the device), with a fake camera fed from a clip of
 * photographs with faces: on the camera, a video file and an image, on the GPU and on the CPU, each frame's boxes
 * equal the Node detector's on the pixels that frame had in the page.
 */
test('detect page: camera, video file and image, GPU and CPU, boxes equal to the Node detector on the same frame', { timeout: 600_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-detect-page-'));
  const camera = photoClip(join(dir, 'camera.y4m'));
  const { server, url } = await servePlayground();
  const browser = await launchChromium([...WEBGPU, '--use-gl=angle', '--use-angle=swiftshader', '--enable-features=Vulkan', '--use-vulkan=swiftshader',
    '--autoplay-policy=no-user-gesture-required', '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-video-capture=${camera}`]);
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 860 } });
    const problems = pageProblems(page);
    await openIdle(page, `${url}detect.html`);
    assert.match((await page.textContent('#status')) ?? '', /^WebGPU: /);
    assert.match((await page.textContent('#classifier-name')) ?? '', /^lbpcascade_frontalface\.xml \(bundled\): 139 weak classifiers, window 24×24/);

    await t.test('the camera: frames imported from the video element, boxes equal to Node on GPU and CPU; fps and kernel times shown', async () => {
      const first = await frameAfter(page, 'gpu', () => page.click('#camera'));
      assert.equal(first.source.endsWith('camera.y4m'), true, `the fake camera is the source (${first.source})`);
      assert.deepEqual([first.width, first.height], [320, 240]);
      assert.match(first.upload, /^importExternalTexture /, 'the frame went to the GPU as an external texture, no canvas');
      const gpu = await checkFrames(page, 'gpu', 2, 'camera');
      assert.match((await page.textContent('#fps')) ?? '', /^\d+\.\d fps · \d+ box(es)? · GPU$/);
      assert.match((await page.textContent('#timings')) ?? '', /gpu +total .*\n.*detect\.pyramid rows .* detect\.stage 0 .* detect\.final /, 'each kernel\'s time');
      await page.check('#backend-cpu');
      const cpu = await checkFrames(page, 'cpu', 3, 'camera');
      assert.match((await page.textContent('#timings')) ?? '', /cpu +total .*\n.*detect\.pyramid \(cpu\) .* detect\.scan \(cpu\)/);
      assert.match(cpu[0].upload, /^canvas /);
      // The clip's photographs all hold faces: a page that saw black frames would find none.
      for (const [b, frames] of [['GPU', gpu], ['CPU', cpu]] as const) assert.ok(frames.some((f) => f.boxes.length > 0), `no face in the ${b} frames`);
      await page.check('#backend-gpu');
    });

    await t.test('a video file: frames imported, boxes equal to Node on GPU and CPU', async () => {
      const clip = photoClip(join(dir, 'clip.webm'));
      const first = await frameAfter(page, 'gpu', () => page.setInputFiles('#file', clip));
      assert.equal(first.source, 'clip.webm');
      assert.match(first.upload, /^importExternalTexture /);
      const gpu = await checkFrames(page, 'gpu', 2, 'clip.webm');
      await page.check('#backend-cpu');
      const cpu = await checkFrames(page, 'cpu', 2, 'clip.webm');
      for (const [b, frames] of [['GPU', gpu], ['CPU', cpu]] as const) assert.ok(frames.some((f) => f.boxes.length > 0), `no face in the ${b} frames`);
      await page.check('#backend-gpu');
    });

    await t.test('an image: copied to the GPU unchanged, boxes equal to Node on the PNG on GPU and CPU; the screenshot', async () => {
      const png = fixture('detect', 'frame_640x352.png');
      const photo = await readImage(png);
      const expected = (await detect(photo, parseClassifierXml(readFileSync(FACE, 'utf8'), FACE))).output.detections.map(({ x, y, width, height }) => ({ x, y, width, height }));
      const gpu = await frameAfter(page, 'gpu', () => page.setInputFiles('#file', png));
      assert.match(gpu.upload, /^copyExternalImageToTexture /);
      const px = Buffer.from(gpu.pixels, 'base64');
      assert.ok(photo.data.every((v, i) => px[4 * i] === v && px[4 * i + 1] === v && px[4 * i + 2] === v), 'the GPU got the PNG\'s pixels exactly');
      assert.deepEqual(gpu.boxes, expected);
      assert.equal(expected.length > 10, true);
      const shot = await page.screenshot();
      // The docs' screenshot is taken here: IMGPU_DETECT_SHOT=docs/images/detect.png.
      if (process.env.IMGPU_DETECT_SHOT) await sharp(shot).resize(1000).png({ palette: true, colours: 64 }).toFile(process.env.IMGPU_DETECT_SHOT);
      assert.ok((await sharp(shot).stats()).channels[0].stdev > 20, 'the screenshot looks blank');
      const cpu = await frameAfter(page, 'cpu', () => page.check('#backend-cpu'));
      assert.deepEqual(cpu.boxes, expected);
      await page.check('#backend-gpu');
    });

    await t.test('a user\'s classifier XML: parsed as in Node; a bad one is one line and detection goes on with the previous', async () => {
      const bad = join(dir, 'bad.xml');
      writeFileSync(bad, '<opencv_storage><cascade><featureType>HAAR</featureType></cascade></opencv_storage>');
      await page.setInputFiles('#classifier-file', bad);
      await page.waitForFunction(() => document.getElementById('error')?.textContent);
      assert.match((await page.textContent('#error')) ?? '', /^bad\.xml: /);
      assert.match((await page.textContent('#classifier-name')) ?? '', /^lbpcascade_frontalface\.xml/, 'the previous classifier stays');
      const wald = fixture('detect', 'handmade_waldboost.xml');
      const r = await frameAfter(page, 'gpu', () => page.setInputFiles('#classifier-file', wald));
      assert.equal(r.classifier, 'handmade_waldboost.xml');
      assert.equal(await page.textContent('#error'), '', 'a good file clears the error line');
      assert.deepEqual(r.boxes, await nodeBoxes(r));
    });

    await t.test('from a video file back to the camera: the camera plays on (stopping the file does not pause it)', async () => {
      const clip = join(dir, 'clip.webm');
      await frameAfter(page, 'gpu', () => page.setInputFiles('#file', clip));
      const r = await frameAfter(page, 'gpu', () => page.click('#camera'));
      assert.equal(r.source.endsWith('camera.y4m'), true);
      assert.equal(await page.$eval('#media video', (v) => (v as HTMLVideoElement).paused), false, 'the camera\'s video is playing');
      await checkFrames(page, 'gpu', 1, 'camera again');
    });

    await t.test('a refused option is one line, and the detector keeps the previous options', async () => {
      await page.fill('#opt-scale', '0.9');
      await page.dispatchEvent('#opt-scale', 'change');
      await page.waitForFunction(() => document.getElementById('error')?.textContent);
      assert.match((await page.textContent('#error')) ?? '', /scale/);
    });
    assert.deepEqual(problems, [], 'no exception or error in the console');
  } finally {
    await browser.close();
    server.kill();
  }
});

/**
 * Without a camera, with the camera refused, or with a file the browser cannot play or decode, the page says so
 * in one line (no exception in the console).
 */
test('detect page: no camera, permission denied, a video or image the browser cannot read', { timeout: 300_000 }, async (t) => {
  if (!chromiumOrSkip(t)) return;
  const { server, url } = await servePlayground();
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-detect-page-errors-'));
  try {
    // A fake device but no fake permission UI: headless Chromium refuses the request. A fake UI but no device: none found.
    for (const [flag, message] of [['--use-fake-device-for-media-stream', /^camera: permission denied/], ['--use-fake-ui-for-media-stream', /^camera: no camera found$/]] as const) {
      const browser = await launchChromium([...QUIET, '--disable-webgpu', flag]);
      try {
        const page = await browser.newPage();
        const problems = pageProblems(page);
        await openIdle(page, `${url}detect.html`);
        const failsWith = async (action: () => Promise<unknown>, expected: RegExp) => {
          await page.evaluate(() => { document.getElementById('error')!.textContent = ''; });
          await action();
          await page.waitForFunction(() => document.getElementById('error')?.textContent, undefined, { timeout: 30_000 });
          assert.match((await page.textContent('#error')) ?? '', expected, flag);
        };
        await failsWith(() => page.click('#camera'), message);
        if (flag === '--use-fake-device-for-media-stream') {
          writeFileSync(join(dir, 'broken.webm'), 'not a video');
          writeFileSync(join(dir, 'broken.png'), 'not an image');
          await failsWith(() => page.setInputFiles('#file', join(dir, 'broken.webm')), /^broken\.webm: this browser cannot play it/);
          await failsWith(() => page.setInputFiles('#file', join(dir, 'broken.png')), /^broken\.png: this browser cannot decode it$/);
          assert.match((await page.textContent('#source')) ?? '', /^image: astronaut\.png/, 'the sample stays the source');
        }
        assert.deepEqual(problems, [], flag);
      } finally {
        await browser.close();
      }
    }
  } finally {
    server.kill();
  }
});

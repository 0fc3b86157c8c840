/**
 * The live detection page: an LBP cascade or WaldBoost classifier (the bundled lbpcascade_frontalface, or the
 * user's XML, parsed by the same code as in Node) on the camera, a video file or an image, on WebGPU or in a Web
 * Worker on the CPU, with the boxes drawn over the picture, the frames per second and each kernel's time.
 *
 * On the GPU the frames go to the GPU from the video element or the decoded image (frame-upload.ts: an external
 * texture or copyExternalImageToTexture, no canvas round trip); the CPU path reads them through a 2D canvas. One
 * frame is processed at a time: while it runs, the video plays on and the frames in between are skipped.
 *
 * For tests, `window.__detect.next()` resolves with the next processed frame: its RGBA pixels (those the detector
 * read: on the GPU, read back from the GPU buffer), the boxes, the options and the path that took it there.
 */
import type { GpuContext } from '../src/browser.js';
import type { Image } from '../src/browser.js';
import type { ParamSpec } from '../src/browser.js';
import { formatTimings, type Timings } from '../src/browser.js';
import { parseClassifierXml } from '../src/browser.js';
import { Detector, detectorParams, type Classifier, type DetectOptions, type Detection } from '../src/browser.js';
import type { DetectRequest } from './detect-worker.js';
import { paramRow, paramValue } from './form.js';
import { FrameUploader, readPixels, type FrameSource } from './frame-upload.js';
import { pageGpu } from './page-gpu.js';

const BUNDLED = 'lbpcascade_frontalface.xml';
const SAMPLE = 'astronaut.png';
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

type Backend = 'gpu' | 'cpu';

/** What the page detects on: a playing video element (camera or file) or a decoded image. */
interface Source {
  kind: 'camera' | 'video' | 'image';
  name: string;
  media: HTMLVideoElement | ImageBitmap;
  width: number;
  height: number;
  /** Stops the camera, frees the file's URL or the bitmap. */
  stop(): void;
}

/** A processed frame as the tests read it (pixels as base64 RGBA). */
interface FrameRecord {
  backend: Backend;
  source: string;
  width: number;
  height: number;
  channels: 4;
  pixels: string;
  boxes: Pick<Detection, 'x' | 'y' | 'width' | 'height'>[];
  classifier: string;
  options: DetectOptions;
  upload: string;
}

/** The result of one frame on either path. */
interface FrameResult {
  detections: Detection[];
  timings: Timings;
  /** How the frame reached the detector. */
  upload: string;
  /** The RGBA pixels the detector read (kept only when a test asked for the frame). */
  pixels?: Uint8Array;
}

let gpu: GpuContext | undefined;
let uploader: FrameUploader | undefined;
let classifier: { name: string; xml: string; parsed: Classifier } | undefined;
let options: DetectOptions = {};
let gpuDetector: Detector | undefined;
let source: Source | undefined;
/** Bumped when the source changes: a loop of an older source stops. */
let loopToken = 0;
/** Frames, reconfigurations and source changes run one after the other. */
let chain: Promise<unknown> = Promise.resolve();
const waiters: ((r: FrameRecord) => void)[] = [];
const frameTimes: number[] = [];
let frames = 0;

const worker = new Worker(new URL('./detect-worker.js', import.meta.url), { type: 'module' });
let nextId = 0;
interface WorkerReply { id: number; error?: string; detections?: Detection[]; timings?: Timings }
const pending = new Map<number, (m: WorkerReply) => void>();
worker.onmessage = (e: MessageEvent<WorkerReply>) => { pending.get(e.data.id)?.(e.data); pending.delete(e.data.id); };

/** Sends a request to the CPU worker; its error comes back as an Error with the worker's message. */
function ask(req: DetectRequest extends infer R ? R extends unknown ? Omit<R, 'id'> : never : never): Promise<WorkerReply> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
    worker.postMessage({ ...req, id });
  });
}

function enqueue<T>(task: () => Promise<T>): Promise<T> {
  const run = chain.then(task);
  chain = run.catch(() => undefined);
  return run;
}

/** One line for everything that went wrong (no camera, permission denied, bad XML, a failed frame). */
function showError(text: string): void {
  $('error').textContent = text;
}

function status(text: string, warn = false): void {
  $('status').textContent = text;
  $('status').className = warn ? 'warn' : '';
}

const backend = (): Backend => ($<HTMLInputElement>('backend-gpu').checked && gpu ? 'gpu' : 'cpu');

/** Runs a user action: its failure is the page's error line, never an exception in the console. */
function action(f: () => Promise<void>): () => void {
  return () => {
    f().then(() => showError(''), (e: unknown) => showError(e instanceof Error ? e.message : String(e)));
  };
}

// ---- classifier and options ------------------------------------------------------------------------------

/** A field per detector option, from its declaration (the CLI's --scale, --min-neighbors, … with the same checks). */
function optionForm(): void {
  for (const p of detectorParams as readonly ParamSpec[]) {
    const row = paramRow(p, [], 'opt-');
    row.querySelector<HTMLInputElement | HTMLSelectElement>(`#opt-${p.name}`)!.onchange = action(() => configure(classifier));
    $('options').append(row);
  }
}

function readOptions(): DetectOptions {
  const o: Record<string, unknown> = {};
  for (const p of detectorParams as readonly ParamSpec[]) {
    const { value } = paramValue(p, 'opt-');
    if (value !== undefined) o[p.name] = value;
  }
  return o as DetectOptions;
}

/**
 * Builds the detectors (GPU here, CPU in the worker) for a classifier and the form's options, after the frame in
 * progress. Nothing changes if the options or the classifier are refused: the error line says why.
 */
function configure(next: typeof classifier): Promise<void> {
  return enqueue(async () => {
    if (!next) return;
    const opts = readOptions();
    // Profiled: the page shows each kernel's time. The constructor checks the options (the declaration's ranges).
    const d = new Detector(next.parsed, { ...opts, gpu, profile: true });
    await ask({ type: 'classifier', name: next.name, xml: next.xml, options: opts });
    gpuDetector?.close();
    gpuDetector = d;
    classifier = next;
    options = opts;
    $('classifier-name').textContent = `${next.name}${next.name === BUNDLED ? ' (bundled)' : ''}: ${next.parsed.weak.length} weak classifiers, window ${next.parsed.window.width}×${next.parsed.window.height}`;
    frameTimes.length = 0;
    if (source?.kind === 'image') void enqueue(() => frame(source!));
  });
}

/** The classifier of an XML text, parsed as in Node (a bad file is a one-line error naming it). */
function loadClassifier(name: string, xml: string): Promise<void> {
  return configure({ name, xml, parsed: parseClassifierXml(xml, name) });
}

// ---- frames ----------------------------------------------------------------------------------------------

async function gpuFrame(src: Source, keep: boolean): Promise<FrameResult> {
  const up = await uploader!.upload(src.media as FrameSource, src.width, src.height);
  try {
    const r = await gpuDetector!.runGpu(up.image, gpu!);
    const pixels = keep ? ((await up.image.toHost()).data as Uint8Array) : undefined;
    const fellBack = [...uploader!.failed].map(([p, why]) => `${p} failed (${why}); `).join('');
    // The frame was resident when detection started: its upload (import or copy, and the packing kernel's
    // submission) is the uploader's, counted here so that the timing line's total includes it.
    const timings = { ...r.timings, upload: up.ms, total: r.timings.total + up.ms };
    return { detections: r.output.detections, timings, upload: `${fellBack}${up.path} ${up.ms.toFixed(2)} ms`, pixels };
  } finally {
    up.image.release();
  }
}

async function cpuFrame(src: Source): Promise<FrameResult> {
  const img: Image = readPixels(src.media as FrameSource, src.width, src.height);
  const pixels = img.data as Uint8Array;
  const r = await ask({ type: 'frame', data: pixels, width: src.width, height: src.height, channels: 4 });
  return { detections: r.detections!, timings: r.timings!, upload: 'canvas (2D canvas getImageData, to the CPU worker)', pixels };
}

function drawBoxes(src: Source, boxes: Detection[]): void {
  const c = $<HTMLCanvasElement>('boxes');
  if (c.width !== src.width || c.height !== src.height) Object.assign(c, { width: src.width, height: src.height });
  const g = c.getContext('2d')!;
  g.clearRect(0, 0, c.width, c.height);
  g.strokeStyle = '#00ff00';
  g.lineWidth = Math.max(2, Math.round(src.width / 320));
  for (const b of boxes) g.strokeRect(b.x, b.y, b.width, b.height);
}

/** Frames per second over the last second of processed frames. */
function fps(): number {
  const t = performance.now();
  frameTimes.push(t);
  while (frameTimes.length > 2 && frameTimes[0] < t - 1000) frameTimes.shift();
  return frameTimes.length > 1 ? (frameTimes.length - 1) / ((t - frameTimes[0]) / 1000) : 0;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Detects on the source's current frame, draws and reports it. */
async function frame(src: Source): Promise<void> {
  if (src !== source || !classifier) return;
  const b = backend();
  // Those waiting before the frame starts get it (its pixels are kept for them); later ones get the next frame.
  const served = waiters.splice(0);
  let r: FrameResult;
  try {
    r = b === 'gpu' ? await gpuFrame(src, served.length > 0) : await cpuFrame(src);
  } catch (e) {
    waiters.unshift(...served);
    loopToken++; // a failed frame stops the loop: the next would fail the same way
    throw new Error(`${b === 'gpu' ? 'GPU' : 'CPU'} detection failed on ${src.name}: ${(e as Error).message}`);
  }
  if (src !== source) { waiters.unshift(...served); return; }
  drawBoxes(src, r.detections);
  frames++;
  const rate = src.kind === 'image' ? '' : `${fps().toFixed(1)} fps · `;
  $('fps').textContent = `${rate}${r.detections.length} box${r.detections.length === 1 ? '' : 'es'} · ${b.toUpperCase()}`;
  $('upload').textContent = `frame to the detector: ${r.upload}`;
  $('timings').textContent = formatTimings(b, r.timings);
  document.body.dataset.state = 'running';
  showError('');
  const record: FrameRecord = {
    backend: b, source: src.name, width: src.width, height: src.height, channels: 4, pixels: r.pixels && served.length ? base64(r.pixels) : '',
    boxes: r.detections.map(({ x, y, width, height }) => ({ x, y, width, height })), classifier: classifier.name, options, upload: r.upload,
  };
  for (const w of served) w(record);
}

/** The next frame the video presents (requestVideoFrameCallback; a timer where frames are not signalled). */
function nextVideoFrame(video: HTMLVideoElement): Promise<void> {
  return new Promise((resolve) => {
    if (!('requestVideoFrameCallback' in video)) { setTimeout(resolve, 30); return; }
    const timer = setTimeout(() => { video.cancelVideoFrameCallback(id); resolve(); }, 200);
    const id = video.requestVideoFrameCallback(() => { clearTimeout(timer); resolve(); });
  });
}

async function videoLoop(src: Source, token: number): Promise<void> {
  const video = src.media as HTMLVideoElement;
  while (token === loopToken) {
    await nextVideoFrame(video);
    if (token !== loopToken) return;
    try {
      await enqueue(() => frame(src));
    } catch (e) {
      showError((e as Error).message);
      return;
    }
  }
}

// ---- sources ---------------------------------------------------------------------------------------------

/**
 * Shows the source and starts detecting on it; the previous source stops. Each source has an element of its own
 * (a video, or a canvas showing the image) under the boxes: a source that fails to open leaves the current one
 * running, and stopping one cannot pause or reset the next.
 */
function setSource(s: Source, shown: HTMLVideoElement | HTMLCanvasElement): void {
  source?.stop();
  source = s;
  const token = ++loopToken;
  frameTimes.length = 0;
  $('media').replaceChildren(shown);
  drawBoxes(s, []);
  $('source').textContent = `${s.kind}: ${s.name}, ${s.width}×${s.height}`;
  if (s.kind === 'image') void enqueue(() => frame(s)).catch((e: Error) => showError(e.message));
  else void videoLoop(s, token);
}

/** A muted, looping video element for a camera stream or a file. */
function videoElement(): HTMLVideoElement {
  return Object.assign(document.createElement('video'), { muted: true, loop: true, playsInline: true });
}

/** Starts the video element on a stream or a file; rejects with the browser's reason if it cannot play it. */
function playVideo(video: HTMLVideoElement, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = () => reject(new Error(`${what}: this browser cannot play it (${video.error?.message || `media error ${video.error?.code}`})`));
    video.onerror = fail;
    video.onloadeddata = () => { video.onerror = null; video.play().then(resolve, (e: Error) => reject(new Error(`${what}: ${e.message}`))); };
  });
}

/** getUserMedia's failures as the user should read them. */
function cameraError(e: unknown): Error {
  const name = (e as { name?: string }).name;
  const why: Record<string, string> = {
    NotAllowedError: 'permission denied (allow the camera for this page)',
    NotFoundError: 'no camera found',
    OverconstrainedError: 'no camera found',
    NotReadableError: 'the camera cannot be read (in use by another program?)',
  };
  return new Error(`camera: ${why[name ?? ''] ?? (e as Error).message}`);
}

async function openCamera(): Promise<void> {
  if (!navigator.mediaDevices?.getUserMedia) throw new Error('camera: not available on this page (getUserMedia needs https or localhost)');
  let stream: MediaStream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: true, audio: false });
  } catch (e) {
    throw cameraError(e);
  }
  const video = videoElement();
  const stop = () => { for (const t of stream.getTracks()) t.stop(); video.srcObject = null; };
  try {
    video.srcObject = stream;
    await playVideo(video, 'camera');
  } catch (e) {
    stop();
    throw e;
  }
  const label = stream.getVideoTracks()[0]?.label || 'camera';
  setSource({ kind: 'camera', name: label, media: video, width: video.videoWidth, height: video.videoHeight, stop }, video);
}

async function openVideo(f: File): Promise<void> {
  const video = videoElement();
  const url = URL.createObjectURL(f);
  const stop = () => { video.pause(); video.removeAttribute('src'); URL.revokeObjectURL(url); };
  try {
    video.src = url;
    await playVideo(video, f.name);
  } catch (e) {
    stop();
    throw e;
  }
  setSource({ kind: 'video', name: f.name, media: video, width: video.videoWidth, height: video.videoHeight, stop }, video);
}

async function openImage(blob: Blob, name: string): Promise<void> {
  let bmp: ImageBitmap;
  try {
    bmp = await createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    throw new Error(`${name}: this browser cannot decode it`);
  }
  const picture = Object.assign(document.createElement('canvas'), { width: bmp.width, height: bmp.height });
  picture.getContext('2d')!.drawImage(bmp, 0, 0);
  setSource({ kind: 'image', name, media: bmp, width: bmp.width, height: bmp.height, stop: () => bmp.close() }, picture);
}

async function openFile(f: File): Promise<void> {
  if (f.type.startsWith('image/')) await openImage(f, f.name);
  else await openVideo(f);
}

async function fetchText(url: string): Promise<string> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${r.statusText}`);
  return r.text();
}

async function main(): Promise<void> {
  optionForm();
  const opened = await pageGpu();
  status(opened.line, opened.warn);
  if (opened.gpu) {
    gpu = opened.gpu;
    uploader = new FrameUploader(gpu);
  } else {
    $<HTMLInputElement>('backend-gpu').disabled = true;
    $<HTMLInputElement>('backend-cpu').checked = true;
  }
  for (const id of ['backend-gpu', 'backend-cpu']) {
    $(id).onchange = () => { frameTimes.length = 0; if (source?.kind === 'image') void enqueue(() => frame(source!)).catch((e: Error) => showError(e.message)); };
  }
  $('camera').onclick = action(openCamera);
  $('sample').onclick = action(async () => openImage(await (await fetch(`samples/${SAMPLE}`)).blob(), SAMPLE));
  $<HTMLInputElement>('file').onchange = action(async () => { const f = $<HTMLInputElement>('file').files?.[0]; if (f) await openFile(f); });
  $<HTMLInputElement>('classifier-file').onchange = action(async () => {
    const f = $<HTMLInputElement>('classifier-file').files?.[0];
    if (f) await loadClassifier(f.name, await f.text());
  });
  (window as unknown as Record<string, unknown>).__detect = {
    next: () => new Promise<FrameRecord>((resolve) => waiters.push(resolve)),
    frames: () => frames,
  };
  try {
    await loadClassifier(BUNDLED, await fetchText(`samples/${BUNDLED}`));
    await openImage(await (await fetch(`samples/${SAMPLE}`)).blob(), SAMPLE);
    await chain; // the sample's first frame: the page is idle once it shows its boxes
  } catch (e) {
    showError((e as Error).message);
  }
  document.body.dataset.state = 'idle';
}

void main();

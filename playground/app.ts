/**
 * The imgpu playground: open an image, pick an operation, run it on WebGPU (this page) and on the CPU path
 * (a Web Worker), compare. The operation list and each parameter form come from ops/registry.ts and the
 * operations' declared ParamSpecs, so a new operation appears here without page code.
 */
import { pixelChecksum as checksum } from '../src/core/compare.js';
import { InvalidArgumentError } from '../src/core/errors.js';
import type { GpuContext } from '../src/core/gpu/context.js';
import { imageFrom, toGray, type Image } from '../src/core/image.js';
import type { ParamSpec } from '../src/core/params.js';
import { OPERATIONS } from '../src/ops/registry.js';
import { decodeNpy } from '../src/io/npy.js';
import { cpuRunner } from './cpu-client.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';
import { paramRow, paramValue } from './form.js';
import { runBoth } from './run-both.js';
import { pageGpu } from './page-gpu.js';

const SAMPLES = ['camera.png', 'coins.png', 'chelsea.png'];
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

let input: Image | undefined;
let inputName = 'image';
let gpu: GpuContext | undefined;
const runOnCpu = cpuRunner();
/** The files chosen for file parameters (kernel:FILE, mask:FILE), by parameter name, read. */
const chosen = new Map<string, Omit<ChosenFile, 'spec'>>();


function status(text: string, warn = false): void {
  $('status').textContent = text;
  $('status').className = warn ? 'warn' : '';
}

/** Decodes with the browser (createImageBitmap): RGB, or one channel when the image is gray. */
async function decode(blob: Blob): Promise<Image> {
  let bmp: ImageBitmap;
  try {
    bmp = await createImageBitmap(blob, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    throw new Error(`this browser cannot decode ${blob.type || 'this file'}: use PNG or JPEG here (the CLI reads 16-bit PNG/TIFF and .npy)`);
  }
  const c = new OffscreenCanvas(bmp.width, bmp.height);
  const g = c.getContext('2d')!;
  g.drawImage(bmp, 0, 0);
  const rgba = g.getImageData(0, 0, bmp.width, bmp.height).data;
  const n = bmp.width * bmp.height;
  let gray = true;
  for (let i = 0; i < n && gray; i++) gray = rgba[4 * i] === rgba[4 * i + 1] && rgba[4 * i] === rgba[4 * i + 2];
  const data = new Uint8Array(n * (gray ? 1 : 3));
  for (let i = 0; i < n; i++) {
    if (gray) data[i] = rgba[4 * i];
    else { data[3 * i] = rgba[4 * i]; data[3 * i + 1] = rgba[4 * i + 1]; data[3 * i + 2] = rgba[4 * i + 2]; }
  }
  return imageFrom(data, [bmp.height, bmp.width], gray ? 1 : 3);
}

/** A file chosen for a file parameter: text for the extensions its declaration reads as text, else .npy or an image. */
async function readChosen(file: NonNullable<Extract<ParamSpec, { kind: 'string' }>['file']>, f: File): Promise<Omit<ChosenFile, 'spec'>> {
  const ext = f.name.slice(f.name.lastIndexOf('.')).toLowerCase();
  if (file.text?.includes(ext)) return { path: f.name, text: await f.text() };
  if (ext === '.npy') return { path: f.name, image: decodeNpy(new Uint8Array(await f.arrayBuffer()), f.name) };
  return { path: f.name, image: await decode(f) };
}

/** "W×H ×C dtype": width first, as image viewers and the form's WxH fields say it (shape is [H, W]). */
function describe(img: Image): string {
  const [h, w] = img.shape;
  return `${w}×${h}${img.channels > 1 ? ` ×${img.channels}` : ''} ${img.dtype}`;
}

/**
 * The values shown as black..white: the dtype's range for integers; a float result's own min..max (a Sobel or
 * Gaussian result has no fixed range: taken as 0..1 it would be all white).
 */
function displayRange(img: Image): [number, number] {
  if (img.dtype !== 'float32') return [0, img.dtype === 'uint8' ? 255 : 65535];
  let lo = Infinity, hi = -Infinity;
  for (const v of img.data) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}

/** Draws an 8/16-bit or float image (gray or RGB) into a canvas, mapped by displayRange. */
function draw(canvas: HTMLCanvasElement, img: Image): void {
  const [h, w] = img.shape.length === 2 ? img.shape : [img.shape[1], img.shape[2]];
  canvas.width = w;
  canvas.height = h;
  const px = new ImageData(w, h);
  const d = img.data, c = img.channels;
  const [lo, hi] = displayRange(img);
  const s = 255 / Math.max(1e-12, hi - lo);
  for (let i = 0; i < w * h; i++) {
    for (let k = 0; k < 3; k++) px.data[4 * i + k] = (d[i * c + (c === 1 ? 0 : k)] - lo) * s;
    px.data[4 * i + 3] = 255;
  }
  canvas.getContext('2d')!.putImageData(px, 0, 0);
}

/** The 256-bin histogram of the image's gray over displayRange (the range the image is drawn with), as bars. */
function drawHistogram(canvas: HTMLCanvasElement, img: Image): void {
  const g = toGray(img);
  const hist = new Float64Array(256);
  const [lo, hi] = displayRange(g);
  const s = 255 / Math.max(1e-12, hi - lo);
  for (let i = 0; i < g.data.length; i++) hist[Math.max(0, Math.min(255, Math.round((g.data[i] - lo) * s)))]++;
  const max = Math.max(...hist);
  canvas.width = 512;
  canvas.height = 90;
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, 512, 90);
  ctx.fillStyle = '#1f77b4';
  for (let b = 0; b < 256; b++) { const v = (hist[b] / max) * 88; ctx.fillRect(2 * b, 90 - v, 2, v); }
}

/** Removes the previous result (image, histogram, download link) so that it cannot pass for the next one. */
function clearOutput(label: string): void {
  for (const id of ['out', 'outhist']) Object.assign($<HTMLCanvasElement>(id), { width: 0, height: 0 });
  $('outwhich').textContent = label;
  const a = $<HTMLAnchorElement>('download');
  a.style.display = 'none';
  if (a.href) URL.revokeObjectURL(a.href);
  a.removeAttribute('href');
}

/** The picker beside a file parameter: the chosen file is read now and the field then names it (prefix + name). */
function filePicker(param: string, file: NonNullable<Extract<ParamSpec, { kind: 'string' }>['file']>): HTMLInputElement {
  const pick = Object.assign(document.createElement('input'), { type: 'file', id: `param-${param}-file`, title: `a file for ${file.prefix}FILE` });
  pick.onchange = async () => {
    const f = pick.files?.[0];
    if (!f) return;
    try {
      chosen.set(param, await readChosen(file, f));
      $<HTMLInputElement>(`param-${param}`).value = `${file.prefix}${f.name}`;
    } catch (e) {
      chosen.delete(param);
      $('verdict').textContent = `${f.name}: ${(e as Error).message}`;
    }
  };
  return pick;
}

function formFor(name: string): void {
  chosen.clear();
  const op = OPERATIONS[name];
  $('summary').textContent = op.summary;
  const form = $('form');
  form.replaceChildren();
  for (const p of op.params) {
    const picker = p.kind === 'string' && p.file ? [filePicker(p.name, p.file)] : [];
    form.append(paramRow(p, picker));
  }
}

/**
 * The form's values, parsed by each parameter's declaration (empty fields keep the default), and the chosen files
 * they name. A file parameter naming no chosen file is refused: the page cannot open a typed path.
 */
function readParams(name: string): { params: Record<string, unknown>; files: Record<string, ChosenFile> } {
  const params: Record<string, unknown> = {}, files: Record<string, ChosenFile> = {};
  for (const p of OPERATIONS[name].params as readonly ParamSpec[]) {
    const { text: v, value } = paramValue(p);
    if (value !== undefined) params[p.name] = value;
    if (p.kind !== 'string' || !p.file || !v.startsWith(p.file.prefix)) continue;
    const file = chosen.get(p.name);
    if (file?.path !== v.slice(p.file.prefix.length)) {
      throw new InvalidArgumentError(`${v}: a web page cannot open a path; choose the file with the picker beside '${p.name}' (PNG or .npy${p.file.text ? ` or ${p.file.text.join(', ')}` : ''})`);
    }
    files[p.name] = { ...file, spec: v };
  }
  // Loaded here once too, so that a file the operation cannot take (e.g. an RGB mask) is refused before the run.
  withChosenFiles(name, params, files);
  return { params, files };
}

async function setInput(img: Image, name: string): Promise<void> {
  input = img;
  inputName = name.replace(/\.[^.]*$/, '');
  draw($('in'), img);
  drawHistogram($('inhist'), img);
  $('insize').textContent = `${name}: ${describe(img)}`;
  $('upload-error').textContent = '';
  ($('run') as HTMLButtonElement).disabled = false;
  (window as unknown as Record<string, unknown>).__input = checksum(img);
  document.body.dataset.state = 'ready';
}

async function run(): Promise<void> {
  if (!input) return;
  const name = $<HTMLSelectElement>('op').value;
  const op = OPERATIONS[name];
  const img = op.colour ? input : toGray(input);
  clearOutput('');
  let params: Record<string, unknown>, files: Record<string, ChosenFile>;
  try {
    ({ params, files } = readParams(name));
  } catch (e) {
    $('verdict').textContent = (e as Error).message;
    $('outwhich').textContent = 'not run';
    return;
  }
  document.body.dataset.state = 'running';
  ($('run') as HTMLButtonElement).disabled = true;
  $('verdict').textContent = '';
  const t0 = performance.now();
  const tick = setInterval(() => { $('progress').textContent = `running… ${((performance.now() - t0) / 1000).toFixed(1)} s`; }, 100);
  const both = await runBoth(name, img, params, files, gpu, runOnCpu);
  clearInterval(tick);
  $('progress').textContent = `done in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  const { shown, identical } = both;
  $('timings').textContent = both.lines.join('\n');
  $('verdict').textContent = both.verdict.text;
  $('verdict').className = both.verdict.className;
  if (shown) {
    draw($('out'), shown);
    drawHistogram($('outhist'), shown);
    $('outwhich').textContent = `${both.gpu ? 'GPU' : 'CPU'}: ${describe(shown)}${shown.dtype === 'float32' ? `, range ${displayRange(shown).join('…')} shown as black…white` : ''}`;
    $<HTMLCanvasElement>('out').toBlob((blob) => {
      const a = $<HTMLAnchorElement>('download');
      if (!blob) return;
      a.href = URL.createObjectURL(blob);
      a.download = `${inputName}-${name}.png`;
      a.style.display = '';
    });
  } else {
    $('outwhich').textContent = 'failed (see the timings)';
  }
  (window as unknown as Record<string, unknown>).__last = {
    op: name, params, identical, gpu: both.gpu ? checksum(both.gpu.output) : null, cpu: both.cpu ? checksum(both.cpu.output) : null,
    gpuError: both.gpuError, cpuError: both.cpuError,
  };
  ($('run') as HTMLButtonElement).disabled = false;
  document.body.dataset.state = 'done';
}

async function openSample(name: string): Promise<void> {
  try { await setInput(await decode(await (await fetch(`samples/${name}`)).blob()), name); } catch (e) { $('upload-error').textContent = `${name}: ${(e as Error).message}`; }
}

async function main(): Promise<void> {
  const sel = $<HTMLSelectElement>('op');
  for (const name of Object.keys(OPERATIONS)) sel.append(new Option(name, name));
  sel.onchange = () => formFor(sel.value);
  // The page opens on equalize, the simplest operation (the registry lists operations by name, not by choice).
  if (OPERATIONS.equalize) sel.value = 'equalize';
  formFor(sel.value);
  for (const s of SAMPLES) {
    const b = document.createElement('button');
    b.textContent = s;
    b.id = `sample-${s}`;
    b.onclick = () => openSample(s);
    $('samples').append(b);
  }
  const open = async (f: File) => {
    // Upload errors have their own line, beside the drop zone: the status line keeps describing WebGPU.
    try { await setInput(await decode(f), f.name); } catch (e) { $('upload-error').textContent = `${f.name}: ${(e as Error).message}`; }
  };
  $<HTMLInputElement>('file').onchange = (e) => { const f = (e.target as HTMLInputElement).files?.[0]; if (f) void open(f); };
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.className = 'over'; };
  drop.ondragleave = () => { drop.className = ''; };
  drop.ondrop = (e) => { e.preventDefault(); drop.className = ''; const f = e.dataTransfer?.files[0]; if (f) void open(f); };
  $('run').onclick = () => void run();
  const opened = await pageGpu();
  gpu = opened.gpu;
  status(opened.line, opened.warn);
  $('run').textContent = gpu ? 'Run on GPU and CPU' : 'Run on the CPU';
  // The page opens on a sample, not on empty canvases: the first click on Run shows something.
  await openSample(SAMPLES[0]);
  $('outwhich').textContent = `(press “${$('run').textContent}”)`;
  document.body.dataset.state = 'idle';
}

void main();

/**
 * The imgpu playground: open an image (8/16-bit PNG, JPEG, TIFF, .npy), pick an operation or write a pipeline, run
 * it on WebGPU (this page) and on the CPU path (a Web Worker), compare. The operation list and each parameter form
 * come from ops/registry.ts and the operations' declared ParamSpecs, so a new operation appears here without page
 * code; pipelines take the text `imgpu pipeline` takes, parsed by the library.
 */
import { pixelChecksum as checksum, type Comparison } from '../src/browser.js';
import { InvalidArgumentError, UnsupportedDtypeError } from '../src/browser.js';
import type { GpuContext } from '../src/browser.js';
import { toGray, type Image } from '../src/browser.js';
import type { ParamSpec } from '../src/browser.js';
import type { OpResult } from '../src/browser.js';
import type { PipelineStep } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';
import { parseChain, runChain, type Stage } from './chain.js';
import { workerClient } from './cpu-client.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';
import { paramRow, paramValue } from './form.js';
import { ACCEPTED, decodeFile, encodeResult, resultFormat } from './image-files.js';
import { pageGpu } from './page-gpu.js';
import { errorOf, settle, timingLines, valueOf, verdictOf, type Settled } from './run-both.js';

const SAMPLES = ['camera.png', 'coins.png', 'chelsea.png'];
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

let input: Image | undefined;
let inputName = 'image';
let gpu: GpuContext | undefined;
const inWorker = workerClient();
/** The files chosen for file parameters (kernel:FILE, mask:FILE), by parameter name, read. */
const chosen = new Map<string, Omit<ChosenFile, 'spec'>>();
/** The result on screen, encoded only when its download link is clicked (a 16-bit PNG of a large image takes a while). */
let result: { img: Image; name: string } | undefined;


function status(text: string, warn = false): void {
  $('status').textContent = text;
  $('status').className = warn ? 'warn' : '';
}

/** A file chosen for a file parameter: text for the extensions its declaration reads as text, else .npy or an image. */
async function readChosen(file: NonNullable<Extract<ParamSpec, { kind: 'string' }>['file']>, f: File): Promise<Omit<ChosenFile, 'spec'>> {
  const ext = f.name.slice(f.name.lastIndexOf('.')).toLowerCase();
  if (file.text?.includes(ext)) return { path: f.name, text: await f.text() };
  return { path: f.name, image: (await decodeFile(f, f.name)).image };
}

/** "W×H ×C dtype": width first, as image viewers and the form's WxH fields say it (shape is [H, W]). */
function describe(img: Image): string {
  const [h, w] = img.shape;
  return `${w}×${h}${img.channels > 1 ? ` ×${img.channels}` : ''} ${img.dtype}`;
}

/**
 * The values shown as black..white: 0..255 for 8 bits; a 16-bit or float image's own min..max (a 12-bit scan over
 * 0..65535 would be nearly black; a Sobel or Gaussian result has no fixed range: taken as 0..1 it would be white).
 */
function displayRange(img: Image): [number, number] {
  if (img.dtype === 'uint8') return [0, 255];
  let lo = Infinity, hi = -Infinity;
  for (const v of img.data) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}

/** ", range lo…hi shown as black…white" where the range is the image's own (see displayRange). */
function rangeNote(img: Image): string {
  return img.dtype === 'uint8' ? '' : `, range ${displayRange(img).join('…')} shown as black…white`;
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
  $('download').style.display = 'none';
  result = undefined;
}

/** Shows a result: image, histogram, what it is, and its download link (named by what the file will be). */
function showResult(img: Image, label: string, name: string): void {
  draw($('out'), img);
  drawHistogram($('outhist'), img);
  $('outwhich').textContent = `${label}: ${describe(img)}${rangeNote(img)}`;
  result = { img, name };
  const a = $<HTMLAnchorElement>('download');
  a.textContent = `Download result (${resultFormat(img).words})`;
  a.style.display = '';
}

/** Encodes the shown result (16-bit PNG, 8-bit PNG or .npy) and hands it to the browser as a download. */
function download(e: Event): void {
  e.preventDefault();
  if (result) void save(result.img, result.name);
}

async function save(img: Image, name: string): Promise<void> {
  const f = await encodeResult(img);
  const url = URL.createObjectURL(new Blob([f.bytes as Uint8Array<ArrayBuffer>], { type: f.type }));
  Object.assign(document.createElement('a'), { href: url, download: `${name}${f.ext}` }).click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
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

const BUTTONS = ['run', 'run-pipeline'];

function setInput(img: Image, name: string, how: string): void {
  input = img;
  inputName = name.replace(/\.[^.]*$/, '');
  draw($('in'), img);
  drawHistogram($('inhist'), img);
  $('insize').textContent = `${name}: ${describe(img)} (${how})${rangeNote(img)}`;
  $('upload-error').textContent = '';
  for (const b of BUTTONS) $<HTMLButtonElement>(b).disabled = false;
  (window as unknown as Record<string, unknown>).__input = checksum(img);
  document.body.dataset.state = 'ready';
}

/** Runs the GPU path (where there is one) and the CPU worker at once; the Run buttons wait, the progress line ticks. */
async function onBoth<T>(onGpu: (() => Promise<T>) | undefined, onCpu: () => Promise<T>): Promise<[Settled<T> | undefined, Settled<T>]> {
  document.body.dataset.state = 'running';
  for (const b of BUTTONS) $<HTMLButtonElement>(b).disabled = true;
  $('verdict').textContent = '';
  const t0 = performance.now();
  const tick = setInterval(() => { $('progress').textContent = `running… ${((performance.now() - t0) / 1000).toFixed(1)} s`; }, 100);
  // No size check here: past the adapter's binding limit the operations split the work (ranges, row slabs; the
  // timings say how many), and what cannot be split fails with its own message on the GPU line.
  const r = await Promise.all([onGpu ? settle(onGpu()) : undefined, settle(onCpu())]);
  clearInterval(tick);
  $('progress').textContent = `done in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  return r;
}

function finished(last: Record<string, unknown>): void {
  (window as unknown as Record<string, unknown>).__last = last;
  for (const b of BUTTONS) $<HTMLButtonElement>(b).disabled = false;
  document.body.dataset.state = 'done';
}

/** The timings box: each path's timings, or why it has none. */
function showTimings(g: Settled<OpResult<Image>> | undefined, c: Settled<OpResult<Image>>, gpuNote = ''): void {
  $('timings').textContent = timingLines(g, c, gpu, gpuNote).join('\n');
}

/** The verdict line: GPU against CPU where both ran (by the operation's own comparison), else why not. */
function showVerdict(gpuOut: Image | undefined, cpuOut: Image | undefined, compare: (cpu: Image, gpu: Image) => Comparison): boolean | null {
  const v = verdictOf(gpuOut, cpuOut, compare);
  $('verdict').textContent = v.text;
  $('verdict').className = v.className;
  return v.identical;
}

async function run(): Promise<void> {
  if (!input) return;
  const name = $<HTMLSelectElement>('op').value;
  const op = OPERATIONS[name];
  const img = op.colour ? input : toGray(input);
  clearOutput('');
  let params: Record<string, unknown>, files: Record<string, ChosenFile>;
  try {
    // An operation that does not take this image's dtype (equalize of a float .npy) says so before any work.
    if (!op.input.dtypes.includes(img.dtype)) throw new UnsupportedDtypeError(`${name} takes ${op.input.dtypes.join(' or ')} images; this one is ${img.dtype}`);
    ({ params, files } = readParams(name));
  } catch (e) {
    $('verdict').textContent = (e as Error).message;
    $('outwhich').textContent = 'not run';
    return;
  }
  const on = gpu;
  const [g, c] = await onBoth(on && (() => op.run(img, withChosenFiles(name, params, files), { gpu: on, profile: true })), () => inWorker({ op: name, params, files }, img));
  const gpuRes = valueOf(g), cpuRes = valueOf(c);
  showTimings(g, c);
  const identical = showVerdict(gpuRes?.output, cpuRes?.output, (a, b) => op.compare(a, b));
  const shown = gpuRes?.output ?? cpuRes?.output;
  if (shown) showResult(shown, gpuRes ? 'GPU' : 'CPU', `${inputName}-${name}`);
  else $('outwhich').textContent = 'failed (see the timings)';
  finished({
    op: name, params, identical, gpu: gpuRes ? checksum(gpuRes.output) : null, cpu: cpuRes ? checksum(cpuRes.output) : null,
    gpuError: errorOf(g), cpuError: errorOf(c), dtype: shown?.dtype ?? null,
  });
}

/** Each stage of a pipeline run: its image (GPU's where it ran), its times on both paths, whether they agree. */
function showStages(text: string, steps: PipelineStep[], g: Stage[] | undefined, c: Stage[] | undefined): void {
  const words = text.split('|').map((w) => w.trim());
  const ms = (x: number) => x.toFixed(1);
  $('stages').replaceChildren(...steps.map((s, i) => {
    const gs = g?.[i], cs = c?.[i];
    const img = gs?.image ?? cs?.image;
    const canvas = document.createElement('canvas');
    if (img) draw(canvas, img);
    const same = gs && cs ? OPERATIONS[s.op].compare(cs.image, gs.image).identical : undefined;
    const times = [gs && `gpu ${ms(gs.ms)} ms recorded${i < steps.length - 1 ? ` + ${ms(gs.shownMs)} ms to show` : ''}`, cs && `cpu ${ms(cs.ms)} ms`]
      .filter(Boolean).join(' · ') + (same === undefined ? '' : same ? ' · GPU = CPU' : ' · GPU ≠ CPU');
    const box = Object.assign(document.createElement('div'), { className: 'panel stage' });
    box.append(Object.assign(document.createElement('div'), { textContent: `${i + 1}. ${words[i]}${img ? ` → ${describe(img)}` : ''}` }), canvas,
      Object.assign(document.createElement('div'), { className: 'doc', textContent: times }));
    return box;
  }));
}

/**
 * Runs the pipeline text on the GPU (resident between stages) and in the CPU worker. Intermediate stages come to
 * the host only to be shown here (the timings say how long that took); the pipeline downloads once, at the end.
 */
async function runPipelineInPage(): Promise<void> {
  if (!input) return;
  const text = $<HTMLInputElement>('chain').value;
  clearOutput('');
  $('stages').replaceChildren();
  $('pipeline-error').textContent = '';
  let steps: PipelineStep[];
  try {
    steps = parseChain(text);
  } catch (e) {
    $('pipeline-error').textContent = (e as Error).message;
    $('outwhich').textContent = 'not run';
    finished({ chain: text, error: (e as Error).message });
    return;
  }
  const img = input, on = gpu;
  const [g, c] = await onBoth(on && (() => runChain(img, steps, on)), () => inWorker({ chain: text }, img));
  const gpuRes = valueOf(g), cpuRes = valueOf(c);
  const shownMs = (gpuRes?.stages ?? []).reduce((t, s) => t + s.shownMs, 0);
  showTimings(g, c, steps.length > 1 ? `\n      of which ${steps.length - 1} intermediate stage(s) downloaded only to be shown: ${shownMs.toFixed(1)} ms` : '');
  $('pipeline-error').textContent = errorOf(g) ?? errorOf(c) ?? '';
  const identical = showVerdict(gpuRes?.output, cpuRes?.output, (a, b) => OPERATIONS[steps[steps.length - 1].op].compare(a, b));
  if (gpuRes || cpuRes) showStages(text, steps, gpuRes?.stages, cpuRes?.stages);
  const shown = gpuRes?.output ?? cpuRes?.output;
  if (shown) showResult(shown, `${gpuRes ? 'GPU' : 'CPU'} pipeline`, `${inputName}-pipeline`);
  else $('outwhich').textContent = 'failed (see the timings)';
  finished({
    chain: text, identical, gpu: gpuRes ? checksum(gpuRes.output) : null, cpu: cpuRes ? checksum(cpuRes.output) : null,
    gpuError: errorOf(g), cpuError: errorOf(c), dtype: shown?.dtype ?? null,
    stages: steps.map((s, i) => ({ op: s.op, gpu: gpuRes?.stages ? checksum(gpuRes.stages[i].image) : null, cpu: cpuRes?.stages ? checksum(cpuRes.stages[i].image) : null })),
  });
}

/** Opens a file (an upload or a sample): its errors have their own line, beside the drop zone, not the status line. */
async function open(blob: Blob, name: string): Promise<void> {
  try {
    const { image, how } = await decodeFile(blob, name);
    setInput(image, name, how);
  } catch (e) {
    $('upload-error').textContent = `${name}: ${(e as Error).message}`;
  }
}

async function openSample(name: string): Promise<void> {
  await open(await (await fetch(`samples/${name}`)).blob(), name);
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
  $<HTMLInputElement>('file').accept = ACCEPTED;
  $<HTMLInputElement>('file').onchange = (e) => { const f = (e.target as HTMLInputElement).files?.[0]; if (f) void open(f, f.name); };
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.className = 'over'; };
  drop.ondragleave = () => { drop.className = ''; };
  drop.ondrop = (e) => { e.preventDefault(); drop.className = ''; const f = e.dataTransfer?.files[0]; if (f) void open(f, f.name); };
  $('run').onclick = () => void run();
  $('run-pipeline').onclick = () => void runPipelineInPage();
  $('chain').onkeydown = (e) => { if (e.key === 'Enter' && !$<HTMLButtonElement>('run-pipeline').disabled) void runPipelineInPage(); };
  $('download').onclick = download;
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

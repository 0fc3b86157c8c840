/**
 * The playground's volume page: open a NIfTI file or a DICOM series, look at it slice by slice (axial, coronal,
 * sagittal; window/level), run a registry operation that takes volumes (3D filters, 3D morphology, …) on WebGPU
 * and in the CPU worker, compare, and save the result as NIfTI with the input's geometry. Files are decoded by the
 * library's own readers (io/nifti.ts, io/dicom.ts), as in Node. An OME-Zarr is opened over HTTP instead
 * (io/zarr-http.ts): never read whole, each slice is read from the coarsest level to the finest that fits, only
 * the chunks it crosses fetched, so a volume far larger than the tab's memory can be looked through.
 */
import { pixelChecksum as checksum } from '../src/browser.js';
import { FileAccessError, InvalidArgumentError } from '../src/browser.js';
import type { GpuContext } from '../src/browser.js';
import { asShape3D, type Image } from '../src/browser.js';
import type { ParamSpec } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';
import { dicomSeries } from '../src/browser.js';
import { decodeImage, encodeImage } from '../src/browser.js';
import { openZarrUrl, type RemoteOmeZarr, type RemoteZarrLevel, type ZarrRegion } from '../src/browser.js';
import { cpuRunner } from './cpu-client.js';
import { paramRow, paramValue } from './form.js';
import { pageGpu } from './page-gpu.js';
import { runBoth } from './run-both.js';

const SAMPLE = 'anatomical.nii';
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const runOnCpu = cpuRunner();
/** The operations whose declaration takes volumes, by name. */
const VOLUME_OPS = Object.keys(OPERATIONS).filter((n) => OPERATIONS[n].input.volumes);

let gpu: GpuContext | undefined;
let input: Image | undefined;
let inputName = 'volume';
let output: Image | undefined;

type Axis = 'axial' | 'coronal' | 'sagittal';
/** The axis of a [z, y, x] volume each view slices across. */
const AXIS_INDEX: Record<Axis, 0 | 1 | 2> = { axial: 0, coronal: 1, sagittal: 2 };

/**
 * A slice larger than this (voxels) is not read by the 'auto' level: the finest level whose slice fits is the last
 * shown (16 Mi voxels, 64 MB of float32; `volume.html?maxSliceVoxels=N` to change it).
 */
const MAX_SLICE_VOXELS = Number(new URLSearchParams(location.search).get('maxSliceVoxels')) || 4096 * 4096;

/** An OME-Zarr opened over HTTP: the view it shows (or is refining towards) and the last slice read. */
interface Remote {
  vol: RemoteOmeZarr;
  name: string;
  /** `axis:index:level` of the view asked for last: a change reads a new slice, window/level only redraws. */
  view?: string;
  abort?: AbortController;
  shown?: { img: Image; level: number; axis: Axis };
  windowSet: boolean;
}
let remote: Remote | undefined;

/** The voxels of one slice as rows × cols, the row and column spacing, and how many slices the axis has. */
interface Slice { values: Float32Array; rows: number; cols: number; rowMm: number; colMm: number; count: number }

/**
 * Slice `k` of a volume ([z, y, x], x fastest) across `axis`: axial is a z plane (y rows), coronal a y plane and
 * sagittal an x plane (z rows). Rows are drawn from the last index up (z and y upwards on the screen: superior and,
 * for the usual RAS+ orientation, anterior at the top). `k` is clamped to the axis (an output may be smaller).
 */
function sliceOf(img: Image, axis: Axis, k: number): Slice {
  const [d, h, w] = asShape3D(img.shape);
  const [sx, sy, sz] = img.geometry?.spacing ?? [1, 1, 1];
  const count = axis === 'axial' ? d : axis === 'coronal' ? h : w;
  const i = Math.max(0, Math.min(count - 1, k));
  const [rows, cols, rowMm, colMm] = axis === 'axial' ? [h, w, sy, sx] : axis === 'coronal' ? [d, w, sz, sx] : [d, h, sz, sy];
  const at = (r: number, c: number): number => {
    const up = rows - 1 - r;
    if (axis === 'axial') return (i * h + up) * w + c;
    if (axis === 'coronal') return (up * h + i) * w + c;
    return (up * h + c) * w + i;
  };
  const values = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) values[r * cols + c] = img.data[at(r, c)];
  return { values, rows, cols, rowMm, colMm, count };
}

/** The window (width) and level (centre) that show the whole of an image's range. */
function fullWindow(img: Image): { window: number; level: number } {
  let lo = Infinity, hi = -Infinity;
  for (const v of img.data) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return { window: Math.max(hi - lo, 1e-6), level: (lo + hi) / 2 };
}

/** Draws a slice, window/level mapped to black…white, at its physical aspect (voxel spacing) in a 400 px box. */
function drawSlice(canvas: HTMLCanvasElement, s: Slice, window: number, level: number): void {
  canvas.width = s.cols;
  canvas.height = s.rows;
  const px = new ImageData(s.cols, s.rows);
  const lo = level - window / 2, scale = 255 / Math.max(window, 1e-12);
  for (let i = 0; i < s.values.length; i++) {
    const g = Math.max(0, Math.min(255, (s.values[i] - lo) * scale));
    px.data[4 * i] = px.data[4 * i + 1] = px.data[4 * i + 2] = g;
    px.data[4 * i + 3] = 255;
  }
  canvas.getContext('2d')!.putImageData(px, 0, 0);
  const wMm = s.cols * s.colMm, hMm = s.rows * s.rowMm, fit = 400 / Math.max(wMm, hMm);
  Object.assign(canvas.style, { width: `${Math.round(wMm * fit)}px`, height: `${Math.round(hMm * fit)}px` });
}

/** The number in a window/level field (NaN when cleared: then the image's full range is used). */
const fieldNumber = (id: string) => $<HTMLInputElement>(id).valueAsNumber;

/** Draws a panel's slice of `img` with the panel's window/level fields (the image's whole range where they are empty). */
function drawPanel(which: 'in' | 'out', s: Slice, img: Image): void {
  const full = fullWindow(img);
  const w = fieldNumber(`${which}-window`), l = fieldNumber(`${which}-level`);
  drawSlice($(which), s, Number.isFinite(w) && w > 0 ? w : full.window, Number.isFinite(l) ? l : full.level);
}

/** Redraws the slice the view controls point at, in the input and (when there is one) the output. */
function redraw(): void {
  if (remote) { redrawRemote(remote); return; }
  if (!input) return;
  const axis = $<HTMLSelectElement>('axis').value as Axis;
  const k = $<HTMLInputElement>('slice').valueAsNumber;
  const s = sliceOf(input, axis, k);
  $<HTMLInputElement>('slice').max = String(s.count - 1);
  $('sliceno').textContent = `${Math.min(k, s.count - 1) + 1} / ${s.count}`;
  drawPanel('in', s, input);
  if (output) drawPanel('out', sliceOf(output, axis, k), output);
}

/** Sets a panel's window/level fields to show its image's whole range. */
function resetWindow(which: 'in' | 'out', img: Image): void {
  const { window, level } = fullWindow(img);
  $<HTMLInputElement>(`${which}-window`).value = String(+window.toPrecision(6));
  $<HTMLInputElement>(`${which}-level`).value = String(+level.toPrecision(6));
}

/** "W×H×D dtype, a×b×c mm": width first, as the main page says sizes. */
function describe(img: Pick<Image, 'shape' | 'dtype' | 'geometry'>): string {
  const [d, h, w] = asShape3D(img.shape);
  const mm = img.geometry ? `, ${img.geometry.spacing.map((v) => +v.toFixed(3)).join('×')} mm` : '';
  return `${w}×${h}×${d} ${img.dtype}${mm}`;
}

/** Removes the previous result (image, save links) so that it cannot pass for the next one. */
function clearOutput(label: string): void {
  output = undefined;
  Object.assign($<HTMLCanvasElement>('out'), { width: 0, height: 0 });
  $('outwhich').textContent = label;
  for (const id of ['save', 'save-gz']) {
    const a = $<HTMLAnchorElement>(id);
    a.style.display = 'none';
    if (a.href) URL.revokeObjectURL(a.href);
    a.removeAttribute('href');
  }
}

function setInput(img: Image, name: string): void {
  closeRemote();
  input = img;
  inputName = name.replace(/\.nii(\.gz)?$|\.dcm$/i, '');
  clearOutput(`(press “${$('run').textContent}”)`);
  $('insize').textContent = `${name}: ${describe(img)}`;
  $('upload-error').textContent = '';
  const [d] = asShape3D(img.shape);
  $<HTMLInputElement>('slice').value = String(Math.floor(d / 2));
  $<HTMLSelectElement>('axis').value = 'axial';
  resetWindow('in', img);
  redraw();
  ($('run') as HTMLButtonElement).disabled = false;
  (window as unknown as Record<string, unknown>).__volume = { name, shape: img.shape, dtype: img.dtype, geometry: img.geometry ?? null, checksum: checksum(img) };
  document.body.dataset.state = 'ready';
}

/** A name for a set of files in messages: the one file's, or the folder's they came from, or a count. */
function nameOf(files: readonly File[]): string {
  if (files.length === 1) return files[0].name;
  const folder = files[0].webkitRelativePath.split('/')[0];
  return folder && files.every((f) => f.webkitRelativePath.startsWith(`${folder}/`)) ? folder : `${files.length} files`;
}

/**
 * The volume in `files`: one .nii/.nii.gz file (gzip inflated by the reader), else the DICOM slices among them
 * (one series; other files ignored, as for a folder in Node).
 */
async function readVolume(files: readonly File[], name: string): Promise<Image> {
  if (files.length === 1 && /\.nii(\.gz)?$/i.test(files[0].name)) return decodeImage(new Uint8Array(await files[0].arrayBuffer()), { name: files[0].name, format: 'nifti' });
  const named = await Promise.all(files.map(async (f) => ({ name: f.webkitRelativePath || f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
  try {
    return dicomSeries(named, name);
  } catch (e) {
    // One file that is neither: say what the page reads rather than "holds no DICOM files".
    if (e instanceof FileAccessError && files.length === 1) throw new FileAccessError(`${name} is neither a NIfTI file (.nii, .nii.gz) nor DICOM`);
    throw e;
  }
}

/** Opens files as the input; a file that cannot be read says so on one line beside the drop zone. */
async function openFiles(files: readonly File[]): Promise<void> {
  if (files.length === 0) return;
  const name = nameOf(files);
  try {
    setInput(await readVolume(files, name), name);
  } catch (e) {
    // The message names the file already (the readers' messages start with it) or is prefixed with it.
    const msg = (e as Error).message;
    $('upload-error').textContent = msg.includes(name) ? msg : `${name}: ${msg}`;
  }
}

/** Every file of a drop, folders read through (a DICOM series is usually dropped as its folder). */
async function droppedFiles(dt: DataTransfer): Promise<File[]> {
  const entries = Array.from(dt.items, (i) => i.webkitGetAsEntry()).filter((e): e is FileSystemEntry => e !== null);
  if (entries.length === 0) return Array.from(dt.files);
  const files: File[] = [];
  const walk = async (e: FileSystemEntry): Promise<void> => {
    if (e.isFile) { files.push(await new Promise<File>((ok, fail) => (e as FileSystemFileEntry).file(ok, fail))); return; }
    const reader = (e as FileSystemDirectoryEntry).createReader();
    // readEntries returns a folder's entries in batches, until an empty one.
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((ok, fail) => reader.readEntries(ok, fail));
      if (batch.length === 0) break;
      for (const c of batch) await walk(c);
    }
  };
  for (const e of entries) await walk(e);
  return files;
}

function formFor(name: string): void {
  const op = OPERATIONS[name];
  $('summary').textContent = op.summary;
  $('form').replaceChildren(...op.params.map((p) => paramRow(p)));
}

/** The form's values parsed by each parameter's declaration (empty fields keep the default). */
function readParams(name: string): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const p of OPERATIONS[name].params as readonly ParamSpec[]) {
    const { text, value } = paramValue(p);
    // File parameters (kernel:FILE, mask:FILE) are the main page's: this page has no picker for them.
    if (p.kind === 'string' && p.file && text.startsWith(p.file.prefix)) throw new InvalidArgumentError(`${text}: the volume page takes no ${p.file.prefix}FILE; run it from the 2D page or the CLI`);
    if (value !== undefined) params[p.name] = value;
  }
  return params;
}

/** The result as NIfTI files to save (.nii and .nii.gz), with the geometry the operation gave it (the input's, or shifted by a 'valid' filter). */
async function offerSave(img: Image, name: string): Promise<void> {
  const nii = await encodeImage(img, 'nii') as Uint8Array<ArrayBuffer>;
  const gz = await encodeImage(img, 'nii.gz') as Uint8Array<ArrayBuffer>;
  for (const [id, blob, ext] of [['save', new Blob([nii]), '.nii'], ['save-gz', new Blob([gz]), '.nii.gz']] as const) {
    const a = $<HTMLAnchorElement>(id);
    a.href = URL.createObjectURL(blob);
    a.download = `${inputName}-${name}${ext}`;
    a.style.display = '';
  }
}

async function run(): Promise<void> {
  const src = input ?? (remote && remoteSlice(remote));
  if (!src) return;
  const name = $<HTMLSelectElement>('op').value;
  clearOutput('');
  let params: Record<string, unknown>;
  try {
    params = readParams(name);
  } catch (e) {
    $('verdict').textContent = (e as Error).message;
    $('verdict').className = '';
    $('outwhich').textContent = 'not run';
    return;
  }
  document.body.dataset.state = 'running';
  ($('run') as HTMLButtonElement).disabled = true;
  $('verdict').textContent = '';
  const t0 = performance.now();
  const tick = setInterval(() => { $('progress').textContent = `running… ${((performance.now() - t0) / 1000).toFixed(1)} s`; }, 100);
  const both = await runBoth(name, src, params, {}, gpu, runOnCpu);
  clearInterval(tick);
  $('progress').textContent = `done in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  $('timings').textContent = both.lines.join('\n');
  $('verdict').textContent = both.verdict.text;
  $('verdict').className = both.verdict.className;
  if (both.shown) {
    output = remote ? asPlane(both.shown, remote) : both.shown;
    resetWindow('out', output);
    redraw();
    $('outwhich').textContent = `${both.gpu ? 'GPU' : 'CPU'}: ${describe(output)}`;
    await offerSave(output, name);
  } else {
    $('outwhich').textContent = 'failed (see the timings)';
  }
  (window as unknown as Record<string, unknown>).__last = {
    op: name, params, identical: both.identical, gpu: both.gpu ? checksum(both.gpu.output) : null, cpu: both.cpu ? checksum(both.cpu.output) : null,
    gpuError: both.gpuError, cpuError: both.cpuError, slabs: both.gpu?.timings.slabs ?? null,
  };
  ($('run') as HTMLButtonElement).disabled = false;
  document.body.dataset.state = 'done';
}

/** The region of the plane at index `k` across `axis` of a level of `shape` [z, y, x]. */
function planeRegion(shape: readonly number[], axis: Axis, k: number): ZarrRegion {
  const r = shape.map((n): [number, number] => [0, n]);
  r[AXIS_INDEX[axis]] = [k, k + 1];
  return { z: r[0], y: r[1], x: r[2] };
}

/** The finest level whose slice across `axis` has at most MAX_SLICE_VOXELS voxels (the coarsest when none has). */
function autoLevel(levels: readonly RemoteZarrLevel[], axis: Axis): number {
  const a = AXIS_INDEX[axis];
  const i = levels.findIndex((l) => l.shape.reduce((p, n, j) => (j === a ? p : p * n), 1) <= MAX_SLICE_VOXELS);
  return i < 0 ? levels.length - 1 : i;
}

/** What the page shows of a remote OME-Zarr, for tests: its levels, and each slice drawn for the current view. */
interface ZarrState {
  url: string; dtype: string; ome: string | null; levels: RemoteZarrLevel[];
  /** `ms`: milliseconds from the view asked for to this level drawn. */
  shown: { level: number; axis: Axis; index: number; shape: number[]; checksum: string; ms: number }[];
  /** The view whose refinement finished (`axis:index:level`), null while one is read. */
  view: string | null;
}
const zarrState = () => (window as unknown as { __zarr: ZarrState }).__zarr;

/** Draws the last slice read of the remote volume with the input's window/level (its slice's range by default). */
function drawRemote(r: Remote): void {
  if (!r.shown) return;
  const { img, level, axis } = r.shown;
  const s = sliceOf(img, axis, 0);
  drawPanel('in', s, img);
  if (output) drawPanel('out', sliceOf(output, axis, 0), output);
  $('levelinfo').textContent = `showing level ${level} of ${r.vol.levels.length - 1}: ${s.cols}×${s.rows}`;
}

/**
 * Reads and draws slice `k` (level-0 index) across `axis` level by level, from the coarsest to `target`: a coarse
 * view at once, then finer ones. A newer view aborts this one's fetches still to come.
 */
async function refine(r: Remote, axis: Axis, k: number, target: number, view: string): Promise<void> {
  r.abort?.abort();
  const abort = (r.abort = new AbortController());
  // A result belongs to the slice it was run on; Run waits for the finest level of the new one.
  clearOutput(`(press “${$('run').textContent}” to run on the slice shown)`);
  ($('run') as HTMLButtonElement).disabled = true;
  const state = zarrState(), t0 = performance.now();
  Object.assign(state, { shown: [], view: null });
  for (let i = r.vol.levels.length - 1; i >= target; i--) {
    // Voxel j of level i covers level-0 voxels 2^i·j … 2^i·j + 2^i − 1 (levels are 2×2×2 means, sizes rounded up).
    const index = Math.floor(k / 2 ** i);
    let img: Image;
    try {
      img = await r.vol.readRegion(i, planeRegion(r.vol.levels[i].shape, axis, index), { signal: abort.signal });
    } catch (e) {
      if (abort.signal.aborted) return;
      $('upload-error').textContent = (e as Error).message;
      break;
    }
    if (abort.signal.aborted) return;
    r.shown = { img, level: i, axis };
    if (!r.windowSet) { resetWindow('in', img); r.windowSet = true; }
    drawRemote(r);
    const ms = Math.round(performance.now() - t0);
    $('levelinfo').textContent += ` in ${ms} ms`;
    state.shown.push({ level: i, axis, index, shape: [...img.shape], checksum: checksum(img), ms });
  }
  ($('run') as HTMLButtonElement).disabled = false;
  state.view = view;
}

/** The remote volume's view controls: a new slice is read when the axis, slice or level changed, else only redrawn. */
function redrawRemote(r: Remote): void {
  const axis = $<HTMLSelectElement>('axis').value as Axis;
  const count = r.vol.levels[0].shape[AXIS_INDEX[axis]];
  const k = Math.min($<HTMLInputElement>('slice').valueAsNumber, count - 1);
  $<HTMLInputElement>('slice').max = String(count - 1);
  $('sliceno').textContent = `${k + 1} / ${count}`;
  const choice = $<HTMLSelectElement>('level').value;
  const view = `${axis}:${k}:${choice}`;
  if (view === r.view) { drawRemote(r); return; }
  r.view = view;
  void refine(r, axis, k, choice === 'auto' ? autoLevel(r.vol.levels, axis) : Number(choice), view);
}

/**
 * The slice shown of the remote volume as a 2D image (rows × columns in the volume's order, the level's dtype):
 * what Run takes there — the operation runs on the slice in 2D, not on the volume around it.
 */
function remoteSlice(r: Remote): Image | undefined {
  if (!r.shown) return undefined;
  const { img, axis } = r.shown;
  return { data: img.data, shape: img.shape.filter((_, a) => a !== AXIS_INDEX[axis]) as Image['shape'], channels: 1, dtype: img.dtype };
}

/**
 * A 2D result of `remoteSlice` as the one-plane region it came from: drawn like the input, saved with the slice's
 * geometry — when it kept the slice's shape (a 'valid' border's smaller result would need the filter's origin shift).
 */
function asPlane(out: Image, r: Remote): Image {
  const { img, axis } = r.shown!;
  const shape = [...out.shape];
  shape.splice(AXIS_INDEX[axis], 0, 1);
  const same = shape.every((n, a) => n === img.shape[a]);
  return { ...out, shape: shape as Image['shape'], geometry: same ? img.geometry : undefined };
}

/** Leaves the remote volume (a file opened instead): its reads stop, its controls hide. */
function closeRemote(): void {
  remote?.abort?.abort();
  remote = undefined;
  $('level-row').style.display = 'none';
  $('levelinfo').textContent = '';
}

/** "image.ome.zarr" of "https://host/data/image.ome.zarr/". */
const urlName = (url: string) => url.replace(/\/+$/, '').split('/').pop() || url;

/**
 * Opens the OME-Zarr at `url` over HTTP (its metadata only) and shows the middle axial slice, coarsest level first.
 * One that cannot be opened says so on one line beside the drop zone; the volume shown stays.
 */
async function openZarr(url: string): Promise<void> {
  let vol: RemoteOmeZarr;
  try {
    vol = await openZarrUrl(url);
  } catch (e) {
    const msg = (e as Error).message;
    $('upload-error').textContent = msg.includes(url) ? msg : `${url}: ${msg}`;
    return;
  }
  closeRemote();
  input = undefined;
  remote = { vol, name: urlName(url), windowSet: false };
  inputName = remote.name.replace(/(\.ome)?\.zarr$/i, ''); // the saved result's name: <name>-<operation>.nii
  const l0 = vol.levels[0];
  $('insize').textContent = `${remote.name}: ${describe({ shape: l0.shape, dtype: vol.dtype, geometry: vol.geometry })}, OME-Zarr ${vol.ome ?? '(plain array)'}, ${vol.levels.length} levels`;
  $('upload-error').textContent = '';
  const level = $<HTMLSelectElement>('level');
  level.replaceChildren(new Option('auto', 'auto'), ...vol.levels.map((l, i) => new Option(`${i}: ${[...l.shape].reverse().join('×')}`, String(i))));
  $('level-row').style.display = '';
  $<HTMLSelectElement>('axis').value = 'axial';
  $<HTMLInputElement>('slice').max = String(l0.shape[0] - 1);
  $<HTMLInputElement>('slice').value = String(Math.floor(l0.shape[0] / 2));
  (window as unknown as { __zarr: ZarrState }).__zarr = { url, dtype: vol.dtype, ome: vol.ome ?? null, levels: vol.levels, shown: [], view: null };
  redraw();
  document.body.dataset.state = 'ready';
}

async function main(): Promise<void> {
  const sel = $<HTMLSelectElement>('op');
  for (const name of VOLUME_OPS) sel.append(new Option(name, name));
  sel.onchange = () => formFor(sel.value);
  // The page opens on the 3D filters (the registry lists operations by name, and equalize takes no float scans).
  if (VOLUME_OPS.includes('filter')) sel.value = 'filter';
  formFor(sel.value);
  for (const id of ['file', 'folder']) {
    const picker = $<HTMLInputElement>(id);
    // Emptied once read, so that choosing the same file again (e.g. after opening another) opens it again.
    picker.onchange = () => { const files = Array.from(picker.files ?? []); picker.value = ''; void openFiles(files); };
  }
  const drop = $('drop');
  drop.ondragover = (e) => { e.preventDefault(); drop.className = 'over'; };
  drop.ondragleave = () => { drop.className = ''; };
  drop.ondrop = (e) => { e.preventDefault(); drop.className = ''; if (e.dataTransfer) void droppedFiles(e.dataTransfer).then(openFiles); };
  for (const id of ['axis', 'slice', 'level', 'in-window', 'in-level', 'out-window', 'out-level']) $(id).oninput = redraw;
  $('zarr-open').onclick = () => void openZarr($<HTMLInputElement>('zarr-url').value.trim());
  $('run').onclick = () => void run();
  $('sample').onclick = () => void openSample();
  const opened = await pageGpu();
  gpu = opened.gpu;
  $('status').textContent = opened.line;
  $('status').className = opened.warn ? 'warn' : '';
  $('run').textContent = gpu ? 'Run on GPU and CPU' : 'Run on the CPU';
  // volume.html?zarr=URL opens that OME-Zarr instead of the sample.
  const zarr = new URLSearchParams(location.search).get('zarr');
  if (zarr) { $<HTMLInputElement>('zarr-url').value = zarr; await openZarr(zarr); } else await openSample();
  document.body.dataset.state = 'idle';
}

/** The bundled sample volume (a real MR scan, nibabel's anatomical.nii): the page opens on it. */
async function openSample(): Promise<void> {
  const blob = await (await fetch(`samples/${SAMPLE}`)).blob();
  await openFiles([new File([blob], SAMPLE)]);
}

void main();

import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { FileAccessError, InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import type { Image } from '../core/image.js';
import { resizeLinearExact } from '../ops/detect/pyramid.js';
import { checkTrainingData, mbLbpFeatures, parseStageXml, paramsXml, resolveTrainOptions, trainDetector, type TrainedStage, type TrainOptions, type TrainResult } from '../ops/detect/train/index.js';
import { checkFailOn, formatOf, readImage, READERS, writeAtomically, type FailOn } from './index.js';

/**
 * Training from files (issue 37), as traincascade's `-vec -bg -data`: positives from a folder of crops, an
 * opencv_annotation list or a .vec file; negatives from a folder of backgrounds (or a list of their paths); the out
 * folder receives params.xml, stageN.xml after each stage, and cascade.xml (waldboost.xml for WaldBoost). A run
 * over a folder that holds stage files of the same parameters continues after the last of them.
 */

export interface TrainFilesOptions extends Omit<TrainOptions, 'resume' | 'onStage'> {
  /** A folder of cropped samples, an opencv_annotation list (`path n x y w h …`) or an OpenCV .vec file. */
  positives: string;
  /** A folder of background images (or a text file listing their paths, as traincascade's -bg). */
  negatives: string;
  /** The folder for params.xml, the stage files and the classifier (made if missing). */
  out: string;
  /** How damaged JPEG samples and backgrounds are read (readImage's failOn; default 'warning': any warning refuses). */
  failOn?: FailOn;
}

export interface TrainFilesResult extends TrainResult {
  /** Stages read from the out folder's stage files rather than trained. */
  resumed: number;
  /** Where the classifier was written. */
  path: string;
}

class VecFormatError extends UnsupportedFormatError {
  override readonly code: string = 'VEC_FORMAT';
}

/** OpenCV's .vec: int32 count, int32 w·h, two int16; per sample a zero byte and w·h int16 pixels. */
export function parseVec(buf: Uint8Array, window: { width: number; height: number }, source: string): Uint8Array[] {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length < 12) throw new VecFormatError(`${source}: not a .vec file (shorter than its 12-byte header)`);
  const count = view.getInt32(0, true), size = view.getInt32(4, true);
  if (count < 0 || size <= 0 || 12 + count * (1 + 2 * size) !== buf.length) throw new VecFormatError(`${source}: not a .vec file (header says ${count} samples of ${size} pixels, the file has ${buf.length} bytes)`);
  const { width: W, height: H } = window;
  if (size !== W * H) throw new InvalidArgumentError(`${source}: samples of ${size} pixels, not the ${W}×${H} window's ${W * H}: give --window as the .vec was made`);
  const out: Uint8Array[] = [];
  for (let i = 0, at = 12; i < count; i++, at += 1 + 2 * size) {
    const s = new Uint8Array(size);
    for (let p = 0; p < size; p++) s[p] = Math.min(255, Math.max(0, view.getInt16(at + 1 + 2 * p, true)));
    out.push(s);
  }
  return out;
}

/** A region of a gray image resized to the window (bit-exact bilinear, as the detector's pyramid). */
function sampleOf(img: Image, box: [number, number, number, number], window: { width: number; height: number }, where: string): Uint8Array {
  const [x, y, w, h] = box;
  const [H, W] = img.shape;
  if (![x, y, w, h].every(Number.isInteger) || x < 0 || y < 0 || w < 1 || h < 1 || x + w > W || y + h > H) throw new InvalidArgumentError(`${where}: box ${box.join(' ')} is not inside the ${W}×${H} image`);
  const src = new Uint8Array(w * h);
  for (let r = 0; r < h; r++) src.set((img.data as Uint8Array).subarray((y + r) * W + x, (y + r) * W + x + w), r * w);
  if (w === window.width && h === window.height) return src;
  const out = new Uint8Array(window.width * window.height);
  resizeLinearExact(src, w, h, window.width, window.height, out);
  return out;
}

async function readGray(path: string, failOn?: FailOn): Promise<Image> {
  const img = await readImage(path, { gray: true, failOn });
  if (img.dtype !== 'uint8' || img.shape.length !== 2) throw new UnsupportedFormatError(`${path}: training takes 8-bit 2D images`);
  return img;
}

/** The image files of a folder in name order (hidden files skipped). */
async function imageFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.') && (READERS as readonly string[]).includes(formatOf(n))).sort();
  if (!names.length) throw new FileAccessError(`${dir}: no image files (${READERS.join(' ')})`);
  return names.map((n) => join(dir, n));
}

async function kind(path: string, what: string): Promise<'dir' | 'file'> {
  const s = await stat(path).catch(() => undefined);
  if (!s) throw new FileAccessError(`no such ${what}: ${path}`);
  return s.isDirectory() ? 'dir' : 'file';
}

/** opencv_annotation's list: `path n x y w h …` per line, paths relative to the list's folder. */
async function readAnnotations(path: string, window: { width: number; height: number }, failOn?: FailOn): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const lines = (await readFile(path, 'utf8')).split('\n').map((l) => l.trim()).filter(Boolean);
  for (const [i, line] of lines.entries()) {
    const [file, n, ...rest] = line.split(/\s+/);
    const nums = rest.map(Number), count = Number(n);
    const where = `${path}:${i + 1}`;
    if (!Number.isInteger(count) || count < 0 || nums.length !== 4 * count || nums.some((v) => !Number.isInteger(v))) throw new UnsupportedFormatError(`${where}: expected 'path n x y w h …' with n boxes`);
    const img = await readGray(resolvePath(dirname(path), file), failOn);
    for (let b = 0; b < count; b++) out.push(sampleOf(img, nums.slice(4 * b, 4 * b + 4) as [number, number, number, number], window, where));
  }
  return out;
}

/** Positives from a folder of crops (each resized to the window), an annotation list or a .vec file. */
export async function readPositives(path: string, window: { width: number; height: number }, failOn?: FailOn): Promise<Uint8Array[]> {
  if ((await kind(path, 'positives')) === 'dir') {
    const out: Uint8Array[] = [];
    for (const f of await imageFiles(path)) { const img = await readGray(f, failOn); out.push(sampleOf(img, [0, 0, img.shape[1], img.shape[0]], window, f)); }
    return out;
  }
  if (path.toLowerCase().endsWith('.vec')) return parseVec(await readFile(path), window, path);
  return readAnnotations(path, window, failOn);
}

/** Backgrounds from a folder of images or a text file of paths (relative to its folder). */
export async function readBackgrounds(path: string, failOn?: FailOn): Promise<Image[]> {
  const files = (await kind(path, 'negatives')) === 'dir'
    ? await imageFiles(path)
    : (await readFile(path, 'utf8')).split('\n').map((l) => l.trim()).filter(Boolean).map((l) => resolvePath(dirname(path), l));
  const out: Image[] = [];
  for (const f of files) out.push(await readGray(f, failOn));
  return out;
}

/** The stages an out folder holds already (stage0.xml, stage1.xml, … up to the first missing), if its params.xml is these. */
async function finishedStages(out: string, params: string, poolSize: number): Promise<TrainedStage[]> {
  const old = await readFile(join(out, 'params.xml'), 'utf8').catch(() => undefined);
  if (old === undefined) return [];
  if (old !== params) throw new InvalidArgumentError(`${out} holds a training with other parameters (params.xml): use another out folder, or the same parameters to continue it`);
  const stages: TrainedStage[] = [];
  for (;;) {
    const file = join(out, `stage${stages.length}.xml`);
    const xml = await readFile(file, 'utf8').catch(() => undefined);
    if (xml === undefined) return stages;
    stages.push(parseStageXml(xml, stages.length, poolSize, file));
  }
}

/** `imgpu train`'s library form: reads the samples, trains (continuing a run in `out`), writes the files. */
export async function train(o: TrainFilesOptions): Promise<TrainFilesResult> {
  const window = resolveTrainOptions(o, 0).window; // the options checked before any file is read
  if (o.failOn !== undefined) checkFailOn(o.failOn);
  const positives = await readPositives(o.positives, window, o.failOn);
  const backgrounds = await readBackgrounds(o.negatives, o.failOn);
  const resolved = resolveTrainOptions(o, positives.length);
  checkTrainingData(positives, backgrounds, resolved); // before the out folder is touched
  const { width: W, height: H } = resolved.window;
  await mkdir(o.out, { recursive: true }).catch((e: Error) => { throw new FileAccessError(`cannot make the out folder ${o.out}: ${e.message}`); });
  const params = paramsXml(resolved);
  const resume = (await finishedStages(o.out, params, mbLbpFeatures(W, H).length)).slice(0, resolved.stages);
  const r = await trainDetector(positives, backgrounds, {
    ...o, resume,
    onStage: async (_i, _s, files) => {
      for (const [name, text] of Object.entries(files)) await writeAtomically(join(o.out, name), Buffer.from(text));
    },
  });
  const path = join(o.out, r.fileName);
  await writeAtomically(path, Buffer.from(r.xml));
  return { ...r, resumed: resume.length, path };
}

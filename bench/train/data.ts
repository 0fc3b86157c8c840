/**
 * The synthetic data set of the training bench (issue 37), made here, seeded, from the committed fixtures of
 * test/fixtures/train (scikit-image's lfw_subset and photographs): augmented positives, background crops, and
 * held-out scenes with faces pasted at known boxes. See bench/train.ts for what each is.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageFrom, type Image } from '../../src/core/image.js';
import { readImage, writeImage } from '../../src/io/index.js';
import { parseVec, readBackgrounds } from '../../src/io/train.js';
import { resizeLinearExact } from '../../src/ops/detect/index.js';

export interface Box { x: number; y: number; width: number; height: number }
export interface Scene { img: Image; boxes: Box[] }
export interface TrainData { positives: Uint8Array[]; backgrounds: Image[]; scenes: Scene[] }

export interface DataOptions {
  numPos: number;
  backgrounds: number;
  /** Background size (all one size: the staged GPU detector makes a plan per frame size). */
  bgWidth?: number;
  bgHeight?: number;
  scenes?: number;
  /** Also the photographs of bench/train/backgrounds (made by make_backgrounds.py) for the training backgrounds. */
  extraPhotos?: boolean;
  /** The training positives' variation (default SCENE_AUGMENTATION: as the held-out faces). */
  augmentation?: Augmentation;
}

/** mulberry32: the set is the same on every machine. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How positives are varied: shift up to ±shift px, scale in [1 − scale, 1 + scale], maybe mirrored, brightness ±24, contrast 0.75–1.25. */
export interface Augmentation { shift: number; scale: number }
/** The held-out scenes' faces, always (so that scores of different training sets compare). */
export const SCENE_AUGMENTATION: Augmentation = { shift: 1, scale: 0.1 };

/** A 24×24 face resampled (bilinear) at a scale and shift, maybe mirrored, with brightness and contrast changed. */
export function augment(face: Uint8Array, r: () => number, size = 24, a: Augmentation = SCENE_AUGMENTATION): Uint8Array {
  const s = 1 - a.scale + 2 * a.scale * r(), dx = Math.round(a.shift * (2 * r() - 1)), dy = Math.round(a.shift * (2 * r() - 1)), mirror = r() < 0.5;
  const gain = 0.75 + 0.5 * r(), bias = Math.round(48 * r() - 24);
  const out = new Uint8Array(size * size);
  const k = 24 / size;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let u = ((x + 0.5) * k - 12) / s + 12 - 0.5 + dx, v = ((y + 0.5) * k - 12) / s + 12 - 0.5 + dy;
      if (mirror) u = 23 - u;
      u = Math.min(23, Math.max(0, u)); v = Math.min(23, Math.max(0, v));
      const x0 = Math.floor(u), y0 = Math.floor(v), x1 = Math.min(23, x0 + 1), y1 = Math.min(23, y0 + 1), fx = u - x0, fy = v - y0;
      const p = (1 - fy) * ((1 - fx) * face[y0 * 24 + x0] + fx * face[y0 * 24 + x1]) + fy * ((1 - fx) * face[y1 * 24 + x0] + fx * face[y1 * 24 + x1]);
      out[y * size + x] = Math.min(255, Math.max(0, Math.round((p - 128) * gain + 128 + bias)));
    }
  }
  return out;
}

/** A w×h crop of `img` at (x, y) of size cw×ch, resized to w×h and maybe mirrored. */
export function cropResized(img: Image, x: number, y: number, cw: number, ch: number, w: number, h: number, mirror: boolean): Uint8Array {
  const [, W] = img.shape, src = img.data as Uint8Array;
  const crop = new Uint8Array(cw * ch);
  for (let r = 0; r < ch; r++) for (let c = 0; c < cw; c++) crop[r * cw + c] = src[(y + r) * W + (mirror ? x + cw - 1 - c : x + c)];
  const out = new Uint8Array(w * h);
  resizeLinearExact(crop, cw, ch, w, h, out);
  return out;
}

function randomCrop(src: Image, w: number, h: number, r: () => number): Uint8Array {
  const [H, W] = src.shape;
  const f = Math.min(W / w, H / h) * (0.5 + 0.5 * r());
  const cw = Math.max(8, Math.floor(w * f)), ch = Math.max(8, Math.floor(h * f));
  return cropResized(src, Math.floor(r() * (W - cw + 1)), Math.floor(r() * (H - ch + 1)), cw, ch, w, h, r() < 0.5);
}

const PHOTOS = ['brick', 'coffee', 'coins', 'grass', 'gravel', 'lfw_nonfaces', 'moon', 'rocket', 'text'];
/** The photographs the held-out scenes are cut from: never a training background. */
const HELD_OUT_PHOTOS = ['coffee', 'coins'];
const EXTRA_PHOTOS = 'bench/train/backgrounds';

export async function makeData(o: DataOptions): Promise<TrainData> {
  const BG_W = o.bgWidth ?? 160, BG_H = o.bgHeight ?? 120;
  const faces = parseVec(readFileSync('test/fixtures/train/faces.vec'), { width: 24, height: 24 }, 'faces.vec');
  const heldOutFaces = await heldOut();
  const photos = await readBackgrounds('test/fixtures/train/backgrounds');
  const train = photos.filter((_, i) => !HELD_OUT_PHOTOS.includes(PHOTOS[i])).concat(o.extraPhotos ?? true ? await readBackgrounds(EXTRA_PHOTOS) : []), test = photos.filter((_, i) => HELD_OUT_PHOTOS.includes(PHOTOS[i]));
  const r = rng(37);
  const positives = Array.from({ length: Math.ceil(o.numPos * 1.1) }, (_, i) => augment(faces[i % faces.length], r, 24, o.augmentation));
  const backgrounds = Array.from({ length: o.backgrounds }, (_, i) => imageFrom(randomCrop(train[i % train.length], BG_W, BG_H, r), [BG_H, BG_W]));
  return { positives, backgrounds, scenes: makeScenes(test, heldOutFaces, o.scenes ?? 100) };
}

/**
 * Scenes of 240×180 cut from the held-out photographs, 3 held-out faces pasted on each at known boxes of 24–59 px.
 * Their own random sequence: every run, whatever its positives and backgrounds, scores on the same scenes.
 */
function makeScenes(photos: Image[], faces: Uint8Array[], count: number): Scene[] {
  const r = rng(3737);
  return Array.from({ length: count }, (_, i) => {
    const W = 240, H = 180;
    const px = randomCrop(photos[i % photos.length], W, H, r);
    const boxes: Box[] = [];
    for (let k = 0; k < 3; k++) {
      const size = 24 + Math.floor(36 * r());
      const x = k * 80 + Math.floor(r() * (80 - size)), y = Math.floor(r() * (H - size));
      const face = augment(faces[(3 * i + k) % faces.length], r, size);
      for (let row = 0; row < size; row++) px.set(face.subarray(row * size, (row + 1) * size), (y + row) * W + x);
      boxes.push({ x, y, width: size, height: size });
    }
    return { img: imageFrom(px, [H, W]), boxes };
  });
}

/** The 20 held-out faces, cut from the committed scene (scene.json's boxes), resized to 24×24. */
async function heldOut(): Promise<Uint8Array[]> {
  const scene = await readImage('test/fixtures/train/scene.png', { gray: true });
  const boxes = (JSON.parse(readFileSync('test/fixtures/train/scene.json', 'utf8')) as { boxes: number[][] }).boxes;
  return boxes.map(([x, y, w, h]) => cropResized(scene, x, y, w, h, 24, 24, false));
}

/**
 * The set as files, for other trainers and for cv2: positives/ (24×24 PNG crops), backgrounds/ (PNG), scenes/
 * (PNG) and scenes.json (each scene's file and boxes).
 */
export async function saveData(d: TrainData, dir: string): Promise<void> {
  for (const sub of ['positives', 'backgrounds', 'scenes']) mkdirSync(join(dir, sub), { recursive: true });
  const name = (i: number) => String(i).padStart(5, '0') + '.png';
  for (const [i, p] of d.positives.entries()) await writeImage(join(dir, 'positives', name(i)), imageFrom(p, [24, 24]));
  for (const [i, b] of d.backgrounds.entries()) await writeImage(join(dir, 'backgrounds', name(i)), b);
  for (const [i, s] of d.scenes.entries()) await writeImage(join(dir, 'scenes', name(i)), s.img);
  writeFileSync(join(dir, 'scenes.json'), JSON.stringify(d.scenes.map((s, i) => ({ file: `scenes/${name(i)}`, boxes: s.boxes.map((b) => [b.x, b.y, b.width, b.height]) }))));
}

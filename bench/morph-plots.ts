/**
 * Plots of the morphology benchmark (bench/morph.ts): time against the element size and against the image size.
 * `node dist/bench/morph-plots.js bench/results/h100-morph.json` redraws them from a recorded run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { plotLinesSvg } from './plot.js';

import type { Stat } from './common.js';
export const SIZES: Record<string, [number, number]> = { '1024': [1024, 1024], '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320] };
export type Row = Record<string, unknown> & { image: string; k: number };
const med = (r: Row, key: string): number | undefined => (typeof r[key] === 'number' ? (r[key] as number) : (r[key] as Stat | undefined)?.median);
const anchor = (r: Row, key: string): number | undefined => ((r.anchors as Record<string, Stat>)[key])?.median;

export function plotVsK(rows: Row[], size: string): string {
  const at = rows.filter((r) => r.image === size);
  const line = (label: string, pick: (r: Row) => number | undefined) => ({ label, points: at.flatMap((r) => { const v = pick(r); return v ? [[r.k, v] as [number, number]] : []; }) });
  return plotLinesSvg(`erosion of ${size} u8 with a k×k rectangle (median ms, log)`, 'k', [
    line('GPU vHGW, back to back', (r) => med(r, 'gpuBackToBack')),
    line('GPU vHGW, isolated call', (r) => med(r, 'gpuKernelsIsolated')),
    line('GPU naive, back to back', (r) => med(r, 'gpuNaiveBackToBack')),
    line('CPU vHGW, all cores', (r) => med(r, 'cpu')),
    line('CPU vHGW, 1 thread', (r) => med(r, 'cpu1')),
    line('OpenCV erode', (r) => anchor(r, 'cv2.erode')),
    line('CuPy grey_erosion', (r) => anchor(r, 'cupy.grey_erosion')),
  ].filter((s) => s.points.length));
}

export function plotVsSize(rows: Row[], sizes: string[], k: number): string {
  const mp = (s: string) => { const [w, h] = SIZES[s] ?? [0, 0]; return (w * h) / 1e6; };
  const at = rows.filter((r) => r.k === k && sizes.includes(r.image));
  const line = (label: string, pick: (r: Row) => number | undefined) => ({ label, points: at.flatMap((r) => { const v = pick(r); return v ? [[Math.round(mp(r.image) * 10) / 10, v] as [number, number]] : []; }) });
  return plotLinesSvg(`erosion with a ${k}×${k} rectangle against image size (megapixels)`, 'megapixels', [
    line('GPU vHGW, back to back', (r) => med(r, 'gpuBackToBack')),
    line('GPU host→host', (r) => med(r, 'gpuEndToEnd')),
    line('CPU vHGW, all cores', (r) => med(r, 'cpu')),
    line('OpenCV erode', (r) => anchor(r, 'cv2.erode')),
    line('CuPy grey_erosion', (r) => anchor(r, 'cupy.grey_erosion')),
  ].filter((s) => s.points.length));
}


if (process.argv[1]?.endsWith('morph-plots.js') && process.argv[2]) {
  const file = process.argv[2];
  const d = JSON.parse(readFileSync(file, 'utf8')) as { rows: Row[] };
  const sizes = [...new Set(d.rows.map((r) => r.image))].filter((s) => s in SIZES);
  const base = file.replace(/\.json$/, '');
  writeFileSync(`${base}-vs-k.svg`, plotVsK(d.rows, sizes[sizes.length - 1]));
  writeFileSync(`${base}-vs-size.svg`, plotVsSize(d.rows, sizes, 51));
  console.log(`wrote ${base}-vs-k.svg and ${base}-vs-size.svg`);
}

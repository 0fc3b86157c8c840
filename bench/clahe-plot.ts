/**
 * Sliding-window CLAHE, time against the window radius at 1920×1080, from recorded bench results:
 * `node dist/bench/clahe-plot.js [prefix]` reads bench/results/<prefix>clahe.window.*.json (default prefix
 * 'h100-') and writes bench/results/<prefix>clahe-radius.svg.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { plotLinesSvg } from './plot.js';

const prefix = process.argv[2] ?? 'h100-';
const radii = [5, 10, 20, 50];
type Row = { size: string; cpu: { median: number }; gpuKernelsFused: { median: number }; gpuEndToEnd: { median: number } };
const at1080 = (scheme: string, r: number): Row | undefined => {
  try {
    const d = JSON.parse(readFileSync(`bench/results/${prefix}clahe.window.${scheme}.r${r}.json`, 'utf8')) as { rows: Row[] };
    return d.rows.find((row) => row.size === '1080p');
  } catch {
    return undefined;
  }
};
const line = (label: string, scheme: string, pick: (r: Row) => number) => ({
  label, points: radii.flatMap((r) => { const row = at1080(scheme, r); return row ? [[r, pick(row)] as [number, number]] : []; }),
});
const svg = plotLinesSvg('sliding-window CLAHE, 1920×1080: median time (log scale)', 'window radius r', [
  line('GPU columns, kernel', 'columns', (r) => r.gpuKernelsFused.median),
  line('GPU naive, kernel', 'naive', (r) => r.gpuKernelsFused.median),
  line('GPU columns, host→host', 'columns', (r) => r.gpuEndToEnd.median),
  line('CPU, 16 threads', 'columns', (r) => r.cpu.median),
]);
writeFileSync(`bench/results/${prefix}clahe-radius.svg`, svg);
console.log(`wrote bench/results/${prefix}clahe-radius.svg`);

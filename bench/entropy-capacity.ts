/**
 * The GPU JPEG decoder's entropy stage alone over a folder: `node dist/bench/entropy-capacity.js <folder>
 * [--in-flight 4,8,12,16] [--gray] [--compact] [--out NAME]`. Reads every JPEG of the folder into memory, then
 * decodes them all to coefficients (native/coef-decode.c, on libuv's threads: set UV_THREADPOOL_SIZE to at least the
 * largest count) with each count of decodes in flight, and prints images/s and the process's CPU seconds per count —
 * what the entropy stage alone could feed a batch, against which the batch's own rate says whether it is what sets
 * the pace (docs/jpeg.md). `--gray`: only Y, as a gray batch reads; `--compact`: the compact form a batch uploads.
 * Writes bench/results/<NAME>.json with --out.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jpegCoefDecoder, type CoefLayout } from '../src/io/jpeg-coef.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const dir = process.argv[2];
const counts = arg('in-flight', '4,8,12,16').split(',').map(Number);
const gray = process.argv.includes('--gray');
const compact = process.argv.includes('--compact');

const coef = jpegCoefDecoder();
if (!dir || !coef) {
  console.error(dir ? 'the GPU decoder\'s entropy stage is not built (npm run build)' : 'usage: node dist/bench/entropy-capacity.js <folder> [--in-flight 4,8,16] [--gray] [--compact] [--out NAME]');
  process.exit(2);
}
const files = readdirSync(dir).filter((f) => /\.jpe?g$/i.test(f)).sort().map((f) => new Uint8Array(readFileSync(join(dir, f))));
const layouts = files.map((b) => coef.coefLayout(b, gray)).filter((l): l is CoefLayout => !('fallback' in l));
if (layouts.length !== files.length) throw new Error('a file of the folder is one the GPU decoder leaves to the CPU');
const need = (l: CoefLayout) => (compact ? l.compactBytes : l.bytes);
const capacity = Math.max(...layouts.map(need));
const rows = [];
for (const inFlight of counts) {
  // One buffer per decode in flight, reused: no allocation or first touch inside the timing.
  const buffers = Array.from({ length: inFlight }, () => new Uint8Array(new SharedArrayBuffer(capacity)));
  let next = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(buffers.map(async (buf) => {
    for (let i = next++; i < files.length; i = next++) await coef.coefDecodeAsync(files[i], buf.subarray(0, need(layouts[i])), gray, compact);
  }));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const row = { inFlight, images: files.length, seconds, imagesPerS: files.length / seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  console.log(JSON.stringify(row));
  rows.push(row);
}
const out = process.argv.includes('--out') ? arg('out', 'entropy-capacity') : undefined;
if (out) {
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${out}.json`, JSON.stringify({ date: new Date().toISOString(), folder: dir, gray, compact, compressedBytes: files.reduce((a, b) => a + b.length, 0), rows }, null, 2));
}

/**
 * Volumes beyond memory: `node dist/bench/volumes.js [--shape 1024x1024x512] [--chunks 64] [--compressors raw,zstd]
 * [--levels 4] [--device gpu] [--memory 8G] [--dir /tmp/imgpu-volumes] [--out volumes] [--disk-mib 2048]
 * [--chunk-threads 0,16] [--runs copy,gauss,gauss-f32,dask]`.
 *
 * A generated uint16 volume (smooth structures plus seeded noise, so it compresses like real data) written as an
 * OME-Zarr 0.4 of `--chunks`³ chunks, once per compressor; then, each in a process of its own (the CLI, as a user
 * runs it):
 * - copy: `imgpu convert in.zarr out.zarr --levels L` — the codec-only chunk copy (decode, encode, the pyramid), the
 *   floor of any chunked operation;
 * - gauss: `imgpu filter in.zarr out.zarr --filter gauss:2 --saturate --levels L --device D --memory M` — Zarr on
 *   disk → Gaussian σ 2 → Zarr with the pyramid, uint16 out (the copy's bytes);
 * - gauss-f32: the same without --saturate (float32 out: twice the bytes written).
 * - dask: the anchor, bench/volumes_dask.py (what dask-image's gaussian_filter does: dask's map_overlap of scipy's,
 *   uint16 out, then the pyramid by dask), with the largest difference from imgpu's Gaussian (kept for it).
 * Each run once per `--chunk-threads` count (the CLI's flag: 0 = chunks on the main thread; default: the CLI's
 * default, the machine's cores). Reported: wall seconds, GB/s of logical voxels (input bytes: voxels × 2 / s), peak resident memory (getrusage,
 * from the CLI's --json), and the disk's own sequential write (fsync'd) and read bandwidth from a `--disk-mib` file
 * (the read may come from the page cache: said as measured). Writes bench/results/<out>.json after every run (a
 * device command cut short keeps the runs done).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allocPixels, type Image } from '../src/core/image.js';
import { createOmeZarr, writePlanes, type ZarrCompressor } from '../src/io/zarr.js';

const BIN = fileURLToPath(new URL('../../bin/imgpu.js', import.meta.url));

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

/** Planes [z0, z0 + n) of the generated volume: blobs and ramps (smooth) plus seeded noise, uint16. */
function planesOf(z0: number, n: number, h: number, w: number): Image {
  const data = allocPixels('uint16', n * h * w);
  let s = (z0 * 2654435761) >>> 0 || 1;
  for (let z = 0, i = 0; z < n; z++) {
    const zz = z0 + z;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++, i++) {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        const smooth = 20000 + 12000 * Math.sin(x / 37 + zz / 23) * Math.cos(y / 29 - zz / 41) + 8 * x + 5 * y;
        data[i] = Math.max(0, Math.min(65535, Math.round(smooth + ((s >>> 20) - 2048) / 4)));
      }
    }
  }
  return { data, shape: [n, h, w], channels: 1, dtype: 'uint16' };
}

/** The disk's sequential write (fsync'd) and read bandwidth of a `mib` MiB file in `dir`, in GB/s. */
function diskBandwidth(dir: string, mib: number): { writeGBs: number; readGBs: number } {
  const path = join(dir, 'disk-probe.bin');
  const block = Buffer.alloc(8 << 20, 7);
  let fd = openSync(path, 'w');
  let t = performance.now();
  for (let i = 0; i < mib / 8; i++) writeSync(fd, block);
  fsyncSync(fd);
  closeSync(fd);
  const write = (mib * 2 ** 20) / ((performance.now() - t) / 1000) / 1e9;
  fd = openSync(path, 'r');
  t = performance.now();
  while (readSync(fd, block, 0, block.length, null) > 0);
  closeSync(fd);
  const read = (mib * 2 ** 20) / ((performance.now() - t) / 1000) / 1e9;
  rmSync(path);
  return { writeGBs: +write.toFixed(3), readGBs: +read.toFixed(3) };
}

/** Runs the CLI with --json; returns its wall seconds and its JSON line. */
function timed(args: string[]): { seconds: number; json: Record<string, unknown> } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args, '--json', '--quiet'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`imgpu ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return { seconds, json: JSON.parse(r.stdout.trim().split('\n').pop()!) };
}

const [w, h, d] = arg('shape', '1024x1024x512').split('x').map(Number);
const chunk = Number(arg('chunks', '64'));
const compressors = arg('compressors', 'raw,zstd').split(',') as ZarrCompressor[];
const levels = arg('levels', '4');
const device = arg('device', 'gpu');
const memory = arg('memory', `${Math.floor(totalmem() / 4 / 2 ** 20)}M`);
const dir = arg('dir', '/tmp/imgpu-volumes');
const threadCounts = arg('chunk-threads', '').split(',').filter(Boolean);
const which = new Set(arg('runs', 'copy,gauss,gauss-f32').split(','));
/**
 * The dask anchor (bench/volumes_dask.py: dask-image's gaussian_filter, a map_overlap of scipy's, and the pyramid by
 * dask) on the same input, threads = the cores; compared with imgpu's Gaussian where one was kept.
 */
function daskRow(compressor: string, src: string, imgpuOut: string): Record<string, unknown> {
  // The first Python that has dask and zarr (Debian's python3-dask where a pyenv's python3 comes first on PATH).
  const python = ['python3', '/usr/bin/python3'].find((p) => spawnSync(p, ['-c', 'import dask, zarr, scipy']).status === 0);
  if (!python) return { compressor, run: 'dask', error: 'no python3 with dask, zarr and scipy' };
  const py = spawnSync(python, ['bench/volumes_dask.py', src, join(dir, 'dask.zarr'), '--sigma', '2', '--levels', levels, '--compressor', compressor, ...(existsSync(imgpuOut) ? ['--compare', imgpuOut] : [])], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (py.status !== 0) return { compressor, run: 'dask', error: (py.stderr || String(py.error)).slice(-400) };
  const r = JSON.parse(py.stdout.trim().split('\n').pop()!) as { seconds: number; peakRssMiB: number };
  const row = { compressor, run: 'dask', ...r, GBs: +(logical / r.seconds / 1e9).toFixed(3) };
  console.log(`  dask       map_overlap of scipy's gaussian_filter  ${r.seconds} s  ${row.GBs} GB/s of logical voxels  peak RSS ${r.peakRssMiB} MiB  ${JSON.stringify(r)}`);
  return row;
}

const logical = w * h * d * 2;
mkdirSync(dir, { recursive: true });
const out = join('bench', 'results', `${arg('out', 'volumes')}.json`);
mkdirSync(join('bench', 'results'), { recursive: true });
/** The results so far, written again after each run. */
function save(rows: Record<string, unknown>[], disk: { writeGBs: number; readGBs: number }): void {
  writeFileSync(out, JSON.stringify({ shape: [w, h, d], chunk, levels: Number(levels), device, memory, cores: cpus().length, totalmem: totalmem(), disk, rows }, null, 2));
}

const disk = diskBandwidth(dir, Number(arg('disk-mib', '2048')));
console.log(`volume ${w}×${h}×${d} uint16 (${(logical / 1e9).toFixed(2)} GB logical), chunks ${chunk}³, ${levels} levels, --device ${device} --memory ${memory}; disk write ${disk.writeGBs} GB/s, read ${disk.readGBs} GB/s`);
const rows: Record<string, unknown>[] = [];
for (const compressor of compressors) {
  const src = join(dir, `in-${compressor}.zarr`);
  const tg = performance.now();
  const z = await createOmeZarr(src, [d, h, w], 'uint16', undefined, { chunks: [chunk, chunk, chunk], compressor });
  for (let z0 = 0; z0 < d; z0 += chunk) await writePlanes(z.levels[0], planesOf(z0, Math.min(chunk, d - z0), h, w), z0);
  console.log(`${compressor}: generated in ${((performance.now() - tg) / 1000).toFixed(1)} s`);
  const common = ['--levels', levels, '--compressor', compressor, '--memory', memory];
  const runs: [string, string[]][] = [
    ['copy', ['convert', src, join(dir, 'copy.zarr'), ...common]],
    ['gauss', ['filter', src, join(dir, 'gauss.zarr'), '--filter', 'gauss:2', '--saturate', '--device', device, ...common]],
    ['gauss-f32', ['filter', src, join(dir, 'gauss-f32.zarr'), '--filter', 'gauss:2', '--device', device, ...common]],
  ];
  for (const [name, args] of runs.filter(([n]) => which.has(n))) {
    for (const threads of threadCounts.length ? threadCounts : [undefined]) {
      const { seconds, json } = timed(threads === undefined ? args : [...args, '--chunk-threads', threads]);
      const row = { compressor, run: name, chunkThreads: Number(json.chunkThreads), readAhead: json.readAhead, seconds: +seconds.toFixed(2), GBs: +(logical / seconds / 1e9).toFixed(3), peakRssMiB: Math.round(Number(json.peakRssBytes) / 2 ** 20), slabs: Number(json.slabs), slabPlanes: Number(json.slabPlanes) };
      rows.push(row);
      save(rows, disk);
      console.log(`  ${name.padEnd(9)} ${String(row.chunkThreads).padStart(3)} chunk threads${row.readAhead ? ' (read ahead)' : ''}  ${row.seconds} s  ${row.GBs} GB/s of logical voxels  peak RSS ${row.peakRssMiB} MiB  (${row.slabs} slabs of ${row.slabPlanes} planes)`);
      // The last Gaussian is kept for the dask anchor's comparison.
      if (!(name === 'gauss' && which.has('dask'))) rmSync(args[2], { recursive: true, force: true });
    }
  }
  if (which.has('dask')) {
    rows.push(daskRow(compressor, src, join(dir, 'gauss.zarr')));
    save(rows, disk);
  }
  for (const f of [src, join(dir, 'gauss.zarr'), join(dir, 'dask.zarr')]) rmSync(f, { recursive: true, force: true });
}
save(rows, disk);
console.log(`wrote ${out}`);

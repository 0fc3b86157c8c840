/**
 * Host→host reproducibility (issue 22 item 6): `node dist/bench/hosthost.js [--procs 5] [--reps 20] [--size 8k]
 * [--op equalize] [--out hosthost] [--hold-clocks]`.
 * Runs `procs` fresh processes one after another. Each times the operation host array → host array (reused output,
 * as a caller that keeps its buffers would) as a user calls it (`total`, `min`: the default, unprofiled), then
 * profiled for the phase split (`profiled`, and host, upload, kernels, download: each phase waited for), the plain
 * round trip (upload + download) and a host copy of the image (the machine's memory bandwidth at that moment), then
 * cv2's equivalent on the same image in the same process tree. The summary says in how many processes
 * imgpu was ahead of cv2 and the spread ((max − min) / median) of each column across processes.
 * Writes bench/results/<out>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { transferTuning } from '../src/core/gpu/transfer.js';
import { createImage } from '../src/core/image.js';
import { kernelTotal, now, type Timings } from '../src/core/timings.js';
import { encodeNpy } from '../src/io/index.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { nativeCopyBinding } from '../src/node/host-copy.js';
import { equalize } from '../src/ops/equalize/index.js';
import { holdClocks, photoAt, stat, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const procs = Number(arg('procs', '5'));
const reps = Number(arg('reps', '20'));
const size = arg('size', '8k');
const outName = arg('out', 'hosthost');
const SIZES: Record<string, [number, number]> = { '1080p': [1920, 1080], '4k': [3840, 2160], '8k': [7680, 4320] };

const CV2 = `
import sys, time, statistics, numpy as np, cv2
img = np.load(sys.argv[1]); reps = int(sys.argv[2]); dst = np.empty_like(img)
cv2.equalizeHist(img, dst)
ts = []
for _ in range(reps):
    t0 = time.perf_counter(); cv2.equalizeHist(img, dst); ts.append((time.perf_counter() - t0) * 1e3)
print(statistics.median(ts))
`;

interface ChildResult {
  total: number; min: number; profiled: number; host: number; upload: number; kernels: number; download: number;
  roundTrip: number; hostCopy: number | null; cv2: number | null;
  /** The host→host median per readback chunk size (transferTuning.downloadChunk, MiB; 0 = one piece). */
  downloadChunkSweep: Record<string, number>;
}

const median = (xs: number[]) => stat(xs).median;

/** One process: the operation's medians and phase split, the round trip, a host copy, then cv2 on the same image. */
async function child(): Promise<void> {
  const held = arg('hold-clocks', '') === '1' ? await holdClocks() : undefined;
  const gpu = await createNodeGpuContext();
  const [w, h] = SIZES[size];
  const img = await photoAt(w, h);
  await warmUp(gpu, img);
  const out = createImage(img.shape, 'uint8');
  const calls: number[] = [];
  await equalize(img, { gpu, out });
  for (let i = 0; i < reps; i++) calls.push((await equalize(img, { gpu, out })).timings.total);
  const runs: Timings[] = [];
  await equalize(img, { gpu, out, profile: true });
  for (let i = 0; i < reps; i++) runs.push((await equalize(img, { gpu, out, profile: true })).timings);
  const trips: number[] = [];
  for (let i = 0; i <= reps; i++) {
    const t0 = now();
    const d = await GpuImage.upload(gpu, img);
    await d.toHost(out);
    d.release();
    if (i > 0) trips.push(now() - t0);
  }
  const downloadChunkSweep: Record<string, number> = {};
  for (const mib of [0, 2, 4, 8, 16]) {
    transferTuning.downloadChunk = mib << 20;
    const ts: number[] = [];
    for (let i = 0; i <= reps; i++) ts.push((await equalize(img, { gpu, out, profile: false })).timings.total);
    downloadChunkSweep[mib] = median(ts.slice(1));
  }
  transferTuning.downloadChunk = undefined;
  const native = nativeCopyBinding();
  const plain = new Uint8Array(img.data.length);
  const copies: number[] = [];
  for (let i = 0; native && i <= reps; i++) {
    const t0 = now();
    native.copy(plain, img.data as Uint8Array, 16);
    if (i > 0) copies.push(now() - t0);
  }
  gpu.destroy();
  held?.release();
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-hosthost-'));
  const npy = join(dir, 'img.npy');
  writeFileSync(npy, encodeNpy(img));
  const py = spawnSync('python3', ['-c', CV2, npy, String(reps)], { encoding: 'utf8' });
  const cv2 = py.status === 0 ? Number(py.stdout.trim()) : null;
  const result: ChildResult = {
    total: median(calls), min: stat(calls).min, profiled: median(runs.map((t) => t.total)),
    host: median(runs.map((t) => t.host)), upload: median(runs.map((t) => t.upload)),
    kernels: median(runs.map(kernelTotal)), download: median(runs.map((t) => t.download)),
    roundTrip: median(trips), hostCopy: copies.length ? median(copies) : null, cv2, downloadChunkSweep,
  };
  console.log(JSON.stringify(result));
}

/** Spread of a column across processes: (max − min) / median. */
function spread(xs: number[]): number {
  return (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

async function parent(): Promise<void> {
  const results: ChildResult[] = [];
  for (let p = 0; p < procs; p++) {
    const args = [process.argv[1], '--child', '--reps', String(reps), '--size', size, ...(process.argv.includes('--hold-clocks') ? ['--hold-clocks', '1'] : [])];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    const res = JSON.parse(line) as ChildResult;
    console.log(`process ${p + 1}: equalize ${size} host→host ${res.total.toFixed(2)} ms (min ${res.min.toFixed(2)}); profiled ${res.profiled.toFixed(2)} (host ${res.host.toFixed(2)}, upload ${res.upload.toFixed(2)}, kernels ${res.kernels.toFixed(3)}, download ${res.download.toFixed(2)}); round trip ${res.roundTrip.toFixed(2)}; host copy of the image ${res.hostCopy?.toFixed(2)}; cv2 ${res.cv2?.toFixed(2)}; by readback chunk (MiB: ms) ${JSON.stringify(res.downloadChunkSweep)}`);
    results.push(res);
  }
  const cols = ['total', 'profiled', 'host', 'upload', 'kernels', 'download', 'roundTrip', 'hostCopy', 'cv2'] as const;
  const summary = Object.fromEntries(cols.map((c) => {
    const xs = results.map((r) => r[c]).filter((x): x is number => x !== null);
    return [c, { median: median(xs), spread: spread(xs) }];
  }));
  const ahead = results.filter((r) => r.cv2 !== null && r.total < r.cv2).length;
  console.log(`ahead of cv2.equalizeHist in ${ahead} of ${procs} processes; spread of the host→host median across processes ${(100 * summary.total.spread).toFixed(0)} %`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${outName}.json`, JSON.stringify({ date: new Date().toISOString(), size, reps, procs, heldClocks: process.argv.includes('--hold-clocks'), results, summary, aheadOfCv2: ahead }, null, 2));
}

if (process.argv.includes('--child')) await child();
else await parent();

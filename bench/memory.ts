/**
 * Memory under load (issue 39 item 6), outside CI: `node dist/bench/memory.js [--counts 2000,5000,20000]
 * [--device cpu|gpu] [--op equalize] [--dir /tmp/imgpu-memory] [--large] [--series] [--cli path/to/bin/imgpu.js]` (--cli: another
 * build's launcher, e.g. a copy of bin/ and dist/ from before a change, for A/B runs under the same load). Writes a folder of small photos
 * (64×64..256×256 crops of scikit-image's chelsea, PNG and JPEG alternately, seeded: the same files on every machine;
 * with --large, 12–24 MP JPEGs at q90 mirror-tiled from it) once per count, outside the repository, then runs the CLI batch
 * (`imgpu <op> <folder> <out> --device … --quiet --json`) on each under /usr/bin/time -v and prints, per count, the
 * process's peak resident memory, its peak anonymous memory (RssAnon polled from /proc every 100 ms: unlike RSS it
 * does not drop when other processes' page cache evicts node's own code, as it did on the shared machine), wall
 * time and images/s as one JSON object (with --series, also the peak anonymous memory of each second of each run).
 * A bound independent of the count shows as the same peak at every count, and as a flat series after warm-up.
 * docs/memory.md has the figures.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const counts = arg('counts', '2000,5000,20000').split(',').map(Number);
const device = arg('device', 'cpu');
const op = arg('op', 'equalize');
const dir = arg('dir', '/tmp/imgpu-memory');
const large = process.argv.includes('--large');
// --series: each run's anonymous memory every second too (MiB), to tell a growth through the run from a level.
const series = process.argv.includes('--series');

const GENERATE = `
import os, sys, numpy as np, cv2
from skimage import data
n, out, large = int(sys.argv[1]), sys.argv[2], sys.argv[3] == '1'
os.makedirs(out, exist_ok=True)
src = data.chelsea()
rng = np.random.default_rng(39)
for i in range(n):
    if large:
        h, w = rng.integers(3000, 4001), rng.integers(4000, 6001)
        reps = (h // src.shape[0] + 2, w // src.shape[1] + 2, 1)
        tile = np.concatenate([src, src[::-1]], 0)
        im = np.tile(np.concatenate([tile, tile[:, ::-1]], 1), reps)[:h, :w]
        name = f'{out}/{i:05d}.jpg'
    else:
        h, w = rng.integers(64, 257, 2)
        y, x = rng.integers(0, src.shape[0] - h), rng.integers(0, src.shape[1] - w)
        im = src[y:y + h, x:x + w]
        name = f'{out}/{i:05d}.' + ('png' if i % 2 else 'jpg')
    if not os.path.exists(name):
        cv2.imwrite(name, np.ascontiguousarray(im[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 90 if large else 95])
`;

const cli = arg('cli', join(import.meta.dirname, '..', '..', 'bin', 'imgpu.js'));
const rows = [];
for (const n of counts) {
  const input = join(dir, `${large ? 'large' : 'small'}-${n}`);
  const gen = spawnSync('/usr/bin/python3', ['-c', GENERATE, String(n), input, large ? '1' : '0'], { stdio: 'inherit' });
  if (gen.status !== 0) throw new Error(`generating ${input} failed`);
  const out = `${input}-out`;
  if (existsSync(out)) rmSync(out, { recursive: true });
  const r = await timed(['-v', process.execPath, cli, op, input, out, '--device', device, '--quiet', '--json']);
  const peak = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1]);
  const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { processed?: number; images_per_s?: number; seconds?: number };
  rows.push({
    images: n, device, op, exit: r.status, peakRssMiB: Math.round(peak / 1024), peakAnonMiB: Math.round(r.anonKiB / 1024), processed: summary.processed,
    seconds: summary.seconds, imagesPerS: summary.images_per_s, ...(series ? { anonMiBEachSecond: r.seconds.map((k) => Math.round(k / 1024)) } : {}),
  });
  rmSync(out, { recursive: true, force: true });
}
console.log(JSON.stringify({ large, rows }, null, 1));

/** /usr/bin/time with `args`: its output, and the peak RssAnon of the process it runs (its child), polled. */
async function timed(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; anonKiB: number; seconds: number[] }> {
  const p = spawn('/usr/bin/time', args);
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let anonKiB = 0;
  let polls = 0;
  const seconds: number[] = []; // the peak of each second
  const poll = setInterval(() => {
    try {
      const child = readFileSync(`/proc/${p.pid}/task/${p.pid}/children`, 'utf8').trim();
      const status = readFileSync(`/proc/${child}/status`, 'utf8');
      const now = Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0);
      anonKiB = Math.max(anonKiB, now);
      const s = Math.floor(polls++ / 10);
      seconds[s] = Math.max(seconds[s] ?? 0, now);
    } catch {
      /* not started yet, or gone */
    }
  }, 100);
  const status = await new Promise<number | null>((resolve) => p.on('close', resolve));
  clearInterval(poll);
  return { status, stdout, stderr, anonKiB, seconds: [...seconds].map((k) => k ?? 0) };
}

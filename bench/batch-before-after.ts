/**
 * Same-run before/after of the batch engine, whole process: `node dist/bench/batch-before-after.js --before <build>
 * --after <build> [--rounds 7] [--images 64] [--mp 1,12] [--dir /tmp/imgpu-before-after] [--ops equalize,erode,clahe]
 * [--flags "--device cpu"] [--out NAME]`.
 *
 * A build is a folder with bin/imgpu.js and dist/ (bench/build-at.sh makes one of any commit). Over one folder of
 * JPEG photos (bench/common.ts makePhotoFolder: test/fixtures/images brought to `images` sizes between the two `--mp`
 * megapixel counts, sharp q90 4:2:0), each operation — `equalize`, `morph erode --se rect:5x5` (on gray, opArgs),
 * `clahe` (colour CLAHE on Y) — runs as the user runs it, `imgpu <op> <folder> <out>` (plus `--flags`), once untimed per build
 * (a first process compiles the pipelines into the driver's cache), then `rounds` times per build, the builds
 * alternating and the first of each pair swapped every round, so that the machine's drift falls on both alike.
 * Images/s = images ÷ the process's wall clock (start to exit, the device's creation and the module loading
 * included). Prints per operation and build the median and min–max, the after/before ratio of the medians, and
 * whether the two builds' outputs are byte-identical; one JSON line per operation on stdout; --out NAME also writes
 * bench/results/NAME.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makePhotoFolder } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const builds = { before: resolve(arg('before', '')), after: resolve(arg('after', '')) };
const rounds = Number(arg('rounds', '7'));
const images = Number(arg('images', '64'));
const [mpLo, mpHi] = arg('mp', '1,12').split(',').map(Number);
const dir = arg('dir', '/tmp/imgpu-before-after');
const flags = arg('flags', '').split(' ').filter(Boolean);
const outName = arg('out', '');

/** The operations measured: each one's CLI words before `<in> <out>`. */
const OPS: Record<string, string[]> = { equalize: ['equalize'], erode: ['morph', 'erode', '--se', 'rect:5x5'], clahe: ['clahe'] };
const ops = arg('ops', Object.keys(OPS).join(',')).split(',');

type Label = keyof typeof builds;

/**
 * The same work for both builds: morphology on colour input went per channel after 0d1e794 (`--gray` asks for the
 * gray read the earlier builds always made), so a build whose `morph --help` offers --gray gets it for erode.
 */
const grayFlag = new Map<Label, string[]>();
function opArgs(label: Label, op: string): string[] {
  if (op !== 'erode') return OPS[op];
  if (!grayFlag.has(label)) {
    const help = spawnSync(process.execPath, [join(builds[label], 'bin', 'imgpu.js'), 'morph', '--help'], { encoding: 'utf8' }).stdout;
    grayFlag.set(label, /--gray\b/.test(help) ? ['--gray'] : []);
  }
  return [...OPS[op], ...grayFlag.get(label)!];
}

/** One timed process: images/s of its whole run (exit 0 and every image processed, else it throws). */
function runOnce(label: Label, op: string, photos: string): number {
  const out = join(dir, `out-${label}-${op}`);
  const t = performance.now();
  const r = spawnSync(process.execPath, [join(builds[label], 'bin', 'imgpu.js'), ...opArgs(label, op), photos, out, '--overwrite', '--json', '--quiet', ...flags], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t) / 1000;
  const summary = r.status === 0 ? (JSON.parse(r.stdout.trim().split('\n').pop()!) as { processed: number }) : undefined;
  if (!summary || summary.processed !== images) throw new Error(`${label} ${op}: exit ${r.status}, ${summary?.processed} of ${images} processed\n${r.stderr}`);
  return images / seconds;
}

function stats(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return { median: s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2, min: s[0], max: s[s.length - 1] };
}

/** Outputs of the two builds with the same bytes, of all. */
function identical(op: string): string {
  const a = join(dir, `out-before-${op}`), b = join(dir, `out-after-${op}`);
  const files = readdirSync(a).filter((f) => !f.startsWith('.'));
  const same = files.filter((f) => existsSync(join(b, f)) && readFileSync(join(a, f)).equals(readFileSync(join(b, f)))).length;
  return `${same}/${files.length}`;
}

async function main(): Promise<void> {
  for (const [label, b] of Object.entries(builds)) {
    if (!existsSync(join(b, 'bin', 'imgpu.js')) || !existsSync(join(b, 'dist', 'src'))) throw new Error(`--${label} ${b}: not a build (bin/imgpu.js and dist/src; bench/build-at.sh makes one)`);
  }
  for (const op of ops) if (!OPS[op]) throw new Error(`--ops: unknown ${op} (${Object.keys(OPS).join(', ')})`);
  mkdirSync(dir, { recursive: true });
  const photos = await makePhotoFolder(join(dir, `photos-${images}-${mpLo}-${mpHi}`), images, { mp: [mpLo, mpHi] });
  const results = [];
  for (const op of ops) {
    const rates: Record<Label, number[]> = { before: [], after: [] };
    for (const label of ['before', 'after'] as const) runOnce(label, op, photos); // warm-up, untimed
    for (let r = 0; r < rounds; r++) {
      for (const label of (r % 2 ? ['after', 'before'] : ['before', 'after']) as Label[]) rates[label].push(runOnce(label, op, photos));
    }
    const before = stats(rates.before), after = stats(rates.after);
    const line = {
      op, images, mp: [mpLo, mpHi], rounds, flags: flags.join(' '), before, after, ratio: after.median / before.median, identical: identical(op), rates,
      machine: `${availableParallelism()} CPUs, load ${loadavg()[0].toFixed(1)}`, date: new Date().toISOString(),
    };
    results.push(line);
    const f = (s: { median: number; min: number; max: number }) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
    console.error(`${op.padEnd(9)} before ${f(before)}  after ${f(after)} images/s  after/before ${line.ratio.toFixed(3)}  identical ${line.identical}`);
    console.log(JSON.stringify(line));
    if (outName) writeFileSync(join('bench', 'results', `${outName}.json`), JSON.stringify({ builds, results }, null, 1));
  }
}

main().catch((e: unknown) => {
  console.error(`batch-before-after: ${(e as Error).message}`);
  process.exit(1);
});

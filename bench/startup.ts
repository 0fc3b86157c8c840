/**
 * Start-up of one small image, whole process (issue 40 item 5): `node dist/bench/startup.js [--rounds 9] [--out NAME]`
 * after `npm run build` (or `npm run prebench`: tsc, then the CLI's bundle). Interleaved rounds of `imgpu equalize` on
 * samples/camera.png (512×512 PNG) and the 512×512 JPEG fixture, each a whole process: the CLI as users run it
 * (bin/imgpu.js, which runs the bundle, scripts/bundle-cli.mjs) and unbundled (tsc's dist/src/cli/main.js, with the
 * same V8 compile cache as bin/imgpu.js), each with `--device cpu` and `--device gpu`; bundled with no flags and with
 * `--device gpu --pipeline-cache off` (src/cli/pipeline-cache.ts: the other GPU runs use it from round 2 on); python + cv2
 * doing the same. Per variant: wall ms from spawn to exit, `--json`'s start-up points (modules loaded, device ready,
 * op run, output written) and exit (ms from process.exit() until the parent saw the process end, through a preload
 * that notes when process.exit is called). The first round is left out of the medians (a fresh machine compiles the
 * shaders into the driver's cache once). Writes bench/results/<out>.json and prints a Markdown table.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const rounds = Number(arg('rounds', '9'));
const name = arg('out', 'startup');
const tmp = mkdtempSync(join(tmpdir(), 'imgpu-startup-'));
const INPUTS = { png: 'samples/camera.png', jpg: 'test/fixtures/jpeg/camera_q95_cv2.jpg' };

/** Notes (on stderr) the wall-clock time at which the CLI calls process.exit: the exit's cost is measured from it. */
const PRELOAD = join(tmp, 'exit-mark.mjs');
writeFileSync(PRELOAD, `import { writeSync } from 'node:fs';
const exit = process.exit;
process.exit = function (code) { writeSync(2, 'imgpu-bench-exit-at ' + (performance.timeOrigin + performance.now()) + '\\n'); return exit.call(process, code); };
`);

const PY = `import cv2, sys
img = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
cv2.imwrite(sys.argv[2], cv2.equalizeHist(img))`;

/** bin/imgpu.js's compile cache (module.enableCompileCache() with no folder: Node's default, in the temporary folder). */
const COMPILE_CACHE = join(tmpdir(), 'node-compile-cache');

type Variant = { cmd: string; args: (input: string, out: string) => string[]; env?: Record<string, string> };
const cli = (entry: string, device: string[], env?: Record<string, string>): Variant => ({
  cmd: process.execPath, env, args: (i, o) => ['--import', PRELOAD, entry, 'equalize', i, o, ...device, '--json'],
});
const unbundled = { NODE_COMPILE_CACHE: COMPILE_CACHE };
const VARIANTS: Record<string, Variant> = {
  'bundled --device cpu': cli('bin/imgpu.js', ['--device', 'cpu']),
  'unbundled --device cpu': cli('dist/src/cli/main.js', ['--device', 'cpu'], unbundled),
  'bundled --device gpu': cli('bin/imgpu.js', ['--device', 'gpu']),
  'unbundled --device gpu': cli('dist/src/cli/main.js', ['--device', 'gpu'], unbundled),
  'bundled --device gpu --pipeline-cache off': cli('bin/imgpu.js', ['--device', 'gpu', '--pipeline-cache', 'off']),
  'bundled, no flags': cli('bin/imgpu.js', []),
  // Debian's Python (with cv2) where it is there, as the tests use; else the first python3 on PATH.
  'python + cv2': { cmd: existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', args: (i, o) => ['-c', PY, i, o] },
};

interface Run { wall: number; exit?: number; points: Record<string, number> }

function runOnce(v: Variant, input: string, out: string): Run | { error: string } {
  const t0 = Date.now();
  const r = spawnSync(v.cmd, v.args(input, out), { encoding: 'utf8', env: { ...process.env, ...v.env } });
  const end = Date.now();
  if (r.status !== 0) return { error: (r.stderr ?? String(r.error)).slice(-300) };
  const at = /imgpu-bench-exit-at ([\d.]+)/.exec(r.stderr)?.[1];
  let points: Record<string, number> = {};
  try {
    const j = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { startup?: Record<string, number> };
    points = j.startup ?? {};
  } catch {
    /* python prints nothing */
  }
  return { wall: end - t0, exit: at === undefined ? undefined : end - Number(at), points };
}

const median = (xs: number[]) => {
  const s = xs.toSorted((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : undefined;
};
const fmt = (xs: number[]) => (xs.length ? `${Math.round(median(xs)!)} (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})` : '–');

const bundle = 'dist/src/bundle/main.js';
if (!existsSync(bundle) || statSync(bundle).mtimeMs < statSync('dist/src/cli/main.js').mtimeMs) {
  throw new Error(`${bundle} is missing or older than dist/src/cli/main.js: run npm run build (or node scripts/bundle-cli.mjs) first`);
}
const runs: Record<string, (Run | { error: string })[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const [kind, input] of Object.entries(INPUTS)) {
    for (const [label, v] of Object.entries(VARIANTS)) (runs[`${label}, ${kind}`] ??= []).push(runOnce(v, input, join(tmp, `out.${kind}`)));
  }
}
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/${name}.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds, runs }, null, 2));
const lines = ['| variant, input | wall ms | modules loaded at | device ready at | op done at | written at | exit ms |', '|---|---:|---:|---:|---:|---:|---:|'];
for (const [key, all] of Object.entries(runs)) {
  const ok = all.slice(1).filter((x): x is Run => 'wall' in x);
  const col = (f: (x: Run) => number | undefined) => fmt(ok.map(f).filter((x): x is number => x !== undefined));
  const errors = all.length - 1 - ok.length;
  lines.push(`| ${key}${errors ? ` (${errors} failed)` : ''} | ${col((x) => x.wall)} | ${col((x) => x.points.modules)} | ${col((x) => x.points.device)} | ${col((x) => x.points.op)} | ${col((x) => x.points.written)} | ${col((x) => x.exit)} |`);
}
console.log(`median (min–max) of rounds 2–${rounds}, ms since the process started; exit: process.exit() to the process's end\n${lines.join('\n')}`);

/**
 * The throughput matrix and start-up (issue 40 items 1 and 5):
 * `npm run bench -- --throughput [--dir /dev/shm/imgpu-tp] [--images 32] [--procs 3] [--startup 7]
 *  [--folders jpeg-cv2,jpeg-sharp,png] [--ops equalize,otsu,…] [--variants 'default;--cpu-lane 0'] [--imgpu BUILD] [--out throughput]`
 *
 * Folders (made once, deterministically; bench/throughput_folders.py): real photographs of several sources mirror-tiled
 * to 2–24 MP, written by libjpeg through cv2 (quality 95, every sampling layout, gray, progressive, restart markers,
 * EXIF orientation), by sharp/libvips (quality 80–90, optimised Huffman tables, 4:2:0 and 4:4:4), and as 8- and 16-bit
 * PNG. For every folder and operation: `--procs` imgpu processes one after another (batch mode, no flags: what a user
 * runs), each timed whole from spawn to exit (wall clock) beside its own `--json` images/s — with `--variants`, each
 * set of extra imgpu flags (`;` between sets, `default` for none) as a row of its own, the sets' processes taking
 * turns in every round, against the same pool runs; as many runs of the
 * 16-process cv2 pool (bench/batch_anchors.py) over the same folder, timed in-process and as a whole process; and how
 * many outputs are byte-identical to the pool's. Start-up: `--startup` rounds of one 512×512 image through
 * `imgpu --device cpu`, `--device gpu` and python + cv2, each a whole process, interleaved.
 * `--imgpu BUILD` runs another build's CLI (BUILD/bin/imgpu.js; bench/build-at.sh makes one of any commit) for a
 * before/after in the same folders. The JSON also records which PNG and zlib libraries cv2 was built with, and Node's
 * zlib (the one libpng binds to in imgpu's process): PNG bytes are equal only where the deflate code is.
 * Writes bench/results/<out>.json, <out>.svg and <out>.md (the table, worst cell first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { readImage } from '../src/io/index.js';
import { plotBatchSvg } from './plot.js';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};

/** Each operation: imgpu's arguments (folder in, folder out) and bench/batch_anchors.py's name for the cv2 equivalent. */
const OPS: Record<string, { args: string[]; cv2: string }> = {
  equalize: { args: ['equalize'], cv2: 'equalize' },
  otsu: { args: ['threshold', '--method', 'otsu'], cv2: 'otsu' },
  pipeline: { args: ['pipeline', '@', 'equalize | threshold --method otsu'], cv2: 'pipeline' },
  mean: { args: ['threshold', '--method', 'mean', '--window', '11', '--offset', '2'], cv2: 'mean' },
  clahe: { args: ['clahe', '--tiles', '8x8', '--clip', '2'], cv2: 'clahe' },
  gamma: { args: ['gamma', '--gamma', '0.5'], cv2: 'gamma' },
  erode: { args: ['morph', 'erode', '--se', 'rect:5x5'], cv2: 'erode' },
  dilate: { args: ['morph', 'dilate', '--se', 'rect:5x5'], cv2: 'dilate' },
  gauss: { args: ['filter', '--filter', 'gauss:2', '--saturate', '--truncate', '3', '--border', 'reflect101'], cv2: 'gauss' },
  box: { args: ['filter', '--filter', 'box:5', '--saturate', '--border', 'reflect101'], cv2: 'box' },
};
const FOLDERS = ['jpeg-cv2', 'jpeg-sharp', 'png'];
/** The CLI timed: this checkout's, or `--imgpu`'s build's. */
const IMGPU_BIN = join(arg('imgpu', '.'), 'bin', 'imgpu.js');

/** imgpu's command line for an operation over `src` into `out`: `@` marks where the pipeline's text goes after them. */
function imgpuArgs(op: string, src: string, out: string): string[] {
  const a = OPS[op].args;
  if (a[0] === 'pipeline') return ['pipeline', src, out, a[2]];
  if (a[0] === 'morph') return ['morph', a[1], src, out, ...a.slice(2)];
  return [a[0], src, out, ...a.slice(1)];
}

/** Runs a command to its exit; its wall clock (spawn to exit, ms), exit code, stdout and stderr's tail. */
function timed(cmd: string, args: string[]): { ms: number; status: number | null; stdout: string; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { ms: performance.now() - t0, status: r.status, stdout: r.stdout ?? '', stderr: (r.stderr ?? String(r.error ?? '')).slice(-400) };
}

function lastJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text.trim().split('\n').pop() ?? '');
  } catch {
    return undefined;
  }
}

interface Spread { median: number; min: number; max: number; n: number }
function spread(xs: number[]): Spread | null {
  if (!xs.length) return null;
  const s = xs.toSorted((a, b) => a - b);
  const mid = s.length >> 1;
  return { median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2, min: s[0], max: s[s.length - 1], n: s.length };
}

/** The three folders under `dir` (kept when already made with `count` images each), and the manifest of what each file is. */
async function makeFolders(dir: string, count: number): Promise<Record<string, unknown>> {
  const manifest = join(dir, 'manifest.json');
  if (existsSync(manifest) && FOLDERS.every((f) => existsSync(join(dir, f)) && readdirSync(join(dir, f)).length === count)) return JSON.parse(readFileSync(manifest, 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const py = timed('python3', ['bench/throughput_folders.py', dir, String(count)]);
  const made = lastJson(py.stdout);
  if (!made) throw new Error(`bench/throughput_folders.py failed: ${py.stderr}`);
  const files = made.files as Record<string, unknown>;
  mkdirSync(join(dir, 'jpeg-sharp'));
  const srcs = readdirSync(join(dir, 'src-sharp')).sort();
  await Promise.all(srcs.map(async (f, i) => {
    // libvips at quality 80–90 with optimised Huffman tables, 4:2:0 and 4:4:4 in turn.
    const quality = 80 + ((i * 7) % 11), chromaSubsampling = i % 3 === 2 ? '4:4:4' : '4:2:0';
    const to = join(dir, 'jpeg-sharp', f.replace(/\.png$/, '.jpg'));
    await sharp(join(dir, 'src-sharp', f)).jpeg({ quality, chromaSubsampling, optimiseCoding: true }).toFile(to);
    files[`jpeg-sharp/${f.replace(/\.png$/, '.jpg')}`] = { quality, chromaSubsampling, optimiseCoding: true };
  }));
  rmSync(join(dir, 'src-sharp'), { recursive: true, force: true });
  writeFileSync(manifest, JSON.stringify(made));
  return made;
}

/** Whether two image files hold the same pixels (imgpu's reader: shape, depth and samples). */
async function samePixels(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([readImage(a), readImage(b)]);
  return x.dtype === y.dtype && x.shape.join() === y.shape.join() && Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength).equals(Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
}

/**
 * How many of `out`'s files are byte-identical to the file of the same name in `ref` (cv2's outputs); of the others,
 * how many decode to the same pixels (PNG: libvips and libpng write the same pixels in different bytes).
 */
async function sameFiles(out: string, ref: string): Promise<{ identical: number; same_pixels: number; of: number; differ: string[] }> {
  const names = existsSync(ref) ? readdirSync(ref).filter((f) => !f.startsWith('.')) : [];
  const differ = names.filter((f) => !(existsSync(join(out, f)) && readFileSync(join(out, f)).equals(readFileSync(join(ref, f)))));
  let pixels = names.length - differ.length;
  const stillDiffer: string[] = [];
  for (const f of differ) {
    if (existsSync(join(out, f)) && (await samePixels(join(out, f), join(ref, f)))) pixels++;
    else stillDiffer.push(f);
  }
  return { identical: names.length - differ.length, same_pixels: pixels, of: names.length, differ: stillDiffer };
}

/** Extra imgpu flags of a variant: `default` (or nothing) is none. */
const variantFlags = (v: string): string[] => (v.trim() === 'default' ? [] : v.trim().split(/\s+/).filter(Boolean));

/** imgpu's runs of one variant in a cell: whole-process and in-process images/s, start-up, the last summary. */
interface Runs { wall: number[]; inProcess: number[]; startup: number[]; last?: Record<string, unknown>; error?: string }

/**
 * One cell per variant: the pool `procs` times; imgpu `procs` times per variant, the variants taking turns in each
 * round (a first process on a fresh machine compiles the kernels: it is the first variant's); identity of each
 * variant's last run with the pool's outputs.
 */
async function cell(dir: string, folder: string, op: string, procs: number, variants: string[]): Promise<Record<string, unknown>[]> {
  const src = join(dir, folder), ref = join(dir, `py-${folder}-${op}`), out = join(dir, `out-${folder}-${op}`);
  const count = readdirSync(src).length;
  const pool: number[] = [], poolWall: number[] = [];
  let poolError: string | undefined;
  for (let k = 0; k < procs; k++) {
    rmSync(ref, { recursive: true, force: true });
    const r = timed('python3', ['bench/batch_anchors.py', src, ref, OPS[op].cv2, '16', 'pool-only']);
    const j = lastJson(r.stdout) as { pool?: number; images?: number } | undefined;
    if (!j?.pool) poolError = r.stderr;
    else {
      pool.push(j.pool);
      poolWall.push((j.images ?? count) / (r.ms / 1000));
    }
  }
  const runs: Runs[] = variants.map(() => ({ wall: [], inProcess: [], startup: [] }));
  for (let k = 0; k < procs; k++) {
    for (const [i, v] of variants.entries()) {
      const into = `${out}-${i}`;
      rmSync(into, { recursive: true, force: true });
      const r = timed(process.execPath, [IMGPU_BIN, ...imgpuArgs(op, src, into), ...variantFlags(v), '--json', '--quiet']);
      const j = lastJson(r.stdout), x = runs[i];
      if (!j || typeof j.images_per_s !== 'number') {
        x.error = r.stderr;
        continue;
      }
      x.last = j;
      x.wall.push((j.processed as number) / (r.ms / 1000));
      x.inProcess.push(j.images_per_s);
      if (typeof j.startup_ms === 'number') x.startup.push(j.startup_ms);
    }
  }
  const cells: Record<string, unknown>[] = [];
  for (const [i, v] of variants.entries()) {
    const same = await sameFiles(`${out}-${i}`, ref);
    rmSync(`${out}-${i}`, { recursive: true, force: true });
    const { wall, inProcess, startup, last, error } = runs[i];
    cells.push({
      folder, op, ...(variants.length > 1 || variantFlags(v).length ? { flags: variantFlags(v).join(' ') } : {}), images: count,
      imgpu_wall: spread(wall), imgpu_in_process: spread(inProcess), imgpu_startup_ms: spread(startup),
      pool_in_process: spread(pool), pool_wall: spread(poolWall),
      same_as_cv2: { identical: same.identical, same_pixels: same.same_pixels, of: same.of, differ: same.differ.slice(0, 8) },
      jpeg: last?.jpeg, huffman: last?.huffman, lanes: last?.lanes, busy: last?.busy, failed: (last?.failed as unknown[] | undefined)?.length ?? null,
      ...(error ? { imgpu_error: error } : {}), ...(poolError ? { pool_error: poolError } : {}),
    });
  }
  rmSync(ref, { recursive: true, force: true });
  return cells;
}

const PY_STARTUP = `import cv2, sys
img = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
cv2.imwrite(sys.argv[2], cv2.equalizeHist(img))`;

/** `rounds` interleaved rounds of one small image through each variant, each a whole process: wall ms and startup. */
function startupRounds(rounds: number, dir: string): Record<string, unknown> {
  const inputs = { png: 'samples/camera.png', jpg: 'test/fixtures/jpeg/camera_q95_cv2.jpg' };
  const variants: Record<string, (input: string, out: string) => [string, string[]]> = {
    'imgpu --device cpu': (i, o) => [process.execPath, ['bin/imgpu.js', 'equalize', i, o, '--device', 'cpu', '--json']],
    'imgpu --device gpu': (i, o) => [process.execPath, ['bin/imgpu.js', 'equalize', i, o, '--device', 'gpu', '--json']],
    'imgpu (no flags)': (i, o) => [process.execPath, ['bin/imgpu.js', 'equalize', i, o, '--json']],
    'python + cv2': (i, o) => ['python3', ['-c', PY_STARTUP, i, o]],
  };
  const out: Record<string, { wall_ms: number[]; startup: unknown[] }> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [kind, input] of Object.entries(inputs)) {
      for (const [name, make] of Object.entries(variants)) {
        const [cmd, args] = make(input, join(dir, `startup-out.${kind}`));
        const t = timed(cmd, args);
        const entry = (out[`${name}, ${kind}`] ??= { wall_ms: [], startup: [] });
        if (t.status !== 0) {
          entry.startup.push({ error: t.stderr });
          continue;
        }
        entry.wall_ms.push(t.ms);
        const j = lastJson(t.stdout);
        if (j) entry.startup.push({ startup_ms: j.startup_ms, ...(j.startup as object), jpeg: j.jpeg });
      }
    }
  }
  // The first round is reported but left out of the spread: a fresh machine compiles the shaders once (driver cache).
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { ...spread(v.wall_ms.slice(1)), first_ms: v.wall_ms[0], all_ms: v.wall_ms.map(Math.round), startup: v.startup }]));
}

const CV2_CODECS = `import cv2, json
lines = [l.strip() for l in cv2.getBuildInformation().splitlines() if l.strip().lower().startswith(('zlib', 'png'))]
print(json.dumps({'version': cv2.__version__, 'libraries': lines}))`;

/** cv2's PNG and zlib libraries (its build information) and Node's zlib: what decides whether PNG bytes can agree. */
function codecLibraries(): Record<string, unknown> {
  const r = timed('python3', ['-c', CV2_CODECS]);
  return { cv2: lastJson(r.stdout) ?? { error: r.stderr }, node_zlib: process.versions.zlib, imgpu: IMGPU_BIN };
}

const f1 = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
const range = (s: Spread | null) => (s ? `${f1(s.median)} (${f1(s.min)}–${f1(s.max)})` : '–');

/** The matrix as a Markdown table, the worst wall-clock ratio first. */
function table(cells: Record<string, unknown>[]): string {
  const ratio = (c: Record<string, unknown>) => ((c.imgpu_wall as Spread | null)?.median ?? 0) / ((c.pool_in_process as Spread | null)?.median ?? Infinity);
  const lines = ['| folder | operation | imgpu, whole process (images/s) | imgpu, `--json` | cv2 pool, in-process | cv2 pool, whole process | wall ÷ pool | same bytes as cv2 | JPEG path |', '|---|---|---:|---:|---:|---:|---:|---:|---|'];
  for (const c of cells.toSorted((a, b) => ratio(a) - ratio(b))) {
    const same = c.same_as_cv2 as { identical: number; same_pixels: number; of: number };
    lines.push(`| ${String(c.folder)} | ${String(c.op)}${c.flags ? ` \`${c.flags as string}\`` : ''} | ${range(c.imgpu_wall as Spread)} | ${range(c.imgpu_in_process as Spread)} | ${range(c.pool_in_process as Spread)} | ${range(c.pool_wall as Spread)} | ${ratio(c).toFixed(2)}× | ${same.identical}/${same.of}${same.same_pixels > same.identical ? ` (pixels ${same.same_pixels})` : ''} | ${c.jpeg ? JSON.stringify(c.jpeg) : ''} |`);
  }
  return lines.join('\n');
}

export async function throughput(): Promise<void> {
  const dir = arg('dir', '/dev/shm/imgpu-tp');
  const count = Number(arg('images', '32'));
  const procs = Number(arg('procs', '3'));
  const rounds = Number(arg('startup', '7'));
  const folders = arg('folders', FOLDERS.join(',')).split(',');
  const ops = arg('ops', Object.keys(OPS).join(',')).split(',');
  const variants = arg('variants', 'default').split(';');
  for (const o of ops) if (!OPS[o]) throw new Error(`--ops: unknown ${o} (known: ${Object.keys(OPS).join(', ')})`);
  const name = arg('out', 'throughput');
  mkdirSync('bench/results', { recursive: true });
  const result: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, images: count, procs, variants, codecs: codecLibraries() };
  const save = (cells: Record<string, unknown>[]) => {
    writeFileSync(`bench/results/${name}.json`, JSON.stringify({ ...result, cells }, null, 2));
    writeFileSync(`bench/results/${name}.md`, table(cells));
    writeFileSync(`bench/results/${name}.svg`, plotBatchSvg(`imgpu whole process (wall clock) vs the 16-process cv2 pool, images/s, median of ${procs}`, cells.map((c) => ({
      op: `${String(c.folder)}/${String(c.op)}${c.flags ? ` ${c.flags as string}` : ''}`, gpu: { images_per_s: (c.imgpu_wall as Spread | null)?.median }, anchors: { pool: (c.pool_in_process as Spread | null)?.median },
    }))));
  };
  if (rounds > 0) {
    mkdirSync(dir, { recursive: true });
    result.startup = startupRounds(rounds, dir);
    console.error(JSON.stringify(result.startup, (k, v) => (k === 'startup' ? undefined : v)));
  }
  const t0 = performance.now();
  result.folders = await makeFolders(dir, count);
  result.folders_made_s = (performance.now() - t0) / 1000;
  const cells: Record<string, unknown>[] = [];
  for (const folder of folders) {
    for (const op of ops) {
      for (const c of await cell(dir, folder, op, procs, variants)) {
        cells.push(c);
        console.error(`${folder} ${op}${c.flags ? ` ${c.flags as string}` : ''}: imgpu wall ${range(c.imgpu_wall as Spread)}, --json ${range(c.imgpu_in_process as Spread)}, pool ${range(c.pool_in_process as Spread)}, same ${JSON.stringify(c.same_as_cv2)}${c.imgpu_error ? ` imgpu error: ${JSON.stringify(c.imgpu_error)}` : ''}${c.pool_error ? ` pool error: ${JSON.stringify(c.pool_error)}` : ''}`);
      }
      save(cells);
    }
  }
  save(cells);
}

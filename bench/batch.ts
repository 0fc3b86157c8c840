/**
 * Batch throughput: `node dist/bench/batch.js [--images 210] [--mp 1,24] [--fill resize|mirror] [--dir /tmp/imgpu-batch]
 * [--out batch] [--ops equalize,otsu,pipeline] [--rows gpu-jpeg-gpu,gpu-jpeg-cpu-huffman,gpu-jpeg-hybrid,gpu-jpeg-cpu,cpu,…,cv2]
 * [--python python3] [--warmup 1]`.
 *
 * The folder (made once in <dir>/photos-<fill>-<mp>, reused while it holds `images` files): the real photographs of
 * test/fixtures/images (camera, chelsea, coins, moon, page, camera_301x256, chelsea16; the gray ones converted to
 * sRGB, so every file is a 3-component JPEG), taken in turn and brought to `images` sizes spread evenly between the
 * two `--mp` megapixel counts (default 1 and 24; aspect kept), written by sharp (libvips) at JPEG quality 90, 4:2:0,
 * baseline with optimised Huffman tables — a folder of camera-sized photos (default 210, 1–24 MP). `--fill resize`
 * (default, as the earlier runs in bench/results/h100-batch*.json): resized up (Lanczos), so smooth — about 0.05 byte
 * per pixel, cheap to entropy-code; `--fill mirror`: mirror-tiled at their own resolution (libvips' mirror
 * extension; at least the source's size), a photograph's detail in every block — about 0.25 byte per pixel, nearer
 * a camera's files.
 *
 * For `equalize`, `threshold --method otsu` and the pipeline `equalize | threshold --method otsu` (--ops; also `clahe`,
 * colour CLAHE --tiles 8x8 --clip 2, when named), each
 * selected row (--rows) in the same run, images/s of the CLI's own batch mode (`imgpu <op> <folder> <out>`, one
 * process) and of bench/batch_anchors.py:
 * - gpu-jpeg-gpu: `--device gpu --jpeg gpu` (JPEG decode and encode arithmetic on the GPU, Huffman decoding and the
 *   encoder's entropy coding on the GPU by default — IMGPU_JPEG_DECODE_ENTROPY and IMGPU_JPEG_ENTROPY from the
 *   environment);
 * - gpu-jpeg-cpu-huffman: the same with IMGPU_JPEG_DECODE_ENTROPY=cpu (Huffman decoding by libjpeg on libuv's threads);
 * - gpu-jpeg-gpu-entropy: the same with IMGPU_JPEG_ENTROPY=gpu (the encoder's entropy coding on the GPU, whatever
 *   the default);
 * - gpu-jpeg-hybrid: the same with IMGPU_JPEG_ENTROPY=cpu (the encoder's entropy coding on libuv's threads);
 * - gpu-jpeg-gpu-depth2: gpu-jpeg-gpu with two photos processed at once (IMGPU_BATCH_DEPTH=2; run.ts IMAGES_IN_FLIGHT);
 * - gpu-jpeg-cpu: `--device gpu --jpeg cpu` (libjpeg-turbo whole on the codec workers, pixels up/downloaded);
 * - gpu-jpeg-gpu-jobsN, gpu-jpeg-cpu-jobsN (N = 2, 3, 4, 6): the same split over N processes (`--jobs N`);
 * - cpu: `--device cpu`;
 * - auto: no flags — what a user's `imgpu <op> <folder> <out>` runs (on a hardware GPU: --jpeg gpu and a CPU lane);
 * - gpu-jpeg-gpu-laneN (N = 4, 6, 8, 10, 12, 14): gpu-jpeg-gpu with a CPU lane of N images at once (`--cpu-lane N`);
 * - gpu-sharp (equalize only): gpu-jpeg-cpu with JPEG through sharp (IMGPU_NO_NATIVE_JPEG=1);
 * - gpu-js-copy (equalize only): gpu-jpeg-cpu with host copies through TypedArray.set (IMGPU_NO_NATIVE_COPY=1);
 * - cv2: cv2.imread → op → cv2.imwrite in a plain loop and in a 16-process multiprocessing.Pool.
 * `--warmup N` (default 1): each imgpu row runs N times untimed first, into the same folder — a first process on a
 * machine compiles its pipelines into the driver's cache (docs/performance.md), which every later run finds; the
 * cv2 rows read the folder after the first row has, from the page cache alike.
 * Each imgpu row keeps its batch `--json` summary: which JPEG path decoded the inputs (`jpeg`), the phase times
 * (`phases_ms`: read, host, upload, kernels, download, write) and busy fractions (`busy`: main thread, codec
 * workers reading, writing); where the cv2 row ran, `same_as_cv2` counts the outputs byte-identical to cv2's.
 * Writes bench/results/<out>.json and a bar plot, <out>.svg (after each op, so a run cut short keeps the ops done),
 * and prints a line per op and row on stderr, each op's results as a JSON line on stdout.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePhotoFolder, type PhotoFill } from './common.js';
import { plotBatchSvg } from './plot.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const count = Number(arg('images', '210'));
const [mpLo, mpHi] = arg('mp', '1,24').split(',').map(Number);
const dir = arg('dir', '/tmp/imgpu-batch');
const outName = arg('out', 'batch');
const python = arg('python', 'python3');
const fill = arg('fill', 'resize');
const warmup = Number(arg('warmup', '1'));

const OPS: Record<string, (src: string, out: string) => string[]> = {
  equalize: (src, out) => ['equalize', src, out],
  otsu: (src, out) => ['threshold', src, out, '--method', 'otsu'],
  pipeline: (src, out) => ['pipeline', src, out, 'equalize | threshold --method otsu'],
  // Colour in, colour out (YCrCb's Y, CLAHE, back): on the GPU path resident from decode to encode (issue 40 item 2).
  clahe: (src, out) => ['clahe', src, out, '--tiles', '8x8', '--clip', '2'],
  // Colour per channel (issue 40 item 3): cv2.erode and cv2.GaussianBlur (8-bit fixed point: --truncate 3) of the colour image.
  erode: (src, out) => ['morph', 'erode', src, out, '--se', 'rect:5x5'],
  gauss: (src, out) => ['filter', src, out, '--filter', 'gauss:2', '--saturate', '--truncate', '3', '--border', 'reflect101'],
};

/** An imgpu row: the flags and environment of its run, and whether it runs for every op or for equalize alone. */
interface ImgpuRow { key: string; flags: string[]; env?: Record<string, string>; equalizeOnly?: boolean }
const IMGPU_ROWS: Record<string, ImgpuRow> = {
  'gpu-jpeg-gpu': { key: 'gpu_jpeg_gpu', flags: ['--device', 'gpu', '--jpeg', 'gpu'] },
  // The same with the encoder's entropy coding on the GPU whatever the environment says (codecs/jpeg/encode/huffman-encode.ts; the default).
  'gpu-jpeg-gpu-entropy': { key: 'gpu_jpeg_gpu_entropy', flags: ['--device', 'gpu', '--jpeg', 'gpu'], env: { IMGPU_JPEG_ENTROPY: 'gpu' } },
  // The decoder's Huffman decoding on libuv's threads (libjpeg's coefficients uploaded) instead of the GPU (codecs/jpeg/decode/huffman-decode.ts).
  'gpu-jpeg-cpu-huffman': { key: 'gpu_jpeg_cpu_huffman', flags: ['--device', 'gpu', '--jpeg', 'gpu'], env: { IMGPU_JPEG_DECODE_ENTROPY: 'cpu' } },
  // And with the hybrid: the coefficients downloaded and entropy-coded by libjpeg on libuv's threads.
  'gpu-jpeg-hybrid': { key: 'gpu_jpeg_hybrid', flags: ['--device', 'gpu', '--jpeg', 'gpu'], env: { IMGPU_JPEG_ENTROPY: 'cpu' } },
  // gpu-jpeg-gpu with two photos in flight: whether one photo's GPU waits now leave the main thread room for the next.
  'gpu-jpeg-gpu-depth2': { key: 'gpu_jpeg_gpu_depth2', flags: ['--device', 'gpu', '--jpeg', 'gpu'], env: { IMGPU_BATCH_DEPTH: '2' } },
  'gpu-jpeg-cpu': { key: 'gpu_jpeg_cpu', flags: ['--device', 'gpu', '--jpeg', 'cpu'] },
  // The batch split over N processes (`--jobs N`), each with its own device, main thread and codec threads: whether
  // one process's main thread is what bounds the GPU path.
  ...Object.fromEntries([2, 3, 4, 6].flatMap((n) => [
    [`gpu-jpeg-gpu-jobs${n}`, { key: `gpu_jpeg_gpu_jobs${n}`, flags: ['--device', 'gpu', '--jpeg', 'gpu', '--jobs', String(n)] }],
    [`gpu-jpeg-cpu-jobs${n}`, { key: `gpu_jpeg_cpu_jobs${n}`, flags: ['--device', 'gpu', '--jpeg', 'cpu', '--jobs', String(n)] }],
  ])),
  cpu: { key: 'cpu', flags: ['--device', 'cpu'] },
  // What `imgpu <op> <folder> <out>` does with no flags: --device auto, --jpeg auto and --cpu-lane auto — on a
  // hardware GPU the JPEG arithmetic there and a CPU lane of the cores but four beside it (engine/batch/lane.ts).
  auto: { key: 'auto', flags: [] },
  // --jpeg gpu with a CPU lane of N images at once beside the GPU (--cpu-lane N).
  ...Object.fromEntries([4, 6, 8, 10, 12, 14].map((n) => [`gpu-jpeg-gpu-lane${n}`, { key: `gpu_jpeg_gpu_lane${n}`, flags: ['--device', 'gpu', '--jpeg', 'gpu', '--cpu-lane', String(n)] }])),
  // The GPU run with JPEG through sharp instead of the native codec (what it was before io/jpeg.ts).
  'gpu-sharp': { key: 'gpu_sharp_codecs', flags: ['--device', 'gpu', '--jpeg', 'cpu'], env: { IMGPU_NO_NATIVE_JPEG: '1' }, equalizeOnly: true },
  // And with the host copies into/out of mapped memory on the main thread (TypedArray.set) instead of native threads.
  'gpu-js-copy': { key: 'gpu_js_copy', flags: ['--device', 'gpu', '--jpeg', 'cpu'], env: { IMGPU_NO_NATIVE_COPY: '1' }, equalizeOnly: true },
};
const ROWS = [...Object.keys(IMGPU_ROWS), 'cv2'];

/** A comma-separated selection out of `known`; an unknown name stops the run before any work. */
function selection(flag: string, known: string[], dflt = known): string[] {
  const picked = arg(flag, dflt.join(',')).split(',').filter(Boolean);
  const bad = picked.filter((x) => !known.includes(x));
  if (bad.length) {
    console.error(`--${flag}: unknown ${bad.join(', ')} (known: ${known.join(', ')})`);
    process.exit(2);
  }
  return picked;
}
const ops = selection('ops', Object.keys(OPS), ['equalize', 'otsu', 'pipeline']); // clahe, erode, gauss when asked: --ops clahe,erode,gauss
const rows = selection('rows', ROWS);
selection('fill', ['resize', 'mirror']);

async function makeFolder(): Promise<string> {
  return makePhotoFolder(join(dir, `photos-${fill}-${mpLo}-${mpHi}`), count, { mp: [mpLo, mpHi], fill: fill as PhotoFill });
}

function imgpu(args: string[], env: Record<string, string> = {}): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['bin/imgpu.js', ...args, '--json', '--overwrite', '--quiet'], { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, ...env } });
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  } catch {
    return { error: r.stderr.slice(-500) };
  }
}

/** cv2's loop and 16-process pool over the folder, writing into `out` (bench/batch_anchors.py). */
function cv2Anchors(src: string, out: string, op: string): Record<string, unknown> {
  const py = spawnSync(python, ['bench/batch_anchors.py', src, out, op, '16'], { encoding: 'utf8' });
  try {
    return JSON.parse(py.stdout);
  } catch {
    return { error: (py.stderr || String(py.error)).slice(-300) };
  }
}

/** How many of `out`'s images are byte-identical to the file of the same name in `ref` (cv2's outputs). */
function sameFiles(out: string, ref: string): { identical: number; of: number } {
  const names = readdirSync(ref).filter((f) => f.endsWith('.jpg'));
  let identical = 0;
  for (const f of names) {
    const p = join(out, f);
    if (existsSync(p) && readFileSync(p).equals(readFileSync(join(ref, f)))) identical++;
  }
  return { identical, of: names.length };
}

/** One line per op and row: images/s, the JPEG path and the busiest phases, to read the run at a glance. */
function say(op: string, key: string, s: Record<string, unknown>): void {
  const busy = Object.entries((s.busy as Record<string, number>) ?? {}).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
  const rate = (s.images_per_s as number | undefined)?.toFixed(1) ?? `error: ${(typeof s.error === 'string' ? s.error : '').trim().split('\n').pop()}`;
  const same = s.same_as_cv2 as { identical: number; of: number } | undefined;
  console.error(`${op} ${key}: ${rate} images/s${s.lanes ? `, lanes ${JSON.stringify(s.lanes)}` : ''}${s.jpeg ? `, jpeg ${JSON.stringify(s.jpeg)}` : ''}${s.huffman ? `, huffman ${JSON.stringify(s.huffman)}` : ''}${busy ? `, busy: ${busy}` : ''}${same ? `, same as cv2 ${same.identical}/${same.of}` : ''}`);
}

async function main(): Promise<void> {
  const src = await makeFolder();
  const results: { op: string; [k: string]: unknown }[] = [];
  for (const op of ops) {
    const row: { op: string; [k: string]: unknown } = { op, images: count };
    // cv2 first, so each imgpu row's outputs can be compared with its files.
    const ref = join(dir, `py-${op}`);
    rmSync(ref, { recursive: true, force: true });
    if (rows.includes('cv2')) {
      row.anchors = cv2Anchors(src, ref, op);
      console.error(`${op} cv2: ${JSON.stringify(row.anchors)}`);
    }
    for (const name of rows) {
      const r = IMGPU_ROWS[name];
      if (!r || (r.equalizeOnly && op !== 'equalize')) continue;
      const out = join(dir, `out-${op}-${name}`);
      rmSync(out, { recursive: true, force: true });
      for (let w = 0; w < warmup; w++) imgpu([...OPS[op](src, out), ...r.flags], r.env);
      const summary = imgpu([...OPS[op](src, out), ...r.flags], r.env);
      if (existsSync(ref) && existsSync(out)) summary.same_as_cv2 = sameFiles(out, ref);
      rmSync(out, { recursive: true, force: true }); // ~0.5 GB a row at 210 photos
      say(op, r.key, summary);
      row[r.key] = summary;
    }
    console.log(JSON.stringify(row));
    results.push(row);
    save(results);
  }
}

/**
 * The folder the photos are read from and the outputs written to, with its filesystem (`df -T`): on the H200 machine
 * the VM's ext4 disk throttled a batch writing its ~0.85 GB of outputs, imgpu's rows 156–166 images/s there against
 * 188–193 on tmpfs in the same command, the pool's 108 against 113 — the disk, not the work, set the pace.
 */
function filesystemOf(path: string): string {
  const r = spawnSync('df', ['-T', path], { encoding: 'utf8' });
  const line = r.stdout?.trim().split('\n')[1]?.split(/\s+/);
  return line ? `${path} (${line[1]} ${line[0]})` : path;
}

/** The results so far, as JSON and as the plot. */
function save(results: { op: string; [k: string]: unknown }[]): void {
  mkdirSync('bench/results', { recursive: true });
  const folder = `${count} JPEG photos (test/fixtures/images, --fill ${fill}, sharp q90 4:2:0), ${mpLo}–${mpHi} MP`;
  writeFileSync(`bench/results/${outName}.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, folder, dir: filesystemOf(dir), rows: results }, null, 2));
  writeFileSync(`bench/results/${outName}.svg`, plotBatchSvg(`${count} JPEG photos, ${mpLo}–${mpHi} MP (${fill}): images/s (one run)`, results));
}

await main();

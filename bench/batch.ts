/**
 * Batch throughput: `node dist/bench/batch.js [--images 210] [--dir /tmp/imgpu-batch]`.
 * The folder: the photographs of test/fixtures/images (camera, chelsea, coins, moon, page, …) resized (Lanczos,
 * sharp) to `images` sizes spread evenly between 1 and 24 megapixels, JPEG quality 90 — a photo batch.
 * For `equalize`, `threshold --method otsu` and the pipeline `equalize | threshold --method otsu`: images/s of
 * `imgpu <op> <folder> <out>` on the GPU and on the CPU (the CLI's own batch mode, one process) and of
 * bench/batch_anchors.py (cv2.imread → op → cv2.imwrite in a loop, and in a 16-process Pool) in the same run,
 * and where imgpu's time went (read, host, upload, kernels, download, write); for equalize also the GPU run with
 * JPEG through sharp (IMGPU_NO_NATIVE_JPEG=1) and with host copies through TypedArray.set (IMGPU_NO_NATIVE_COPY=1). Writes bench/results/<out>.json and a bar plot, <out>.svg.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { makePhotoFolder } from './common.js';
import { join } from 'node:path';
import { plotBatchSvg } from './plot.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const count = Number(arg('images', '210'));
const dir = arg('dir', '/tmp/imgpu-batch');
const outName = arg('out', 'batch');
const only = arg('ops', 'equalize,otsu,pipeline').split(',');
function imgpu(args: string[], env: Record<string, string> = {}): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['bin/imgpu.js', ...args, '--json', '--overwrite', '--quiet'], { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, ...env } });
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  } catch {
    return { error: r.stderr.slice(-500) };
  }
}

async function main(): Promise<void> {
  const src = await makePhotoFolder(join(dir, 'photos'), count);
  const rows = [];
  for (const [name, cmd] of [
    ['equalize', ['equalize']],
    ['otsu', ['threshold', '--method', 'otsu']],
    ['pipeline', ['pipeline', '__IN__', '__OUT__', 'equalize | threshold --method otsu']],
  ] as const) {
    if (!only.includes(name)) continue;
    const out = join(dir, `out-${name}`);
    const argsFor = (device: string) => (name === 'pipeline'
      ? ['pipeline', src, out, 'equalize | threshold --method otsu', '--device', device]
      : [...cmd, src, out, '--device', device]);
    const gpu = imgpu(argsFor('gpu'));
    const cpu = imgpu(argsFor('cpu'));
    // The same GPU run with JPEG through sharp instead of the native codec (what it was before io/jpeg.ts).
    const gpuSharp = name === 'equalize' ? imgpu(argsFor('gpu'), { IMGPU_NO_NATIVE_JPEG: '1' }) : undefined;
    // And with the host copies into/out of mapped memory on the main thread (TypedArray.set) instead of native threads.
    const gpuJsCopy = name === 'equalize' ? imgpu(argsFor('gpu'), { IMGPU_NO_NATIVE_COPY: '1' }) : undefined;
    const py = spawnSync('python3', ['bench/batch_anchors.py', src, join(dir, `py-${name}`), name, '16'], { encoding: 'utf8' });
    let anchors: Record<string, unknown> = {};
    try { anchors = JSON.parse(py.stdout); } catch { anchors = { error: py.stderr.slice(-300) }; }
    const row = { op: name, images: count, gpu, cpu, ...(gpuSharp ? { gpu_sharp_codecs: gpuSharp } : {}), ...(gpuJsCopy ? { gpu_js_copy: gpuJsCopy } : {}), anchors };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${outName}.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, folder: `${count} JPEG q90, 1–24 MP, from test/fixtures/images`, rows }, null, 2));
  writeFileSync(`bench/results/${outName}.svg`, plotBatchSvg(`${count} JPEG photos, 1–24 MP: images/s (one run)`, rows));
}

await main();

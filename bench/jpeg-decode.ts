/**
 * One photo's JPEG decode to a resident GpuImage, per path: `node dist/bench/jpeg-decode.js [--mp 1,12,24]
 * [--subsampling 420,444] [--reps 10] [--dir /tmp/imgpu-jpeg-decode] [--out NAME]`.
 * The photos: test/fixtures/images/chelsea.png resized (Lanczos, sharp) to each size in megapixels, JPEG quality 90
 * at each subsampling. For each photo, colour (RGB) and gray output, the median over `reps` runs (after one warm-up):
 * - gpu: the native stage (the entropy-coded bytes unstuffed, on a libuv thread), their copy to the device, the GPU
 *   kernels (Huffman decoding, IDCT, upsampling, colour) until done, and end to end (readJpegToGpu, then waiting for
 *   the GPU) — the phases timed apart with waits between them, end to end without; gpu_cpu_huffman the same with the
 *   Huffman decoding on a libuv thread (libjpeg's coefficients into mapped upload memory, then the kernels);
 * - cpu: libjpeg-turbo's whole decode alone (into host memory, this thread), and end to end (decode into mapped
 *   upload memory, copy to the device, waited for);
 * - cv2.imread of the same file (the first of `python3` on PATH — the GPU machine's, as bench/batch_anchors.py — and
 *   /usr/bin/python3 — Debian's python3-opencv here — that has cv2), median of the same reps;
 * - the coefficients' bytes against the pixels' and the fraction of them that are zero (what a compact upload saves).
 * Prints one JSON line per photo and mode; with --out, writes them to bench/results/<out>.jsonl.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { jpegCoefDecoder } from '../src/io/jpeg-coef.js';
import { nativeJpeg } from '../src/io/jpeg.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import type { JpegEntropyPath } from '../src/codecs/jpeg/options.js';
import { readJpegToGpu, type GpuJpegTimes, type JpegPath } from '../src/node/jpeg-gpu.js';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const sizes = arg('mp', '1,12,24').split(',').map(Number);
const subsamplings = arg('subsampling', '420,444').split(',');
const reps = Number(arg('reps', '10'));
const dir = arg('dir', '/tmp/imgpu-jpeg-decode');
const outName = process.argv.includes('--out') ? arg('out', 'jpeg-decode') : undefined;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The photo of `mp` megapixels at `sub` subsampling (made once). */
async function photo(mp: number, sub: string): Promise<string> {
  const file = join(dir, `chelsea_${mp}mp_${sub}.jpg`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const src = 'test/fixtures/images/chelsea.png';
  const meta = await sharp(src).metadata();
  const aspect = meta.width! / meta.height!;
  const h = Math.round(Math.sqrt((mp * 1e6) / aspect)), w = Math.round(h * aspect);
  const chroma = sub === '444' ? '4:4:4' : '4:2:0';
  await sharp(src).resize(w, h, { fit: 'fill', kernel: 'lanczos3' }).jpeg({ quality: 90, chromaSubsampling: chroma }).toFile(file);
  return file;
}

/** cv2.imread's median milliseconds on `file` (colour or gray), or null where neither python3 has cv2. */
function cv2Imread(file: string, gray: boolean): number | null {
  const code = `import cv2, time, statistics, sys
f, gray, reps = sys.argv[1], sys.argv[2] == '1', int(sys.argv[3])
flag = cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_COLOR
cv2.imread(f, flag)
ts = []
for _ in range(reps):
    t = time.perf_counter(); cv2.imread(f, flag); ts.append((time.perf_counter() - t) * 1000)
print(statistics.median(ts))`;
  for (const python of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(python, ['-c', code, file, gray ? '1' : '0', String(reps)], { encoding: 'utf8' });
    if (r.status === 0) return Number(r.stdout.trim());
  }
  return null;
}

/** The coefficients' bytes and the fraction of zero coefficients (of the components a decode reads). */
async function coefficientStats(buf: Uint8Array, gray: boolean): Promise<{ bytes: number; zero: number } | null> {
  const coef = jpegCoefDecoder();
  const layout = coef?.coefLayout(buf, gray);
  if (!coef || !layout || 'fallback' in layout) return null;
  const out = new Uint8Array(layout.bytes);
  await coef.coefDecodeAsync(buf, out, gray);
  let zero = 0, n = 0;
  for (const c of layout.components) {
    const v = new Int16Array(out.buffer, c.offset, c.stride * c.blocksH * 64);
    for (let r = 0; r < c.blocksH; r++) {
      for (let i = r * c.stride * 64, end = i + c.blocksW * 64; i < end; i++) if (v[i] === 0) zero++;
    }
    n += c.blocksW * c.blocksH * 64;
  }
  return { bytes: n * 2, zero: zero / n };
}

if (!nativeJpeg() || !jpegCoefDecoder()) throw new Error('the native JPEG pieces are not built (node scripts/build-native.mjs)');
const ctx = await createNodeGpuContext();
const lines: string[] = [];
for (const mp of sizes) {
  for (const sub of subsamplings) {
    const file = await photo(mp, sub);
    const buf = readFileSync(file);
    for (const gray of [false, true]) {
      const run = async (jpeg: JpegPath, times?: GpuJpegTimes, entropy: JpegEntropyPath = 'gpu') => {
        const t = performance.now();
        const r = await readJpegToGpu(ctx, buf, file, gray, { jpeg, async: true, times, entropy });
        await ctx.finish();
        const ms = performance.now() - t;
        if (r?.jpeg !== jpeg) throw new Error(`${file}: decoded on the ${r?.jpeg} (${r?.fallback})`);
        if (jpeg === 'gpu' && r.huffman !== entropy) throw new Error(`${file}: Huffman decoding on the ${r.huffman}, not the ${entropy}`);
        r.image.release();
        return ms;
      };
      const phases = () => ({ entropy: [] as number[], upload: [] as number[], kernels: [] as number[], end_to_end: [] as number[] });
      const gpu = phases(), hybrid = phases();
      const cpu = { decode: [] as number[], end_to_end: [] as number[] };
      const meta = nativeJpeg()!.header(buf);
      const host = new Uint8Array(meta.width * meta.height * (gray ? 1 : 3));
      await run('gpu');
      await run('gpu', undefined, 'cpu');
      await run('cpu');
      for (let i = 0; i < reps; i++) {
        for (const [entropy, out] of [['gpu', gpu], ['cpu', hybrid]] as const) {
          const times: GpuJpegTimes = { entropyMs: 0, submitMs: 0, profile: true };
          await run('gpu', times, entropy);
          out.entropy.push(times.entropyMs);
          out.upload.push(times.submitMs);
          out.kernels.push(times.kernelsMs ?? 0);
          out.end_to_end.push(await run('gpu', undefined, entropy));
        }
        const t = performance.now();
        nativeJpeg()!.decode(buf, host, gray ? 1 : 3);
        cpu.decode.push(performance.now() - t);
        cpu.end_to_end.push(await run('cpu'));
      }
      const med = (o: Record<string, number[]>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, +median(v).toFixed(2)]));
      const line = JSON.stringify({
        photo: `${meta.width}x${meta.height}`, megapixels: +((meta.width * meta.height) / 1e6).toFixed(1), subsampling: sub, output: gray ? 'gray' : 'rgb',
        adapter: ctx.adapter.description || ctx.adapter.vendor, reps,
        gpu_ms: med(gpu), gpu_cpu_huffman_ms: med(hybrid), cpu_ms: med(cpu), cv2_imread_ms: cv2Imread(file, gray),
        jpeg_bytes: buf.length, pixel_bytes: host.length, coefficients: await coefficientStats(buf, gray),
      });
      console.log(line);
      lines.push(line);
    }
  }
}
if (outName) writeFileSync(join('bench', 'results', `${outName}.jsonl`), lines.join('\n') + '\n');
ctx.destroy();

/**
 * PNG decoding and encoding alone, one thread (issue 40): `node dist/bench/png-decode.js [--reps N] [--dir DIR]`
 * writes two 12 MP photographs as cv2.imwrite writes the throughput matrix's PNG folder
 * (bench/throughput_folders.py: scikit-image's astronaut mirror-tiled to 4000×3000, zlib level 1), 8-bit RGB and
 * 16-bit RGB (×257), then times each read, colour and gray, `reps` times: imgpu's libpng decoder (native/png.c), sharp
 * (a child process with IMGPU_NO_NATIVE_PNG=1 and sharp.concurrency(1): one libvips thread) and cv2.imread on one
 * thread (cv2.setNumThreads(1)); and each write of those pixels (`encode`: colour and gray, as a batch writes its
 * outputs) by imgpu's libpng encoder, sharp and cv2.imencode (cv2.imwrite's default settings), the same way. Prints one
 * JSON object: per file and read or write, the median wall and CPU milliseconds of each, images per CPU second (a
 * thread's rate), whether imgpu's pixels are cv2's (reads) and whether its bytes are cv2's (writes).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeImageFile } from '../src/io/index.js';
import { nodeCodec } from '../src/io/formats/node.js';
import { png } from '../src/io/formats/png.js';
import { nativePng } from '../src/io/formats/png-native.js';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const reps = Number(arg('reps', '5'));
const dir = arg('dir', '/tmp/imgpu-png-bench');
const FILES = ['rgb8_12mp.png', 'rgb16_12mp.png'];
const READS = { colour: false, gray: true } as const;

const MAKE = `
import sys, cv2, numpy as np
from skimage import data
img = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
big = np.ascontiguousarray(np.pad(img, ((0, 3000 - 512), (0, 4000 - 512), (0, 0)), mode='symmetric'))
cv2.imwrite(sys.argv[1] + '/rgb8_12mp.png', big, [cv2.IMWRITE_PNG_COMPRESSION, 1])
cv2.imwrite(sys.argv[1] + '/rgb16_12mp.png', big.astype(np.uint16) * 257, [cv2.IMWRITE_PNG_COMPRESSION, 1])
`;

const CV2 = `
import sys, time, json, hashlib, cv2
cv2.setNumThreads(1)
path, reps, gray = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1'
flags = (cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_UNCHANGED) | cv2.IMREAD_ANYDEPTH
ms, cpu = [], []
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    img = cv2.imread(path, flags)
    ms.append((time.perf_counter() - t) * 1e3); cpu.append((time.process_time() - c) * 1e3)
if img.ndim == 3: img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
print(json.dumps({'ms': sorted(ms)[len(ms) // 2], 'cpu_ms': sorted(cpu)[len(cpu) // 2], 'sha256': hashlib.sha256(img.tobytes()).hexdigest()}))
`;

// cv2.imwrite's encoding of the file's pixels (read as imgpu reads them for a write: colour, or gray) in memory.
const CV2_ENCODE = `
import sys, time, json, hashlib, cv2
cv2.setNumThreads(1)
path, reps, gray = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1'
img = cv2.imread(path, (cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_UNCHANGED) | cv2.IMREAD_ANYDEPTH)
ms, cpu = [], []
for _ in range(reps):
    t, c = time.perf_counter(), time.process_time()
    ok, png = cv2.imencode('.png', img)
    ms.append((time.perf_counter() - t) * 1e3); cpu.append((time.process_time() - c) * 1e3)
print(json.dumps({'ms': sorted(ms)[len(ms) // 2], 'cpu_ms': sorted(cpu)[len(cpu) // 2], 'sha256': hashlib.sha256(png.tobytes()).hexdigest()}))
`;

const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];

/**
 * Median wall and CPU milliseconds (the process's, every thread: sharp decodes on a libuv thread) of `reps` decodes of
 * `path` in this process (its codec: native, or sharp on one thread). CPU time is the figure that holds on a loaded
 * machine.
 */
async function timeHere(path: string, gray: boolean, encode: boolean): Promise<{ ms: number; cpu_ms: number; sha256: string }> {
  const bytes = readFileSync(path);
  const ms: number[] = [], cpu: number[] = [];
  // A write times the encoding of the decoded pixels; a read, the decoding.
  const pixels = encode ? await decodeImageFile(bytes, path, { gray }) : undefined;
  let out: Uint8Array | undefined;
  for (let r = 0; r < reps; r++) {
    const t = performance.now(), c = process.cpuUsage();
    if (pixels) {
      out = await nodeCodec(png).encode!(pixels, {}); // Node's PNG writer, as writeImage calls it
    } else {
      const img = await decodeImageFile(bytes, path, { gray });
      out = new Uint8Array(img.data.buffer, img.data.byteOffset, img.data.byteLength);
    }
    const used = process.cpuUsage(c);
    ms.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1e3);
  }
  return { ms: median(ms), cpu_ms: median(cpu), sha256: createHash('sha256').update(out!).digest('hex') };
}

if (process.argv.includes('--child')) {
  // sharp's decode or encode on one libvips thread, as a codec worker's share of the machine.
  (await import('sharp')).default.concurrency(1);
  console.log(JSON.stringify(await timeHere(arg('child', ''), process.argv.includes('--gray'), process.argv.includes('--encode'))));
} else {
  if (!nativePng()) throw new Error('native PNG codec not built (node scripts/build-native.mjs)');
  mkdirSync(dir, { recursive: true });
  execFileSync('/usr/bin/python3', ['-c', MAKE, dir]);
  const out: Record<string, unknown> = {};
  for (const f of FILES) {
    const path = join(dir, f);
    for (const encode of [false, true]) {
      for (const [read, gray] of Object.entries(READS)) {
        const native = await timeHere(path, gray, encode);
        const sharpArgs = [process.argv[1], '--child', path, '--reps', String(reps), ...(gray ? ['--gray'] : []), ...(encode ? ['--encode'] : [])];
        const sharp = JSON.parse(execFileSync(process.execPath, sharpArgs, { env: { ...process.env, IMGPU_NO_NATIVE_PNG: '1' }, encoding: 'utf8' })) as typeof native;
        const cv2 = JSON.parse(execFileSync('/usr/bin/python3', ['-c', encode ? CV2_ENCODE : CV2, path, String(reps), gray ? '1' : '0'], { encoding: 'utf8' })) as typeof native;
        const perSecond = (r: typeof native) => Math.round(10000 / r.cpu_ms) / 10;
        const round = (x: number) => Math.round(x);
        out[`${f} ${encode ? 'encode' : 'read'} ${read}`] = {
          wall_ms: { native: round(native.ms), sharp: round(sharp.ms), cv2: round(cv2.ms) },
          cpu_ms: { native: round(native.cpu_ms), sharp: round(sharp.cpu_ms), cv2: round(cv2.cpu_ms) },
          images_per_cpu_s: { native: perSecond(native), sharp: perSecond(sharp), cv2: perSecond(cv2) },
          [encode ? 'same_bytes_as_cv2' : 'same_pixels_as_cv2']: { native: native.sha256 === cv2.sha256, sharp: sharp.sha256 === cv2.sha256 },
        };
      }
    }
  }
  console.log(JSON.stringify({ reps, files: out }, null, 1));
}

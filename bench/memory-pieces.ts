/**
 * Which piece of a small-image batch grows its memory (issue 39 item 6), outside CI: `node dist/bench/memory-pieces.js
 * --piece NAME [--count 16000] [--every 1000] [--dir /tmp/imgpu-pieces] [--window 4]`. Makes a folder of `count` hard
 * links to one tiny PNG and one tiny JPEG (48×40, as the CI memory test's), runs only the piece named, `window` images
 * at a time, and prints every `every` images one JSON line of this process's memory: RssAnon (/proc/self/status), the
 * brk heap's and the other anonymous mappings' resident KiB (/proc/self/smaps), V8's heap used and total, external
 * and array buffers (process.memoryUsage). The pieces:
 * - `read`: fs.promises.readFile of each file (the main thread, libuv's pool);
 * - `decode`: the bytes of the two seeds decoded again and again (native libjpeg-turbo, libpng), no file read;
 * - `encode`: a decoded seed encoded again and again (PNG through sharp/libvips, JPEG through libjpeg-turbo);
 * - `write`: fixed bytes written atomically (io writeAtomically: open, write, close, rename) to `count` outputs;
 * - `codec-read`: each file read and decoded by the codec workers (CodecPool.read), its buffer recycled as a batch does;
 * - `codec-write`: a decoded seed written by the codec workers (CodecPool.write) to `count` outputs;
 * - `batch`: the whole folder batch (imgpu/batch, equalize, CPU path); `--input FOLDER`: of that folder instead (e.g.
 *   bench/memory.ts's, photos of many sizes), `--collect-images N`: BatchTuning.collectImages, `--smaps FILE
 *   --smaps-at N`: /proc/self/smaps copied to FILE at the first line past N images.
 * A piece whose memory rises line after line is where a batch's growth is. docs/memory.md has the figures.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { batch } from '../src/batch.js';
import type { Image } from '../src/core/image.js';
import { formatByExtension } from '../src/io/formats/index.js';
import { nodeCodec } from '../src/io/formats/node.js';
import { decodeImageFile, writeAtomically, writeImage } from '../src/io/index.js';
import { CodecPool } from '../src/node/codec-pool.js';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const piece = arg('piece', 'batch');
const count = Number(arg('count', '16000'));
const every = Number(arg('every', '1000'));
const window = Number(arg('window', '4'));
const dir = arg('dir', '/tmp/imgpu-pieces');

/** This process's memory now, in KiB (MiB for V8's figures would hide a slow growth). */
function memory(): Record<string, number> {
  // node --expose-gc: the live heap, after a full collection, instead of what happens to be uncollected.
  (globalThis as { gc?: () => void }).gc?.();
  const anon = Number(/RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  let heap = 0;
  let otherAnon = 0;
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) name = head[1];
    else if (line.startsWith('Rss:')) {
      const kib = Number(line.split(/\s+/)[1]);
      if (name === '[heap]') heap += kib;
      else if (name === '') otherAnon += kib;
    }
  }
  const m = process.memoryUsage();
  const k = (b: number) => Math.round(b / 1024);
  // V8's spaces, where its heap total grows: each space's size (committed) and used, KiB.
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name.replace('_space', ''), `${k(s.space_size)}/${k(s.space_used_size)}`]));
  return { anon, brk: heap, anonMaps: otherAnon, heapUsed: k(m.heapUsed), heapTotal: k(m.heapTotal), external: k(m.external), arrayBuffers: k(m.arrayBuffers), ...(process.argv.includes('--spaces') ? spaces : {}) };
}

/** The folder: `count` hard links, alternately to a tiny JPEG and a tiny PNG, with long names (as the CI test's). */
async function folder(): Promise<{ files: string[]; seeds: Record<string, Uint8Array>; img: Image }> {
  rmSync(dir, { recursive: true, force: true });
  const input = join(dir, 'in');
  mkdirSync(input, { recursive: true });
  mkdirSync(join(dir, 'out'));
  const data = new Uint8Array(48 * 40 * 3).map((_, i) => (i * 7 + (i >> 5)) & 255);
  const img: Image = { data, shape: [40, 48], channels: 3, dtype: 'uint8' };
  await writeImage(join(dir, 'seed.png'), img);
  await writeImage(join(dir, 'seed.jpg'), img);
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const ext = i % 2 ? 'png' : 'jpg';
    const f = join(input, `photo-of-a-batch-over-some-thousands-of-images-${String(i).padStart(6, '0')}.${ext}`);
    linkSync(join(dir, `seed.${ext}`), f);
    files.push(f);
  }
  return { files, seeds: { png: readFileSync(join(dir, 'seed.png')), jpg: readFileSync(join(dir, 'seed.jpg')) }, img };
}

/** Runs `one(i)` for i < count, `window` at a time, printing memory() every `every` images. */
async function each(one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < count) {
      await one(next++);
      if (++done % every === 0) console.log(JSON.stringify({ piece, images: done, s: Math.round((performance.now() - t0) / 100) / 10, ...memory() }));
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
}

const { files, seeds, img } = await folder();
const ext = (i: number) => (i % 2 ? 'png' : 'jpg');
const out = (i: number) => join(dir, 'out', `output-${String(i).padStart(6, '0')}.${ext(i)}`);
console.log(JSON.stringify({ piece, images: 0, ...memory() }));
if (piece === 'read') await each((i) => readFile(files[i]));
else if (piece === 'decode') await each((i) => decodeImageFile(seeds[ext(i)], files[i], { gray: true }));
else if (piece === 'encode') await each(async (i) => nodeCodec(formatByExtension(out(i))!).encode!(img, {}));
else if (piece === 'write') await each((i) => writeAtomically(out(i), seeds[ext(i)]));
else if (piece === 'codec-read' || piece === 'codec-write') {
  const codecs = new CodecPool(2);
  if (piece === 'codec-read') await each(async (i) => codecs.recycle((await codecs.read(files[i], { gray: true })).data.buffer));
  else await each((i) => codecs.write(out(i), img));
  await codecs.close();
} else if (piece === 'batch') {
  let n = 0;
  let smapsTaken = false;
  const t0 = performance.now();
  const tuning = { collectBytes: Number(arg('collect-bytes', '0')) || undefined, collectImages: Number(arg('collect-images', '0')) || undefined };
  const run = batch('equalize', { inputs: [arg('input', join(dir, 'in'))], out: join(dir, 'out'), threads: 2, codecThreads: 2, ...tuning });
  for await (const e of run) {
    if (e.type === 'progress' && e.processed >= n + every) {
      n = e.processed - (e.processed % every);
      console.log(JSON.stringify({ piece, images: e.processed, s: Math.round((performance.now() - t0) / 100) / 10, ...memory() }));
      // --smaps FILE: the process's mappings at the first line past --smaps-at images (which mapping holds what).
      if (process.argv.includes('--smaps') && n >= Number(arg('smaps-at', '0')) && !smapsTaken) {
        writeFileSync(arg('smaps', ''), readFileSync('/proc/self/smaps'));
        smapsTaken = true;
      }
    }
  }
  await run.done;
} else throw new Error(`no piece ${piece}: read, decode, encode, write, codec-read, codec-write, batch`);
rmSync(dir, { recursive: true, force: true });

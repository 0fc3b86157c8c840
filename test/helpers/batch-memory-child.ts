import { linkSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { batch } from '../../src/batch.js';
import type { Image } from '../../src/core/image.js';
import { writeImage } from '../../src/io/index.js';

/**
 * A folder batch in a process of its own, for test/engine/batch-memory.test.ts: argv dir count [collectImages].
 * Writes a small PNG and JPEG into dir/in, hard-links them `count` times in all (half of each: a folder of
 * thousands of images made in a moment), runs `equalize` over the folder on the CPU path (imgpu/batch, as the
 * CLI's batch mode) and prints one JSON line: the peak anonymous resident memory while the second quarter of the
 * images was written and while the second half was, sampled at every progress event (after warm-up: the pools' threads started, the heaps grown to their working size), and the
 * summary's counts.
 */
const [dir, count] = [process.argv[2], Number(process.argv[3])];
// Images between the batch's garbage collections (BatchTuning.collectImages): the default, or another to see the
// test fail (Infinity: none, as before they were counted).
const collectImages = process.argv[4] ? Number(process.argv[4]) : undefined;
// Long paths, as photos' often are: what is kept per file costs what its paths cost, which makes a growth show sooner.
const deep = 'a-folder-of-photos-with-a-long-name-as-folders-of-photos-often-have-'.repeat(2);
const input = join(dir, deep, 'in');
mkdirSync(input, { recursive: true });
const data = new Uint8Array(48 * 40 * 3).map((_, i) => (i * 7 + (i >> 5)) & 255);
const img: Image = { data, shape: [40, 48], channels: 3, dtype: 'uint8' };
await writeImage(join(dir, 'seed.png'), img);
await writeImage(join(dir, 'seed.jpg'), img);
for (let i = 0; i < count; i++) linkSync(join(dir, i % 2 ? 'seed.png' : 'seed.jpg'), join(input, `photo-of-a-batch-over-some-thousands-of-images-${String(i).padStart(6, '0')}.${i % 2 ? 'png' : 'jpg'}`));

/**
 * The process's anonymous resident memory (RssAnon): unlike RSS it does not fall when other processes' page cache
 * evicts node's own code, as it did on the shared machine (docs/memory.md). RSS where /proc is not there.
 */
function anonymous(): number {
  try {
    return Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
  } catch {
    return process.memoryUsage.rss();
  }
}

const peaks = { quarter: 0, half: 0 };
const run = batch('equalize', { inputs: [input], out: join(dir, deep, 'out'), threads: 2, codecThreads: 2, collectImages });
for await (const e of run) {
  if (e.type !== 'progress') continue;
  const bytes = anonymous();
  if (e.processed > count / 4 && e.processed <= count / 2) peaks.quarter = Math.max(peaks.quarter, bytes);
  if (e.processed > count / 2) peaks.half = Math.max(peaks.half, bytes);
}
const summary = await run.done;
console.log(JSON.stringify({ peaks, processed: summary.processed, failed: summary.failed.length }));

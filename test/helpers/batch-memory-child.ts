import { linkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { batch } from '../../src/batch.js';
import type { Image } from '../../src/core/image.js';
import { writeImage } from '../../src/io/index.js';

/**
 * A folder batch in a process of its own, for test/engine/batch-memory.test.ts: argv dir count. Writes a small
 * PNG and JPEG into dir/in, hard-links them `count` times in all (half of each: a folder of thousands of images
 * made in a moment), runs `equalize` over the folder on the CPU path (imgpu/batch, as the CLI's batch mode) and
 * prints one JSON line: the peak resident memory while the second quarter of the images was written and while
 * the second half was, sampled at every progress event (after warm-up: the pools' threads started, the heaps
 * grown to their working size), and the summary's counts.
 */
const [dir, count] = [process.argv[2], Number(process.argv[3])];
// Long paths, as photos' often are: what is kept per file costs what its paths cost, which makes a growth show sooner.
const deep = 'a-folder-of-photos-with-a-long-name-as-folders-of-photos-often-have-'.repeat(2);
const input = join(dir, deep, 'in');
mkdirSync(input, { recursive: true });
const data = new Uint8Array(48 * 40 * 3).map((_, i) => (i * 7 + (i >> 5)) & 255);
const img: Image = { data, shape: [40, 48], channels: 3, dtype: 'uint8' };
await writeImage(join(dir, 'seed.png'), img);
await writeImage(join(dir, 'seed.jpg'), img);
for (let i = 0; i < count; i++) linkSync(join(dir, i % 2 ? 'seed.png' : 'seed.jpg'), join(input, `photo-of-a-batch-over-some-thousands-of-images-${String(i).padStart(6, '0')}.${i % 2 ? 'png' : 'jpg'}`));

const peaks = { quarter: 0, half: 0 };
const run = batch('equalize', { inputs: [input], out: join(dir, deep, 'out'), threads: 2, codecThreads: 2 });
for await (const e of run) {
  if (e.type !== 'progress') continue;
  const rss = process.memoryUsage.rss();
  if (e.processed > count / 4 && e.processed <= count / 2) peaks.quarter = Math.max(peaks.quarter, rss);
  if (e.processed > count / 2) peaks.half = Math.max(peaks.half, rss);
}
const summary = await run.done;
console.log(JSON.stringify({ peaks, processed: summary.processed, failed: summary.failed.length }));

/**
 * The JPEG codec alone, one thread: `node dist/bench/codec.js DIR [--limit N]` reads every .jpg of DIR, decodes it
 * to gray (native codec, or sharp with IMGPU_NO_NATIVE_JPEG=1) and encodes it at quality 95 in memory; prints the
 * per-image milliseconds of each step (medians and totals) — the cost a batch's codec workers pay per image.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readImage } from '../src/io/index.js';
import { encodeJpeg, nativeJpeg } from '../src/io/jpeg.js';

const dir = process.argv[2];
const li = process.argv.indexOf('--limit');
const files = readdirSync(dir).filter((f) => f.endsWith('.jpg')).sort().slice(0, li > 0 ? Number(process.argv[li + 1]) : undefined);
const t = { read: 0, decode: 0, encode: 0 };
let px = 0;
for (const f of files) {
  const t0 = performance.now();
  readFileSync(join(dir, f));
  const t1 = performance.now();
  const img = await readImage(join(dir, f), { gray: true });
  const t2 = performance.now();
  if (!encodeJpeg(img, 95)) throw new Error('native codec not built');
  const t3 = performance.now();
  t.read += t1 - t0;
  t.decode += t2 - t1;
  t.encode += t3 - t2;
  px += img.data.length;
}
const n = files.length;
console.log(JSON.stringify({ images: n, megapixels: px / n / 1e6, native: !!nativeJpeg(), ms_per_image: { read_file: t.read / n, read_decode: t.decode / n, encode: t.encode / n } }));

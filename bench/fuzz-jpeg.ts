/**
 * The differential JPEG fuzzer's long run, outside CI: `node dist/bench/fuzz-jpeg.js [--seed 39] [--count 1000]
 * [--first 0] [--no-gpu] [--verbose] [--sources a.jpg,b.jpg]`. Seeded mutations of the project's real JPEG fixtures (test/fuzz/jpeg-mutate.ts),
 * each decoded by cv2.imread, imgpu's CPU path and its GPU path (both Huffman decoders): test/fuzz/jpeg-differential.ts.
 * Prints the outcome counts per path and every violation (another image, pixels where cv2 decodes nothing, an untyped
 * error) as one JSON object; exits 1 if there was any. A crash or hang shows as the last case --verbose named.
 * The CI run is test/fuzz/jpeg-fuzz.test.ts (the same code, a fixed seed, a few dozen cases).
 */
import { createNodeGpuContext } from '../src/node/gpu.js';
import { FUZZ_SOURCES } from '../test/fuzz/jpeg-sources.js';
import { addReport, fuzzCases, runFuzz, type FuzzReport } from '../test/fuzz/jpeg-differential.js';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const seed = Number(arg('seed', '39'));
const count = Number(arg('count', '1000'));
const first = Number(arg('first', '0'));
const verbose = process.argv.includes('--verbose');
// --sources a.jpg,b.jpg: mutate other JPEGs than the project's fixtures (a corpus the project never saw).
const sources = process.argv.includes('--sources') ? arg('sources', '').split(',').filter(Boolean) : FUZZ_SOURCES;

const ctx = process.argv.includes('--no-gpu') ? undefined : await createNodeGpuContext();
const t0 = performance.now();
// In chunks of 200: a corpus on disk and its references at a time.
const report: FuzzReport & { seed: number; first: number; seconds: number } = { seed, first, cases: 0, cv2Decoded: 0, counts: {}, violations: [], seconds: 0 };
for (let at = first; at < first + count; at += 200) {
  const cases = fuzzCases(sources, seed, Math.min(200, first + count - at), at);
  const r = await runFuzz(cases, ctx, verbose ? (c) => console.error(`${c.name}: ${c.applied.join('+')} of ${c.source}`) : undefined);
  addReport(report, r);
}
report.seconds = Math.round((performance.now() - t0) / 100) / 10;
console.log(JSON.stringify(report, null, 1));

process.exit(report.violations.length ? 1 : 0);

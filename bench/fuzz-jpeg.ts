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
import { fuzzCases, runFuzz } from '../test/fuzz/jpeg-differential.js';
import { addChunks, caseLogger, emptyReport, flagValue, fuzzRunFlags, hasFlag, printAndExit } from './fuzz-common.js';

const run = fuzzRunFlags(1000);
// --sources a.jpg,b.jpg: mutate other JPEGs than the project's fixtures (a corpus the project never saw).
const sources = hasFlag('sources') ? flagValue('sources', '').split(',').filter(Boolean) : FUZZ_SOURCES;

const ctx = hasFlag('no-gpu') ? undefined : await createNodeGpuContext();
const t0 = performance.now();
const report = emptyReport(run);
// In chunks of 200: a corpus on disk and its references at a time.
await addChunks(report, run, 200, (at, n) => runFuzz(fuzzCases(sources, run.seed, n, at), ctx, caseLogger(run)));
printAndExit(report, t0);

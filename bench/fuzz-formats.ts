/**
 * The format fuzzer's long run, outside CI: `node dist/bench/fuzz-formats.js [--seed 39] [--count 2000]
 * [--formats .png,.tif,.nii,.nii.gz,.dcm,.npy] [--first 0] [--verbose]`. `count` seeded mutations of each format's
 * real files (test/fuzz/format-mutate.ts), each decoded by its references (cv2 and PIL, nibabel, pydicom, numpy) and
 * by imgpu's readImage: test/fuzz/format-differential.ts. Prints the outcome counts per format and every violation
 * (another image, pixels where every reference refuses, an untyped error) as one JSON object; exits 1 if there was
 * any. A crash or hang shows as the last case --verbose named. The CI run is test/fuzz/format-fuzz.test.ts.
 */
import { formatCases, runFormatFuzz } from '../test/fuzz/format-differential.js';
import { formatSources } from '../test/fuzz/format-sources.js';
import { addChunks, caseLogger, emptyReport, flagValue, fuzzRunFlags, printAndExit } from './fuzz-common.js';

const run = fuzzRunFlags(2000);
const formats = flagValue('formats', '.png,.tif,.nii,.dcm,.npy').split(',');

const t0 = performance.now();
const report = emptyReport(run);
// Each format on its own (`count` cases each; .nii also draws the .nii.gz sources), in chunks of 500 on disk at a time.
for (const format of formats) {
  const sources = formatSources(format === '.nii' ? ['.nii', '.nii.gz'] : [format]);
  await addChunks(report, run, 500, (at, n) => runFormatFuzz(formatCases(sources, run.seed, n, at), caseLogger(run)));
}
printAndExit(report, t0);

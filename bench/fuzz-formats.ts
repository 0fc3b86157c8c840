/**
 * The format fuzzer's long run, outside CI: `node dist/bench/fuzz-formats.js [--seed 39] [--count 2000]
 * [--formats .png,.tif,.nii,.nii.gz,.dcm,.npy] [--first 0] [--verbose]`. `count` seeded mutations of each format's
 * real files (test/fuzz/format-mutate.ts), each decoded by its references (cv2 and PIL, nibabel, pydicom, numpy) and
 * by imgpu's readImage: test/fuzz/format-differential.ts. Prints the outcome counts per format and every violation
 * (another image, pixels where every reference refuses, an untyped error) as one JSON object; exits 1 if there was
 * any. A crash or hang shows as the last case --verbose named. The CI run is test/fuzz/format-fuzz.test.ts.
 */
import { addReport, type FuzzReport } from '../test/fuzz/jpeg-differential.js';
import { formatCases, runFormatFuzz } from '../test/fuzz/format-differential.js';
import { formatSources } from '../test/fuzz/format-sources.js';

const arg = (n: string, d: string) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const seed = Number(arg('seed', '39'));
const count = Number(arg('count', '2000'));
const first = Number(arg('first', '0'));
const formats = arg('formats', '.png,.tif,.nii,.dcm,.npy').split(',');
const verbose = process.argv.includes('--verbose');

const t0 = performance.now();
const report: FuzzReport & { seed: number; first: number; seconds: number } = { seed, first, cases: 0, cv2Decoded: 0, counts: {}, violations: [], seconds: 0 };
// Each format on its own (`count` cases each; .nii also draws the .nii.gz sources), in chunks of 500 on disk at a time.
for (const format of formats) {
  const sources = formatSources(format === '.nii' ? ['.nii', '.nii.gz'] : [format]);
  for (let at = first; at < first + count; at += 500) {
    const cases = formatCases(sources, seed, Math.min(500, first + count - at), at);
    addReport(report, await runFormatFuzz(cases, verbose ? (c) => console.error(`${c.name}: ${c.applied.join('+')} of ${c.source}`) : undefined));
  }
}
report.seconds = Math.round((performance.now() - t0) / 100) / 10;
console.log(JSON.stringify(report, null, 1));

process.exit(report.violations.length ? 1 : 0);

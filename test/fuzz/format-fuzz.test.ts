import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { PYTHON } from '../helpers/parity.js';
import { formatCases, runFormatFuzz } from './format-differential.js';
import { FORMAT_MUTATIONS } from './format-mutate.js';
import { formatSources } from './format-sources.js';

// The format fuzzer's CI run (issue 39 item 2): a fixed seed, 120 cases a format (PNG, TIFF, NIfTI, DICOM, .npy).
// The long runs are bench/fuzz-formats.ts (docs/damaged-input.md has their counts). No GPU: these formats
// are decoded on the CPU only. The references are Debian's python3-opencv, python3-pil, python3-nibabel and
// python3-pydicom (scripts/install-system-deps.sh): missing, the test is skipped, and fails where CI requires them.
const MODULES = ['cv2', 'PIL', 'nibabel', 'pydicom'];
const missing = MODULES.filter((m) => spawnSync(PYTHON, ['-c', `import ${m}`]).status !== 0);
const required = process.env.IMGPU_REQUIRE_GPU === '1';
const skip = missing.length && !required ? `${PYTHON} lacks ${missing.join(', ')} (apt-get install python3-opencv python3-pil python3-nibabel python3-pydicom)` : false;

const FORMATS: [string, string[]][] = [['PNG', ['.png']], ['TIFF', ['.tif']], ['NIfTI', ['.nii', '.nii.gz']], ['DICOM', ['.dcm']], ['.npy', ['.npy']]];

for (const [name, exts] of FORMATS) {
  test(`differential ${name} fuzzing (seed 39, 120 mutated files): readImage gives a reference's pixels or a typed error, never other pixels, pixels where every reference refuses, or an untyped error`, { skip, timeout: 120_000 }, async (t) => {
    assert.deepEqual(missing, [], `${PYTHON} lacks ${missing.join(', ')}, and CI requires the references (IMGPU_REQUIRE_GPU=1)`);
    const cases = formatCases(formatSources(exts), 39, 120);
    // Every kind of damage of the format is drawn.
    const drawn = new Set(cases.flatMap((c) => c.applied));
    assert.deepEqual(Object.keys(FORMAT_MUTATIONS[exts[0]]).filter((m) => !drawn.has(m)), [], 'mutations never drawn');
    const r = await runFormatFuzz(cases);
    t.diagnostic(JSON.stringify(r.counts));
    assert.deepEqual(r.violations, []);
    // The corpus holds files decoded alike and files refused: a fuzzer whose every case is refused proves nothing.
    const same = exts.reduce((n, e) => n + (r.counts[e]?.same ?? 0), 0);
    assert.ok(same >= 5 && r.cv2Decoded < 120, JSON.stringify(r.counts));
  });
}

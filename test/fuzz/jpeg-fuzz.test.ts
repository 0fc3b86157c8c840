import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { jpegCoefDecoder } from '../../src/io/jpeg-coef.js';
import { nativeJpeg } from '../../src/io/jpeg.js';
import { gpuOrSkip } from '../helpers/gpu.js';
import { PYTHON } from '../helpers/parity.js';
import { fuzzCases, runFuzz } from './jpeg-differential.js';
import { MUTATION_NAMES } from './jpeg-mutate.js';
import { FUZZ_SOURCES } from './jpeg-sources.js';

// The differential JPEG fuzzer's CI run (issue 39): a fixed seed, 150 cases (9–14 s on lavapipe, 2 cores). The long
// runs are bench/fuzz-jpeg.ts (docs/jpeg.md, "Damaged files", has their counts).
const skip = (nativeJpeg() && jpegCoefDecoder()) || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG pieces not built (scripts/build-native.mjs)';

test('differential JPEG fuzzing (seed 39, 150 mutated files): the CPU path and both GPU paths give cv2.imread\'s pixels or a typed error; with failOn none, every file cv2 decodes gives its pixels', { skip }, async (t) => {
  const ctx = await gpuOrSkip(t);
  if (!ctx) return;
  // The reference: skipped where Debian's OpenCV is missing, a failure where CI requires it (as the parity tests).
  if (spawnSync(PYTHON, ['-c', 'import cv2']).status !== 0) {
    if (process.env.IMGPU_REQUIRE_GPU === '1') throw new Error(`IMGPU_REQUIRE_GPU=1 but ${PYTHON} has no cv2 (python3-opencv)`);
    t.skip(`${PYTHON} with cv2 (python3-opencv) unavailable`);
    return;
  }
  const cases = fuzzCases(FUZZ_SOURCES, 39, 150);
  // Every kind of damage is drawn, and the corpus holds both files cv2 decodes and files it refuses.
  const drawn = new Set(cases.flatMap((c) => c.applied));
  assert.deepEqual(MUTATION_NAMES.filter((m) => !drawn.has(m)), [], 'mutations never drawn');
  const r = await runFuzz(cases, ctx);
  t.diagnostic(JSON.stringify(r.counts));
  assert.ok(r.cv2Decoded > 20 && r.cv2Decoded < 140, `cv2 decoded ${r.cv2Decoded} of 150`);
  assert.deepEqual(r.violations, []);
  for (const path of ['cpu', 'gpu (Huffman on the gpu)', 'gpu (Huffman on the cpu)']) assert.ok((r.counts[path]?.same ?? 0) > 10, `${path}: ${JSON.stringify(r.counts[path])}`);
  // Damaged files the default refuses are decoded leniently: more than the strict paths, exactly cv2's count.
  assert.equal(r.counts['cpu, failOn none'].same, r.cv2Decoded);
  assert.ok((r.counts['gpu, failOn none'].same ?? 0) > (r.counts.cpu.same ?? 0), JSON.stringify(r.counts));
});

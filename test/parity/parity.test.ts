// The randomized differential test (issue 24): every operation on random sizes (1×1 up to 1500×1000, odd widths),
// real and synthetic images and random parameters, on the CPU and the GPU, against OpenCV 4.6 / SciPy 1.10 /
// scikit-image 0.19 (test/parity/reference.py, one Python process for all cases). Fixed seeds; one test per
// family; each failing case prints one reproducer line. IMGPU_PARITY_SEED=<n> draws other cases,
// IMGPU_PARITY_CASE=<id>[,<id>…] (or a family name) runs only those. See docs/parity.md.
import { test } from 'node:test';
import { NodeWorkerPool } from '../../src/node/worker-pool.js';
import { gpuOrSkip, gpuWithBindingLimit } from '../helpers/gpu.js';
import { checkCases, References, type Path } from '../helpers/parity.js';
import { FAMILIES, generate } from './cases.js';
import { loadSources } from './inputs.js';

const sources = await loadSources();
const cases = new Map(FAMILIES.map((f) => [f.name, generate(f, sources)]));
// Started now: Python computes the references while the library runs the cases.
const refs = new References([...cases.values()].flat());
const pool = new NodeWorkerPool(2);
test.after(async () => {
  await pool.close();
  refs.close();
});

for (const f of FAMILIES) {
  test(`parity ${f.name}: ${f.title}`, async (t) => {
    const selected = cases.get(f.name)!;
    const paths: Path[] = [{ name: 'CPU', on: { pool } }];
    const gpu = selected.length ? await gpuOrSkip(t) : undefined;
    if (gpu) paths.push({ name: 'GPU', on: { gpu } });
    // The same cases through ranges and slabs: 64 KiB bindings split most of these images.
    const small = gpu && f.slabs !== false ? await gpuWithBindingLimit(t, 64 << 10) : undefined;
    if (small) paths.push({ name: 'GPU(64KiB)', on: { gpu: small }, limited: { bytes: 64 << 10, full: 'GPU' } });
    await checkCases(t, selected, refs, paths, (c, on) => f.run(c, on));
  });
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as browser from '../../src/browser.js';
import * as node from '../../src/node.js';
import { ALL_OPERATIONS, OPERATIONS } from '../../src/ops/registry.js';

// Every operation of the registry is a public function of both entries under its name, and the declaration the
// registry holds is exported too (as `.op` of a public function: `equalize.op`, `filter.op`, `detectObjects.op`), so
// the API, the CLI, pipelines, batch and the playground run the same declaration.
for (const [entry, mod] of [['imgpu', node], ['imgpu/browser', browser]] as const) {
  test(`every registry operation is exported from '${entry}' as its declared function`, () => {
    const exported = mod as unknown as Record<string, { op?: unknown } | undefined>;
    const names = Object.keys(ALL_OPERATIONS);
    assert.ok(names.length >= 8, `${names.length} operations`);
    const declared = new Set(Object.values(exported).map((f) => f?.op));
    for (const name of names) {
      assert.equal(typeof exported[name], 'function', `${name} is not exported from ${entry}`);
      assert.ok(declared.has(ALL_OPERATIONS[name]), `${entry} exports no function carrying the registry's ${name} declaration`);
    }
  });
}

test('the image operations are the registry operations that write an image, each with CLI positionals of its parameters', () => {
  for (const [name, op] of Object.entries(ALL_OPERATIONS)) {
    assert.equal(name in OPERATIONS, op.writes, name);
    for (const p of op.positional) assert.ok(op.params.some((s) => s.name === p), `${name}: positional ${p} is declared`);
  }
});

// The volume page offers the operations whose input rule says `volumes`: each of them takes a small 3D volume with
// its defaults and keeps its shape; the others refuse one with a typed error (none crashes or returns a plane).
test('input.volumes: the operations that declare it run a volume with their defaults, the others refuse one', async () => {
  const { imageFrom } = await import('../../src/core/image.js');
  const { ImgpuError } = await import('../../src/core/errors.js');
  const volume = imageFrom(Uint8Array.from({ length: 4 * 9 * 7 }, (_, i) => (i * 37) % 256), [4, 9, 7]);
  const declared = Object.values(ALL_OPERATIONS).filter((op) => op.input.volumes).map((op) => op.name);
  assert.ok(['filter', 'morph'].every((n) => declared.includes(n)), `the 3D filters and morphology declare volumes (${declared})`);
  for (const [name, op] of Object.entries(OPERATIONS)) {
    const run = op.run(volume, {}, {});
    if (op.input.volumes) assert.deepEqual((await run).output.shape, [4, 9, 7], name);
    else await assert.rejects(run, (e) => e instanceof ImgpuError, `${name} does not declare volumes and refuses one`);
  }
});

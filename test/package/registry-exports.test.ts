import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as browser from '../../src/browser.js';
import * as node from '../../src/node.js';
import { ALL_OPERATIONS, OPERATIONS } from '../../src/ops/registry.js';

// Every operation of the registry is a public function of both entries, and it is the declared one (its `.op` is
// the registry's entry), so the API, the CLI, pipelines, batch and the playground run the same declaration.
for (const [entry, mod] of [['imgpu', node], ['imgpu/browser', browser]] as const) {
  test(`every registry operation is exported from '${entry}' as its declared function`, () => {
    const exported = mod as unknown as Record<string, { op?: unknown } | undefined>;
    const names = Object.keys(ALL_OPERATIONS);
    assert.ok(names.length >= 7, `${names.length} operations`);
    for (const name of names) {
      assert.equal(typeof exported[name], 'function', `${name} is not exported from ${entry}`);
      assert.equal(exported[name]!.op, ALL_OPERATIONS[name], `${entry}'s ${name} is not the registry's operation`);
    }
  });
}

test('the image operations are the registry operations that write an image, each with CLI positionals of its parameters', () => {
  for (const [name, op] of Object.entries(ALL_OPERATIONS)) {
    assert.equal(name in OPERATIONS, op.writes, name);
    for (const p of op.positional) assert.ok(op.params.some((s) => s.name === p), `${name}: positional ${p} is declared`);
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBindings } from '../../src/core/gpu/bindings.js';

const MODULE = /* wgsl */ `
struct Params { src: u32, n: u32 }
@group(0) @binding(2) var<storage, read> src: array<u32>;
@binding(0) @group(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(1) var<uniform> P: Params;
@group(0) @binding(3) var<storage, read> table: array<u32>;
@group(0) @binding(4) var<storage, read_write> scratch: array<u32>;
@group(1) @binding(0) var<storage, read> other: array<u32>;
// table is named only in this comment of the path of copy(): it stays unused there
fn load(i: u32) -> u32 { return src[i + P.src]; }
fn shadowed(scratch: u32) -> u32 { return scratch * 2u; }
@compute @workgroup_size(64)
fn copy(@builtin(global_invocation_id) id: vec3u) {
  if (id.x >= P.n) { return; }
  dst[id.x] = shadowed(load(id.x)); /* table[0] */
}
@compute @workgroup_size(64)
fn lookup(@builtin(global_invocation_id) id: vec3u) {
  let scratch = table[id.x];
  dst[id.x] = scratch;
}`;

test('parseBindings: the @group(0) variables by name (either attribute order), other groups left out', () => {
  const b = parseBindings(MODULE);
  assert.deepEqual(Object.fromEntries(b.numbers), { src: 2, dst: 0, P: 1, table: 3, scratch: 4 });
});

test('parseBindings: an entry point uses what it and the functions it calls name; members, comments and locals of the same name do not count', () => {
  const b = parseBindings(MODULE);
  const copy = b.entry('copy')!;
  assert.deepEqual([...copy.uses].sort(), ['P', 'dst', 'src']);
  // `scratch` is shadowed by a parameter: named, but not certainly used (so not required).
  assert.deepEqual([...copy.mentions].sort(), ['P', 'dst', 'scratch', 'src']);
  const lookup = b.entry('lookup')!;
  assert.deepEqual([...lookup.uses].sort(), ['dst', 'table']);
  assert.deepEqual([...lookup.mentions].sort(), ['dst', 'scratch', 'table']);
  assert.equal(b.entry('missing'), undefined);
});

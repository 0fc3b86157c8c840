import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineUniforms } from '../../src/core/gpu/uniforms.js';

test('defineUniforms: one declaration gives the WGSL struct and its packer (u32, i32 as two\'s complement, f32 as bits, padded to 16 bytes)', () => {
  const P = defineUniforms('P', { total: 'u32', shift: 'i32', scale: 'f32' });
  assert.equal(P.wgsl, 'struct P { total: u32, shift: i32, scale: f32, _p0: u32 }');
  assert.equal(P.words, 4);
  assert.deepEqual([...P.pack({ total: 7, shift: -2, scale: 0.5 })], [7, 0xfffffffe, 0x3f000000, 0]);
});

test('defineUniforms: vectors aligned as WGSL lays out the uniform address space (vec2 at 8 bytes, vec4 at 16)', () => {
  const G = defineUniforms('G', { n: 'u32', size: 'vec2u', box: 'vec4i', c: 'f32' });
  assert.equal(G.wgsl, 'struct G { n: u32, _p0: u32, size: vec2u, box: vec4i, c: f32, _p1: u32, _p2: u32, _p3: u32 }');
  assert.deepEqual([...G.pack({ n: 1, size: [2, 3], box: [-1, 4, 5, 6], c: 1 })], [1, 0, 2, 3, 0xffffffff, 4, 5, 6, 0x3f800000, 0, 0, 0]);
});

test('defineUniforms: a missing value or a vector of the wrong length is an error, not a zero', () => {
  const G = defineUniforms('G', { n: 'u32', v: 'vec4u' });
  assert.throws(() => G.pack({ n: 1 } as never), /uniform G: no value for 'v'/);
  assert.throws(() => G.pack({ n: 1, v: [1, 2, 3] }), /uniform G: 'v' needs 4 values/);
});

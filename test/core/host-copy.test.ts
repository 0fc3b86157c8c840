import assert from 'node:assert/strict';
import { test } from 'node:test';
import { copyThreads, nativeCopyBinding, nativeHostCopy } from '../../src/node/host-copy.js';
import { randomBytes } from '../helpers/fixtures.js';

// CI builds the native pieces (IMGPU_REQUIRE_NATIVE=1); elsewhere these tests say why they skip.
const skip = nativeCopyBinding() ? false : process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native copy not built (scripts/build-native.mjs)';

test('the native parallel copy is built where required', { skip: process.env.IMGPU_REQUIRE_NATIVE !== '1' }, () => {
  assert.ok(nativeCopyBinding(), 'dist/native/imgpu-native.node missing: did npm ci run scripts/build-native.mjs?');
});

test('native copy: every byte lands, whatever the length, offsets and thread count', { skip }, async () => {
  const b = nativeCopyBinding()!;
  const src = randomBytes(9 << 20, 3);
  // Lengths below one part, at part boundaries, and odd; views starting at unaligned offsets.
  for (const threads of [1, 2, 3, 8, 64]) {
    for (const [off, n] of [[0, 0], [1, 1], [3, 255 * 1024 + 7], [0, 512 * 1024], [5, (1 << 20) + 63], [17, (8 << 20) + 12345]]) {
      const dst = new Uint8Array(n + 40).fill(0xaa);
      const part = src.subarray(off, off + n);
      b.copy(dst.subarray(20, 20 + n), part, threads);
      assert.deepEqual(dst.subarray(20, 20 + n), part, `${threads} threads, ${n} bytes at +${off}`);
      assert.ok(dst.subarray(0, 20).every((v) => v === 0xaa) && dst.subarray(20 + n).every((v) => v === 0xaa), 'nothing written outside dst');
    }
  }
});

test('native copy: mismatched lengths and wrong types are errors, not memory corruption', { skip }, () => {
  const b = nativeCopyBinding()!;
  assert.throws(() => b.copy(new Uint8Array(10), new Uint8Array(11), 2), RangeError);
  assert.throws(() => b.copy(new Uint16Array(10) as never, new Uint8Array(20), 2), TypeError);
  assert.throws(() => b.copy(new Uint8Array(10), 'x' as never, 2), TypeError);
});

test('the host copy given to GPU contexts copies exactly, small and large', { skip }, () => {
  const copy = nativeHostCopy(4)!;
  assert.ok(copyThreads() >= 1);
  for (const n of [0, 100, (3 << 20) + 5]) {
    const src = randomBytes(n, n);
    const dst = new Uint8Array(n);
    copy(dst, src);
    assert.deepEqual(dst, src);
  }
});

test('the off-thread copy (copyAsync, HostCopy.async) copies exactly and returns a promise; bad arguments are errors', { skip }, async () => {
  const b = nativeCopyBinding()!;
  const src = randomBytes((5 << 20) + 3, 7);
  const dst = new Uint8Array(src.length + 2).fill(0xaa);
  const pending = b.copyAsync(dst.subarray(1, 1 + src.length), src);
  assert.ok(pending instanceof Promise, 'a promise: the copy runs on a libuv thread');
  await pending;
  assert.deepEqual(dst.subarray(1, 1 + src.length), src);
  assert.ok(dst[0] === 0xaa && dst[dst.length - 1] === 0xaa, 'nothing written outside dst');
  assert.throws(() => b.copyAsync(new Uint8Array(10), new Uint8Array(11)), RangeError);
  assert.throws(() => b.copyAsync(new Uint8Array(10), 'x' as never), TypeError);
  const copy = nativeHostCopy(4)!;
  for (const n of [0, 100, (3 << 20) + 5]) {
    const s = randomBytes(n, n + 1);
    const d = new Uint8Array(n);
    await copy.async!(d, s);
    assert.deepEqual(d, s, `${n} bytes`);
  }
});

// `npm pack` refuses a tarball without the native pieces (scripts/check-pack.mjs, npm's `prepack`): run as a process
// against copies of the built tree with one piece missing or broken, and through npm itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'check-pack.mjs');
const work = mkdtempSync(join(tmpdir(), 'imgpu-check-pack-'));
after(() => rmSync(work, { recursive: true, force: true }));
const built = existsSync(join(ROOT, 'dist', 'native', 'imgpu-jpegenc.node'));
const skip = built || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native pieces not built (scripts/build-native.mjs)';

/** A copy of the package's built tree (package.json, scripts/, dist/src/node.js, dist/native/) in a fresh folder. */
function builtCopy(name: string): string {
  const root = join(work, name);
  mkdirSync(join(root, 'dist', 'src'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  cpSync(join(ROOT, 'scripts'), join(root, 'scripts'), { recursive: true });
  writeFileSync(join(root, 'dist', 'src', 'node.js'), '');
  cpSync(join(ROOT, 'dist', 'native'), join(root, 'dist', 'native'), { recursive: true });
  return root;
}

const check = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });

test('check-pack passes the built tree and refuses, in one line naming it, a tree lacking any one native piece', { skip }, () => {
  const root = builtCopy('full');
  const ok = check(root);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stderr, '');
  for (const f of readdirSync(join(ROOT, 'dist', 'native')).filter((f) => /^(imgpu-.*\.node|lib.*\.so\.\d+)$/.test(f))) {
    const lacking = builtCopy(`lacking-${f}`);
    rmSync(join(lacking, 'dist', 'native', f));
    const r = check(lacking);
    assert.equal(r.status, 1, `${f} missing: exit ${r.status}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`^imgpu: not packing without dist/native/${f.replace(/\./g, '\\.')} \\([^)]*: not built\\): install`));
  }
});

test('check-pack refuses a native module that is there but does not load', { skip }, () => {
  const root = builtCopy('broken');
  writeFileSync(join(root, 'dist', 'native', 'imgpu-jpegcoef.node'), 'not an ELF file');
  const r = check(root);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^imgpu: not packing without dist\/native\/imgpu-jpegcoef\.node \(the GPU JPEG decoder's entropy stage: does not load: [^\n]+\): install[^\n]*\n$/);
});

test('npm pack runs it (prepack) and stops before packing a tree without the GPU JPEG encoder\'s entropy coder', { skip }, () => {
  const root = builtCopy('npm');
  rmSync(join(root, 'dist', 'native', 'imgpu-jpegenc.node'));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) env[k] = v;
  const r = spawnSync('npm', ['pack', '--pack-destination', work], { cwd: root, encoding: 'utf8', env, timeout: 120_000 });
  assert.notEqual(r.status, 0, r.stdout);
  assert.match(r.stderr, /imgpu: not packing without dist\/native\/imgpu-jpegenc\.node \(the GPU JPEG encoder's entropy coder: not built\)/);
  assert.deepEqual(readdirSync(work).filter((f) => f.endsWith('.tgz')), [], 'no tarball');
});

// Runs the test suite with node:test under Node >= 22 (Dawn is unreliable on older Nodes; npm scripts put
// the project's own Node 22 from node_modules/.bin first on PATH). Test files run one at a time: each GPU
// test file holds a device on the (CPU-bound) software adapter.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(`tests need Node >= 22, this is ${process.version}: run them with npm test (which uses node_modules/.bin/node)`);
  process.exit(1);
}
function find(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? find(p) : p.endsWith('.test.js') ? [p] : [];
  });
}
const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(`node scripts/run-tests.js [--list] [SUBSTRING...]   (npm test -- [--list] [SUBSTRING...])
  Runs the built test files (dist/test/**/*.test.js; npm test builds first), one at a time: all of them, or those
  whose path contains one of the SUBSTRINGs (e.g. convolve/convolve). --list names the files instead of running them.`);
  process.exit(0);
}
const only = args.filter((a) => a !== '--list');
const files = (existsSync('dist/test') ? find('dist/test') : []).filter((f) => !only.length || only.some((o) => f.includes(o))).sort();
// Given no file, node --test would look for test files itself, all over the folder: a mistyped filter ran every test.
if (!files.length) {
  console.error(`no test file in dist/test matches ${only.join(' ')}${existsSync('dist/test') ? '' : ' (no dist/test: build first, npx tsc -p .)'}`);
  process.exit(2);
}
if (args.includes('--list')) {
  console.log(files.join('\n'));
  process.exit(0);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);

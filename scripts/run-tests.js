// Runs the test suite with node:test under Node >= 22 (Dawn is unreliable on older Nodes; npm scripts put
// the project's own Node 22 from node_modules/.bin first on PATH). Test files run one at a time: each GPU
// test file holds a device on the (CPU-bound) software adapter.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const only = process.argv.slice(2);
const files = find('dist/test').filter((f) => !only.length || only.some((o) => f.includes(o))).sort();
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);

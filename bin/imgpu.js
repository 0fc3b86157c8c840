#!/usr/bin/env node
// imgpu launcher. Dawn crashes under Node < 22 (see docs/device.md), so on an older Node this re-runs the CLI
// with the Node 22 that the project installs (npm package `node`), or says plainly what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Image decoding and encoding (sharp) and file I/O run on libuv's thread pool, 4 threads unless told: batch mode
// keeps several images in flight, so give it the cores (read when the pool starts, i.e. before any I/O below).
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, Math.min(16, availableParallelism())));
const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(cli)) {
  console.error('imgpu: error: the CLI is not built; run `npm install && npm run build` first');
  process.exit(1);
}
if (Number(process.versions.node.split('.')[0]) >= 22) {
  await import(cli);
} else {
  const local = [join(here, '..', 'node_modules', '.bin', 'node'), join(here, '..', '..', '.bin', 'node')].find(existsSync);
  if (!local) {
    console.error(`imgpu: error: Node.js >= 22 is required (this is ${process.version}; Dawn crashes under older versions). Install Node 22, or run \`npm install\` in imgpu to get its own.`);
    process.exit(6);
  }
  const r = spawnSync(local, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

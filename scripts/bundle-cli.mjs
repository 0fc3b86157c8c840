#!/usr/bin/env node
// The CLI as a few files (issue 40 item 5): `node scripts/bundle-cli.mjs [ROOT]` bundles ROOT's compiled CLI
// (dist/src/cli/main.js, which tsc wrote) with esbuild into dist/src/bundle/, which bin/imgpu.js runs when it is not
// older than dist/src/cli/main.js. A command loaded some 260 modules of dist/ and node_modules/ one by one — each
// resolved, stat'ed, read and linked by Node's ESM loader — about 120 of its ~240 ms of CPU on this machine for one
// small image; bundled, the same code is a handful of files (docs/throughput.md, start-up).
// - The commands loaded on demand (detect, train, scale-out) stay separate chunks, loaded as before, when run.
// - The workers and the batch's child process (new Worker / spawn of a sibling file) are entries of their own, so they
//   load bundled too; the native modules (.node files) and every other file a module finds from its own
//   `import.meta.url` are found where tsc put that module, as unbundled.
// - Packages with native parts (sharp, webgpu) and those loaded only by some commands (zarrita; bullmq and ioredis,
//   optional peers) stay imports of node_modules, so the start-up test still sees when they load.
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const src = join(root, 'dist', 'src');
const outdir = join(src, 'bundle');

/** The entries: the CLI, and the files started as a thread or process of their own (named as in their `new URL`). */
const ENTRIES = {
  main: join(src, 'cli', 'main.js'),
  'cpu-worker': join(src, 'node', 'cpu-worker.js'),
  'codec-worker': join(src, 'node', 'codec-worker.js'),
  'zarr-worker': join(src, 'io', 'zarr-worker.js'),
  child: join(src, 'engine', 'batch', 'child.js'),
};

/** Not bundled: native parts, or loaded only by the commands that use them (see above). */
const EXTERNAL = ['sharp', 'webgpu', 'zarrita', 'bullmq', 'ioredis'];

/**
 * Each compiled module's `import.meta.url` made its own file's URL again, computed from the bundle's: the native
 * modules and data it finds relative to itself are where they were. `new URL('./<entry>.js', import.meta.url)` — a
 * worker or child that is an entry above — is left relative to the bundle, to start the bundled one.
 */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    const entries = Object.keys(ENTRIES).join('|');
    const urls = new RegExp(`(new URL\\((['"])\\./(?:${entries})\\.js\\2, import\\.meta\\.url\\))|import\\.meta\\.url`, 'g');
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(src + '/')) return undefined;
      const own = `new URL(${JSON.stringify(relative(outdir, args.path))}, import.meta.url).href`;
      const contents = (await readFile(args.path, 'utf8')).replace(urls, (m, sibling) => sibling ?? own);
      return { contents, loader: 'js' };
    });
  },
};

// Chunks are named by their content's hash: last build's would stay beside this one's.
rmSync(outdir, { recursive: true, force: true });
const esbuild = await import(pathToFileURL(createRequire(join(root, 'package.json')).resolve('esbuild')).href);
const result = await esbuild.build({
  entryPoints: ENTRIES,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: EXTERNAL,
  plugins: [ownUrl],
  // The CommonJS packages bundled (dicom-parser's require('zlib'), …) call `require`, which an ES module lacks.
  banner: { js: "import { createRequire as __imgpuRequire } from 'node:module'; const require = __imgpuRequire(import.meta.url);" },
  // No source map: the bundle is tsc's JavaScript, unminified, each module under a `// dist/src/…` comment; a map
  // would chain to the packages' own maps, some of which name sources they do not ship.
  logLevel: 'warning',
});
if (result.errors.length) process.exit(1);

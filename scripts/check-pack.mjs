#!/usr/bin/env node
// npm's `prepack` (before `npm pack` / `npm publish` pack the tree): a tarball is what users install, with no compiler,
// so it must carry every native piece imgpu's JPEG and PNG paths and host copies need — else `npm install imgpu` succeeds
// and JPEG silently takes a slower path (sharp, or the CPU where --jpeg gpu was asked). This refuses to pack without
// them, in one line naming what is missing. `node scripts/check-pack.mjs [ROOT]` checks ROOT's dist/ (default: this
// checkout). prepack runs before `prepare` rebuilds: the tree checked is the one `npm install` / `npm run build` built,
// and the rebuild only replaces pieces (scripts/build-native.mjs renames into place), never removes one.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the package must carry, under dist/, and what each is (scripts/build-native.mjs builds them). */
const PACKAGE_PIECES = [
  ['src/node.js', 'the compiled library'],
  ['native/imgpu-turbo.node', 'the JPEG codec'],
  ['native/libturbojpeg.so.0', "the JPEG codec's libjpeg-turbo"],
  ['native/imgpu-jpegcoef.node', "the GPU JPEG decoder's entropy stage"],
  ['native/imgpu-jpegenc.node', "the GPU JPEG encoder's entropy coder"],
  ['native/libjpeg.so.62', "the GPU JPEG codec's libjpeg"],
  ['native/imgpu-native.node', 'the native copies and point kernels'],
  ['native/imgpu-png.node', 'the PNG decoder'],
  ['native/libpng16.so.16', "the PNG decoder's libpng"],
];

/** The pieces missing from (or not loading in) `root`'s dist/, each as `dist/<file> (<what>: <why>)`. */
function missingPieces(root) {
  const load = createRequire(join(root, 'package.json'));
  const missing = [];
  for (const [file, what] of PACKAGE_PIECES) {
    const path = join(root, 'dist', file);
    if (!existsSync(path)) {
      missing.push(`dist/${file} (${what}: not built)`);
      continue;
    }
    if (!file.endsWith('.node')) continue;
    try {
      load(path);
    } catch (e) {
      missing.push(`dist/${file} (${what}: does not load: ${String(e.message).split('\n')[0]})`);
    }
  }
  return missing;
}

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const missing = missingPieces(root);
if (missing.length) {
  console.error(`imgpu: not packing without ${missing.join(', ')}: install libturbojpeg0-dev, libjpeg62-turbo-dev, libpng-dev and a C compiler ` +
    '(scripts/install-system-deps.sh), run `npm run build`, then pack again');
  process.exit(1);
}

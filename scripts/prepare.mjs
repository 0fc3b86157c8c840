#!/usr/bin/env node
// npm's `prepare`: builds the checkout (tsc, then the native pieces) after `npm install` and before `npm pack`.
// - Under `npx imgpu` / `npm exec imgpu` typed inside the checkout, npm installs the checkout into its exec cache as a
//   link and "prepares" it: that would rebuild dist/ in place, under any imgpu process running from it, only to run
//   the CLI. There (npm_command=exec) nothing is built: bin/imgpu.js runs dist/ as it is, or says it is not built.
// - A tarball is what users install, with no compiler: it must carry the native JPEG codec (cv2's pixels and bytes),
//   so `npm pack` / `npm publish` stop here when it could not be built.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const command = process.env.npm_command;
if (command === 'exec') process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', root], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts', 'build-native.mjs')], { stdio: 'inherit' });

if ((command === 'pack' || command === 'publish') && !existsSync(join(root, 'dist', 'native', 'imgpu-turbo.node'))) {
  console.error('imgpu: not packing without the native JPEG codec (users would get sharp\'s JPEG, which differs from cv2): ' +
    'install libturbojpeg0-dev and a C compiler (scripts/install-system-deps.sh), then pack again');
  process.exit(1);
}

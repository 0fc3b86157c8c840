#!/usr/bin/env node
// npm's `prepare`: builds the checkout (tsc, then the native pieces, then the CLI's bundle) after `npm install` and before `npm pack`.
// - Under `npx imgpu` / `npm exec imgpu` typed inside the checkout, npm installs the checkout into its exec cache as a
//   link and "prepares" it: that would rebuild dist/ in place, under any imgpu process running from it, only to run
//   the CLI. There (npm_command=exec) nothing is built: bin/imgpu.js runs dist/ as it is, or says it is not built.
// - A tarball is what users install, with no compiler: `npm pack` / `npm publish` refuse to pack one without the
//   native pieces in `prepack` (scripts/check-pack.mjs), which runs before this.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const command = process.env.npm_command;
if (command === 'exec') process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', root], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts', 'bundle-cli.mjs'), root], { stdio: 'inherit' });

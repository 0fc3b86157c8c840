#!/usr/bin/env node
// Builds imgpu's optional JPEG codec (native/turbo.c, a Node-API binding of the system libjpeg-turbo) into
// dist/native/imgpu-turbo.node, with the library copied beside it (rpath $ORIGIN) so that dist/ runs on a
// machine without it (the device machine). Needs a C compiler and libturbojpeg0-dev; without them it says so
// and imgpu reads and writes JPEG through sharp instead (slower, and gray from RGB rather than the file's luma).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'native');
const headers = join(root, 'node_modules', 'node-api-headers', 'include');
const cc = process.env.CC ?? 'cc';

function libturbojpeg() {
  try {
    const out = execFileSync('pkg-config', ['--variable=libdir', 'libturbojpeg'], { encoding: 'utf8' }).trim();
    if (out && existsSync(join(out, 'libturbojpeg.so.0'))) return join(out, 'libturbojpeg.so.0');
  } catch { /* no pkg-config entry: try the Debian path */ }
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib']) {
    if (existsSync(join(dir, 'libturbojpeg.so.0')) && existsSync('/usr/include/turbojpeg.h')) return join(dir, 'libturbojpeg.so.0');
  }
  return undefined;
}

const lib = libturbojpeg();
if (!lib || !existsSync(headers)) {
  console.warn('imgpu: native JPEG codec not built (needs libturbojpeg0-dev and a C compiler); JPEG goes through sharp');
  process.exit(0);
}
mkdirSync(outDir, { recursive: true });
const tmp = join(outDir, `.imgpu-turbo.${process.pid}.node`);
try {
  execFileSync(cc, ['-O2', '-fPIC', '-shared', '-Wall', '-I', headers, join(root, 'native', 'turbo.c'), '-o', tmp,
    lib, '-Wl,-rpath,$ORIGIN'], { stdio: 'inherit' });
} catch {
  console.warn('imgpu: native JPEG codec failed to compile; JPEG goes through sharp');
  process.exit(0);
}
copyFileSync(realpathSync(lib), join(outDir, 'libturbojpeg.so.0'));
renameSync(tmp, join(outDir, 'imgpu-turbo.node'));
console.log(`imgpu: native JPEG codec built (${lib})`);

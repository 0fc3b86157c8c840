#!/usr/bin/env node
// Builds imgpu's optional native pieces into dist/native/ (Node-API, one binary for every Node version):
// - imgpu-turbo.node: the JPEG codec (native/turbo.c, a binding of the system libjpeg-turbo), with the library
//   copied beside it (rpath $ORIGIN) so that dist/ — and the package, which ships dist/native prebuilt — runs on a
//   machine without it (Debian's libturbojpeg.a is not position-independent, so it cannot be linked in);
// - imgpu-jpegcoef.node: the CPU half of the GPU JPEG decoder (native/coef-decode.c: entropy decoding to DCT
//   coefficients through libjpeg-turbo's libjpeg.so.62, from libjpeg62-turbo-dev), the library copied beside it too;
// - imgpu-native.node: host copies split over threads (native/copy.c), for the copies into and out of GPU-mapped
//   memory, the 8-bit histogram and LUT passes (native/point.c), the colour conversions (native/colour.c) and CLAHE's
//   interpolation (native/clahe.c; float32 steps as OpenCV's, -ffp-contract=off), on one pool of threads
//   (native/pool.c); and the capture of Dawn's notices on stderr (native/stderr.c);
// - imgpu-png.node: the PNG codec (native/png.c, libpng 1.6 as cv2.imread calls it, its gray reads too, and as
//   cv2.imwrite calls it: its bytes), its own module so that a machine without libpng16 keeps every other piece,
//   libpng copied beside it;
// - imgpu-jpegenc.node: the entropy coding of the GPU JPEG encoder (native/coef-encode.c, libjpeg's
//   jpeg_write_coefficients), with Debian's libjpeg.so.62 copied beside it as the codec's library is.
// The three JPEG modules share their Node-API glue (async work behind promises, Buffers, errors): native/napi-util.c.
// Each needs a C compiler (and the codec libturbojpeg0-dev); a piece that cannot be built is said so, and imgpu uses
// its JavaScript fallback (JPEG through sharp; TypedArray.set; the JavaScript loops).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'native');
const headers = join(root, 'node_modules', 'node-api-headers', 'include');
const cc = process.env.CC ?? 'cc';

/** The shared library `file` of pkg-config package `pkg` (or found in the usual directories) with its `header`. */
function systemLibrary(pkg, file, header) {
  try {
    const out = execFileSync('pkg-config', ['--variable=libdir', pkg], { encoding: 'utf8' }).trim();
    if (out && existsSync(join(out, file))) return join(out, file);
  } catch { /* no pkg-config entry: try the Debian path */ }
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib']) {
    if (existsSync(join(dir, file)) && existsSync(`/usr/include/${header}`)) return join(dir, file);
  }
  return undefined;
}

/** Copies a library the module links (rpath $ORIGIN) beside it, by a rename: a running imgpu has it mapped. */
function copyBeside(lib, file) {
  const tmp = join(outDir, `.${file}.${process.pid}`);
  copyFileSync(realpathSync(lib), tmp);
  renameSync(tmp, join(outDir, file));
}

/** Compiles native/<sources> into dist/native/<name> (atomically); false when the compiler fails. */
function build(sources, name, extra) {
  const tmp = join(outDir, `.${name}.${process.pid}`);
  try {
    execFileSync(cc, ['-O2', '-fPIC', '-shared', '-Wall', '-I', headers, ...sources.map((f) => join(root, 'native', f)), '-o', tmp, ...extra], { stdio: 'inherit' });
  } catch {
    return false;
  }
  renameSync(tmp, join(outDir, name));
  return true;
}

if (!existsSync(headers)) {
  console.warn('imgpu: native pieces not built (node-api-headers missing); JPEG goes through sharp, copies through JavaScript');
  process.exit(0);
}
mkdirSync(outDir, { recursive: true });

const lib = systemLibrary('libturbojpeg', 'libturbojpeg.so.0', 'turbojpeg.h');
if (!lib) {
  console.warn('imgpu: native JPEG codec not built (needs libturbojpeg0-dev and a C compiler: scripts/install-system-deps.sh, then `npm run build`); ' +
    'JPEG goes through sharp, whose gray reads and written files differ from cv2\'s');
} else if (build(['turbo.c', 'napi-util.c'], 'imgpu-turbo.node', [lib, '-Wl,-rpath,$ORIGIN'])) {
  copyBeside(lib, 'libturbojpeg.so.0');
  console.log(`imgpu: native JPEG codec built (${lib})`);
} else {
  console.warn('imgpu: native JPEG codec failed to compile; JPEG goes through sharp');
}

// The GPU JPEG codec's CPU halves, on libjpeg's own API (the one cv2 uses): the decoder's entropy stage
// (native/coef-decode.c) and the encoder's entropy coder (native/coef-encode.c: jpeg_write_coefficients).
const libjpeg = systemLibrary('libjpeg', 'libjpeg.so.62', 'jpeglib.h');
if (!libjpeg) {
  console.warn('imgpu: GPU JPEG decoder\'s entropy stage and encoder\'s entropy coder not built (need libjpeg62-turbo-dev: scripts/install-system-deps.sh); JPEG decodes and encodes on the CPU');
} else {
  copyBeside(libjpeg, 'libjpeg.so.62');
  if (build(['coef-decode.c', 'napi-util.c'], 'imgpu-jpegcoef.node', [libjpeg, '-Wl,-rpath,$ORIGIN'])) console.log(`imgpu: GPU JPEG decoder's entropy stage built (${libjpeg})`);
  else console.warn('imgpu: GPU JPEG decoder\'s entropy stage failed to compile; JPEG decodes on the CPU');
  if (build(['coef-encode.c', 'napi-util.c'], 'imgpu-jpegenc.node', [libjpeg, '-Wl,-rpath,$ORIGIN'])) console.log(`imgpu: GPU JPEG encoder's entropy coder built (${libjpeg})`);
  else console.warn('imgpu: GPU JPEG encoder\'s entropy coder failed to compile; JPEG encodes on the CPU');
}

// PNG through libpng, as cv2.imread reads it and cv2.imwrite writes it (libpng-dev).
const libpng = systemLibrary('libpng16', 'libpng16.so.16', 'png.h');
if (!libpng) {
  console.warn('imgpu: native PNG codec not built (needs libpng-dev: scripts/install-system-deps.sh); PNG goes through sharp, whose gray reads and written bytes differ from cv2\'s');
} else if (build(['png.c', 'napi-util.c'], 'imgpu-png.node', [libpng, '-Wl,-rpath,$ORIGIN'])) {
  copyBeside(libpng, 'libpng16.so.16');
  console.log(`imgpu: native PNG codec built (${libpng})`);
} else {
  console.warn('imgpu: native PNG codec failed to compile; PNG goes through sharp');
}

if (build(['module.c', 'pool.c', 'copy.c', 'point.c', 'colour.c', 'clahe.c', 'stderr.c', 'napi-util.c'], 'imgpu-native.node', ['-pthread', '-ffp-contract=off'])) console.log('imgpu: native copies and point kernels built');
else console.warn('imgpu: native copies and point kernels failed to compile; they run as JavaScript (TypedArray.set, the worker pool)');

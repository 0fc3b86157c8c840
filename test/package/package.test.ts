// The package as a user gets it: `npm pack` of this tree installed into a fresh project, then used from there
// (its `imgpu` and `imgpu/browser` entries, its types, its launcher, its JPEG codec) — never the source tree.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncOptions, type SpawnSyncReturns } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync,
  renameSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fixture } from '../helpers/fixtures.js';
import { childrenOf, mkfifo, readerGone, readerOf, running, until } from '../helpers/process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'imgpu-package-'));
const project = join(work, 'project');
const installed = join(project, 'node_modules', 'imgpu');
const linux = process.platform === 'linux';

/** The environment without npm's own variables (npm test sets them; they would steer the npm commands below). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], opts: Omit<SpawnSyncOptions, 'encoding'> = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { timeout: 300_000, env: cleanEnv(), ...opts, encoding: 'utf8' });
}

function ok(r: ReturnType<typeof run>, what: string) {
  assert.equal(r.status, 0, `${what}: exit ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Runs a user's script (written into the project) with this Node, from the project. */
function userScript(name: string, body: string, args: string[] = [], env: Record<string, string> = {}) {
  writeFileSync(join(project, name), body);
  return run(process.execPath, [name, ...args], { cwd: project, env: cleanEnv(env) });
}

let tarballFiles: string[] = [];

before(() => {
  // --ignore-scripts: pack the tree as built (npm test built dist/, npm install built dist/native); `prepare` would
  // rebuild it in place under the other tests.
  const pack = ok(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT }), 'npm pack');
  const info = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  tarballFiles = info[0].files.map((f) => f.path);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', version: '1.0.0', private: true, type: 'module' }));
  ok(run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, info[0].filename)], { cwd: project }), 'npm install of the tarball');
});

// The project holds a full install (webgpu's binaries for every platform): not left behind.
after(() => rmSync(work, { recursive: true, force: true }));

// ---- 1. Every documented function is exported.

const NODE_ONLY = new Set(['readImage', 'writeImage', 'decodeNpy', 'encodeNpy', 'readClassifier', 'train', 'createNodeGpuContext', 'NodeWorkerPool', 'decodeJpegToGpu', 'readJpegToGpu', 'encodeJpegFromGpu', 'encodeJpegGpu', 'readOmeZarr', 'writeOmeZarr', 'openOmeZarr', 'runChunked', 'defaultMemory', 'isZarrPath']);
const BROWSER_ONLY = new Set(['createBrowserGpuContext']);

/** Names exported (function, class or const) by any module the package ships. */
function shippedExports(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.d.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/^export declare (?:function|class|const) (\w+)/gm)) names.add(m[1]);
    }
  };
  walk(join(installed, 'dist', 'src'));
  return names;
}

/**
 * The API the README and docs/ document: names imported from 'imgpu' in their examples, the operations of the
 * README's table, and the calls `name(…)` they show of functions the package has (not methods, not OpenCV's).
 */
/** Contributors' pages: not shipped, and not API documentation. */
const INTERNAL_DOCS = ['docs/device.md', 'docs/architecture.md', 'docs/adding-an-operation.md', 'docs/adding-a-format.md'];

function documentedNames(): Set<string> {
  const shipped = shippedExports();
  // The user docs: the contributors' pages (not shipped: package.json "files") name internals, not the API.
  const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && !INTERNAL_DOCS.includes(`docs/${f}`)).map((f) => join('docs', f))];
  const names = new Set<string>();
  for (const f of docs) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    for (const m of text.matchAll(/import \{([^}]*)\} from 'imgpu(?:\/browser)?'/g)) {
      for (const n of m[1].split(',')) if (n.trim() && !n.trim().startsWith('type ')) names.add(n.trim());
    }
    const blocks = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    const spans = [...text.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const code = [...blocks, ...spans];
    for (const c of code) for (const m of c.matchAll(/(?<![.\w])([A-Za-z_]\w*)\(/g)) if (shipped.has(m[1])) names.add(m[1]);
    if (f === 'README.md') {
      for (const row of text.matchAll(/^\| (`[^|]*)\|/gm)) for (const m of row[1].matchAll(/`(\w+)`/g)) if (shipped.has(m[1])) names.add(m[1]);
    }
  }
  return names;
}

test('every documented function is exported by imgpu and, where the platform allows, by imgpu/browser', () => {
  const documented = documentedNames();
  for (const n of ['filter', 'correlate', 'convolve', 'runPipeline', 'parsePipeline', 'equalize', 'readImage']) assert.ok(documented.has(n), `the docs scan finds ${n}`);
  const r = ok(userScript('exports.mjs', `
import * as node from 'imgpu';
import * as browser from 'imgpu/browser';
import * as scale from 'imgpu/scale';
import * as batch from 'imgpu/batch';
console.log(JSON.stringify({ node: Object.keys(node), browser: Object.keys(browser), scale: Object.keys(scale), batch: Object.keys(batch) }));
`), 'import imgpu');
  const { node, browser, scale, batch } = JSON.parse(r.stdout) as { node: string[]; browser: string[]; scale: string[]; batch: string[] };
  // Scale-out (docs/scale-out.md) and the batch engine (docs/batch.md) are entries of their own, imgpu/scale and
  // imgpu/batch, Node only: their functions are documented there.
  const ofScale = (n: string) => (scale.includes(n) || batch.includes(n)) && !node.includes(n);
  const missing = [...documented].filter((n) => !ofScale(n) && (BROWSER_ONLY.has(n) ? !browser.includes(n) : !node.includes(n)));
  assert.deepEqual(missing, [], `documented but not exported by 'imgpu', 'imgpu/scale' or 'imgpu/batch': ${missing.join(', ')}`);
  assert.ok(['submit', 'createWorker', 'status', 'retry'].every((n) => scale.includes(n)), `imgpu/scale exports ${scale.join(', ')}`);
  assert.ok(batch.includes('batch') && documented.has('batch'), `imgpu/batch exports ${batch.join(', ')}, documented`);
  const notInBrowser = [...documented].filter((n) => !NODE_ONLY.has(n) && !ofScale(n) && !browser.includes(n));
  assert.deepEqual(notInBrowser, [], `documented, platform-neutral, not exported by 'imgpu/browser': ${notInBrowser.join(', ')}`);
});

test('filter and runPipeline from the installed package equal scipy and OpenCV (CPU, and GPU where there is one)', (t) => {
  const r = ok(userScript('filter.mjs', `
import { createNodeGpuContext, filter, NodeWorkerPool, parsePipeline, readImage, runPipeline } from 'imgpu';
const fx = process.argv[2];
/** Largest |a - b| relative to max |b| (scipy float32 references), or the count of differing pixels. */
function relErr(a, b) {
  if (a.data.length !== b.data.length) return Infinity;
  let d = 0, m = 0;
  for (let i = 0; i < b.data.length; i++) { d = Math.max(d, Math.abs(a.data[i] - b.data[i])); m = Math.max(m, Math.abs(b.data[i])); }
  return d / m;
}
const differing = (a, b) => a.data.length !== b.data.length ? Infinity : a.data.reduce((n, v, i) => n + (v !== b.data[i]), 0);
const img = await readImage(fx + '/convolve/img2d.npy');
const camera = await readImage(fx + '/images/camera.png', { gray: true });
const refs = { sobel: await readImage(fx + '/convolve/sp2-sobel-x-reflect.npy'), gauss: await readImage(fx + '/convolve/sp2-gauss2-reflect.npy'), pipe: await readImage(fx + '/threshold/camera_equalize_otsu.png') };
const steps = parsePipeline('equalize | threshold --method otsu');
async function on(opts) {
  return {
    sobel: relErr((await filter(img, 'sobel-x', opts)).output, refs.sobel),
    gauss: relErr((await filter(img, 'gauss:2', opts)).output, refs.gauss),
    pipeline: differing((await runPipeline(camera, steps, opts)).output, refs.pipe),
  };
}
const pool = new NodeWorkerPool();
const out = { cpu: await on({ pool }) };
try { out.gpu = await on({ gpu: await createNodeGpuContext(), pool }); } catch (e) { out.noGpu = e.message; }
await pool.close();
console.log(JSON.stringify(out));
process.exit(0);
`, [fixture()]), 'filter/runPipeline');
  const res = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, { sobel: number; gauss: number; pipeline: number }> & { noGpu?: string };
  for (const dev of ['cpu', 'gpu'] as const) {
    if (!res[dev]) continue;
    assert.ok(res[dev].sobel <= 1e-5, `${dev} sobel-x vs scipy.ndimage.sobel: ${res[dev].sobel}`);
    assert.ok(res[dev].gauss <= 1e-5, `${dev} gauss:2 vs scipy.ndimage.gaussian_filter: ${res[dev].gauss}`);
    assert.equal(res[dev].pipeline, 0, `${dev} "equalize | threshold --method otsu" vs cv2: differing pixels`);
  }
  if (res.noGpu) {
    if (process.env.IMGPU_REQUIRE_GPU === '1') assert.fail(`IMGPU_REQUIRE_GPU=1 but no GPU adapter: ${res.noGpu}`);
    t.diagnostic(`GPU part skipped: no GPU adapter: ${res.noGpu}`);
  }
});

// ---- 2. Types: a user's strict compile needs nothing but the package.

const USER_TS = `
import { applyLut, createNodeGpuContext, filter, gamma, GpuImage, parsePipeline, readImage, runPipeline, writeImage, type GammaOptions, type GpuContext, type Image, type RunOptions } from 'imgpu';
import { createBrowserGpuContext } from 'imgpu/browser';
type IsAny<T> = 0 extends 1 & T ? true : false;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const gpu: GpuContext = await createNodeGpuContext();
export const deviceIsGPUDevice: Same<typeof gpu.device, GPUDevice> = true;
export const deviceIsNotAny: IsAny<typeof gpu.device> = false;
export const bufferIsGPUBuffer: Same<GpuImage['buffer'], GPUBuffer> = true;
export const bufferIsNotAny: IsAny<GpuImage['buffer']> = false;
const img = await readImage('photo.png', { gray: true });
export const edges = (await filter(img, 'sobel', { gpu })).output;
export const chain = (await runPipeline(img, parsePipeline('equalize | threshold --method otsu'), { gpu })).output;
export const hostRead: Same<typeof img, Image> = true;
const resident = await readImage('photo.jpg', { gpu, gray: true, jpeg: 'gpu' });
export const residentRead: Same<typeof resident, GpuImage> = true;
await writeImage('out.jpg', resident, { jpeg: 'gpu', quality: 90 });
await writeImage('out.png', img);
export const browser = createBrowserGpuContext;
// The public options hold what users set; the engine's controls (a Recording the package does not export) are not among them.
type EngineKeys = 'recording' | 'inPlace' | 'extras' | 'wait' | 'view';
export const runOptionsPublic: Same<Extract<keyof RunOptions, EngineKeys>, never> = true;
export const gammaOptionsPublic: Same<Extract<keyof GammaOptions, EngineKeys>, never> = true;
export const gammaRun = (await gamma(img, { gamma: 0.5, gpu, profile: true })).output;
export const applied = (await applyLut(img, new Uint32Array(256), { gpu })).output;
`;

for (const skipLibCheck of [false, true]) {
  test(`a user's strict TypeScript file compiles against the package (skipLibCheck ${skipLibCheck}); gpu.device is a GPUDevice, not any`, () => {
    writeFileSync(join(project, 'user.ts'), USER_TS);
    const config = `tsconfig.${skipLibCheck}.json`;
    writeFileSync(join(project, config), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck, noEmit: true },
      files: ['user.ts'],
    }));
    const r = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: project });
    assert.equal(r.status, 0, `tsc:\n${r.stdout.split('\n').slice(0, 20).join('\n')}`);
  });
}

// ---- 4. What the tarball holds.

test("a bundle of one operation from 'imgpu/browser' holds that operation's family and what it uses, not the others (sideEffects: false)", async () => {
  const { build } = await import('esbuild');
  const entry = join(project, 'equalize-only.js');
  writeFileSync(entry, "import { equalize, createBrowserGpuContext } from 'imgpu/browser';\nexport { equalize, createBrowserGpuContext };\n");
  const r = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', minify: true, write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.entries(r.metafile.outputs[Object.keys(r.metafile.outputs)[0]].inputs).filter(([, v]) => v.bytesInOutput > 0).map(([k]) => k);
  const families = new Set(inputs.flatMap((k) => /\/dist\/src\/ops\/([^/]+)\//.exec(k)?.[1] ?? []));
  const bytes = r.outputFiles[0].contents.length;
  // equalize is histogram → LUT → apply: those three families, and no detection, XML parser, filters, codecs.
  assert.deepEqual([...families].sort(), ['equalize', 'histogram', 'lut'], `${inputs.length} modules, ${bytes} bytes`);
  assert.ok(!inputs.some((k) => /fast-xml-parser|nifti|dicom|sharp/.test(k)), inputs.join('\n'));
});

test('the tarball ships what a user needs: no internal notes, source maps that carry their sources, the native codec', () => {
  for (const internal of INTERNAL_DOCS) assert.ok(!tarballFiles.includes(internal), `${internal} is shipped`);
  assert.ok(!tarballFiles.some((f) => f.startsWith('test/') || f.startsWith('bench/') || f.startsWith('dist/test/')), 'tests or benchmarks shipped');
  const leaks: string[] = [];
  const unresolved: string[] = [];
  for (const f of tarballFiles) {
    if (!/\.(md|js|mjs|ts|json|map)$/.test(f)) continue;
    const text = readFileSync(join(installed, f), 'utf8');
    if (/\.\.\/shared\/|DESIGN\.md|ALGORITHMS\.md|WEBGPU-NODE\.md|\.devkit/.test(text)) leaks.push(f);
    if (f.endsWith('.map')) {
      const map = JSON.parse(text) as { sources: string[]; sourcesContent?: (string | null)[] };
      map.sources.forEach((s, i) => {
        if (!map.sourcesContent?.[i] && !existsSync(join(installed, dirname(f), s))) unresolved.push(`${f} → ${s}`);
      });
    }
  }
  assert.deepEqual(leaks, [], 'files naming the project\'s internal notes');
  assert.deepEqual(unresolved.slice(0, 5), [], `${unresolved.length} source-map sources neither shipped nor inlined`);
  if (existsSync(join(ROOT, 'dist', 'native', 'imgpu-turbo.node')) || process.env.IMGPU_REQUIRE_NATIVE === '1') {
    for (const f of ['dist/native/imgpu-turbo.node', 'dist/native/imgpu-native.node', 'dist/native/imgpu-jpegcoef.node', 'dist/native/imgpu-jpegenc.node', 'dist/native/libjpeg.so.62']) {
      assert.ok(tarballFiles.includes(f), `${f} not in the tarball`);
    }
  }
});

// ---- 6. JPEG: the exact native path, prebuilt in the package; where it is missing, said once.

const nativeBuilt = existsSync(join(ROOT, 'dist', 'native', 'imgpu-turbo.node'));
const nativeSkip = nativeBuilt || process.env.IMGPU_REQUIRE_NATIVE === '1' ? false : 'native JPEG codec not built (scripts/build-native.mjs)';
const NOTICE = /IMGPU_JPEG_SHARP/g;

const JPEG_SCRIPT = `
import { readFileSync } from 'node:fs';
import { readImage, writeImage } from 'imgpu';
const [fx, out] = process.argv.slice(2);
const gray = await readImage(fx + '/jpeg/chelsea_q90.jpg', { gray: true });
const ref = await readImage(fx + '/jpeg/chelsea_q90_gray.png');
await readImage(fx + '/jpeg/crop_o1.jpg');
await writeImage(out, await readImage(fx + '/jpeg/chelsea_q90_rgb.png'));
const differing = gray.data.reduce((n, v, i) => n + (v !== ref.data[i]), 0);
console.log(JSON.stringify({ differing, bytesEqual: readFileSync(out).equals(readFileSync(fx + '/jpeg/chelsea_q95_cv2.jpg')) }));
`;

test('the installed package decodes and encodes JPEG as cv2.imread/imwrite, with the codec it carries (no compiler, no system library)', { skip: nativeSkip }, () => {
  const r = ok(userScript('jpeg.mjs', JPEG_SCRIPT, [fixture(), join(work, 'c.jpg')]), 'JPEG');
  assert.deepEqual(JSON.parse(r.stdout), { differing: 0, bytesEqual: true });
  assert.doesNotMatch(r.stderr, NOTICE, 'no fallback notice where the codec is there');
  if (linux) {
    // The binary finds libjpeg-turbo beside itself (rpath $ORIGIN), not on the system.
    const ldd = ok(run('ldd', [join(installed, 'dist', 'native', 'imgpu-turbo.node')]), 'ldd');
    assert.match(ldd.stdout, new RegExp(`libturbojpeg\\.so\\.0 => ${join(installed, 'dist', 'native')}/`), ldd.stdout);
    // The GPU codec's entropy halves likewise find libjpeg beside themselves.
    for (const m of ['imgpu-jpegcoef.node', 'imgpu-jpegenc.node']) {
      const l = ok(run('ldd', [join(installed, 'dist', 'native', m)]), 'ldd');
      assert.match(l.stdout, new RegExp(`libjpeg\\.so\\.62 => ${join(installed, 'dist', 'native')}/`), l.stdout);
    }
  }
});

test('the installed package\'s `imgpu info --json` reports the GPU JPEG decode and encode paths available (their modules load from the package)', { skip: nativeSkip }, (t) => {
  const r = run(process.execPath, [join(project, 'node_modules', '.bin', 'imgpu'), 'info', '--json'], { cwd: project });
  if (r.status === 4 && process.env.IMGPU_REQUIRE_GPU !== '1') { // exit 4: no GPU adapter
    t.skip(`no GPU adapter: ${r.stderr.trim()}`);
    return;
  }
  ok(r, 'imgpu info --json');
  const { jpeg } = JSON.parse(r.stdout) as { jpeg: { gpu: string; gpuEncode: string; cpu: string } };
  assert.deepEqual({ gpu: jpeg.gpu, gpuEncode: jpeg.gpuEncode, cpu: jpeg.cpu }, { gpu: 'available', gpuEncode: 'available', cpu: 'available (libjpeg-turbo)' });
});

test('without the native codec, JPEG goes through sharp and says so once per process (main thread and codec workers), naming what differs', { skip: nativeSkip }, () => {
  const codec = join(installed, 'dist', 'native', 'imgpu-turbo.node');
  renameSync(codec, `${codec}.hidden`);
  try {
    const r = ok(userScript('jpeg.mjs', JPEG_SCRIPT, [fixture(), join(work, 'c.jpg')]), 'JPEG through sharp');
    const res = JSON.parse(r.stdout) as { differing: number; bytesEqual: boolean };
    assert.ok(res.differing > 0 && !res.bytesEqual, 'sharp differs from cv2 here (else this test shows nothing)');
    assert.equal(r.stderr.match(NOTICE)?.length, 1, r.stderr);
    assert.match(r.stderr, /cv2\.imread.*cv2\.imwrite/s);
    // A batch: decoding and encoding run on codec worker threads.
    const inDir = join(work, 'jpegs');
    mkdirSync(inDir, { recursive: true });
    for (const f of ['chelsea_q90.jpg', 'crop_o1.jpg', 'crop_o2.jpg', 'crop_o3.jpg']) copyFileSync(fixture('jpeg', f), join(inDir, f));
    const b = ok(run(process.execPath, [join(project, 'node_modules', '.bin', 'imgpu'), 'equalize', inDir, join(work, 'jpegs-out'), '--device', 'cpu'], { cwd: project }), 'batch');
    assert.equal(readdirSync(join(work, 'jpegs-out')).filter((f) => !f.startsWith('.')).length, 4, 'four outputs (and the batch record)');
    assert.equal(b.stderr.match(NOTICE)?.length, 1, b.stderr);
    // A single-image command reading and writing JPEG: said once too.
    const one = ok(run(process.execPath, [join(project, 'node_modules', '.bin', 'imgpu'), 'equalize', fixture('jpeg', 'chelsea_q90.jpg'), join(work, 'one.jpg'), '--device', 'cpu'], { cwd: project }), 'single image');
    assert.equal(one.stderr.match(NOTICE)?.length, 1, one.stderr);
  } finally {
    renameSync(`${codec}.hidden`, codec);
  }
});

// ---- 3 and 11. An older Node: one true line, or the project's Node 22 — and then signals reach it.

/** A Node.js older than 22 outside any node_modules (the system's), or undefined. */
function olderNode(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'].filter((d) => d && !d.includes('node_modules'));
  for (const d of dirs) {
    const p = join(d, 'node');
    if (!existsSync(p)) continue;
    const v = run(p, ['--version']).stdout?.trim();
    if (v && Number(v.slice(1).split('.')[0]) < 22) return p;
  }
  return undefined;
}

/**
 * Where the machine has no older Node (CI's has only 22): one made for the test, a `node` of its own directory that
 * runs this Node 22 with process.version and process.versions.node saying 20.11.1 before any other code — all the
 * launcher and the library read to decide (src/node/runtime.ts). Its children (the launcher's re-run under the
 * project's Node 22) are real Node 22s: the preload is an argument of this process only, not inherited. What it
 * cannot show is that the launcher parses on an old Node: the system's older Node, where there is one, does.
 */
function emulatedOlderNode(): string {
  const dir = join(work, 'older-node');
  mkdirSync(dir, { recursive: true });
  const preload = join(dir, 'version-20.mjs');
  writeFileSync(preload, "Object.defineProperty(process, 'version', { value: 'v20.11.1' });\nObject.defineProperty(process.versions, 'node', { value: '20.11.1' });\n");
  const node = join(dir, 'node');
  writeFileSync(node, `#!/bin/sh\nexec '${process.execPath}' --import '${pathToFileURL(preload).href}' "$@"\n`, { mode: 0o755 });
  return node;
}
const oldNode = olderNode() ?? (linux ? emulatedOlderNode() : undefined);
const oldSkip = oldNode ? false : 'no Node.js older than 22 on this machine, and the emulated one needs a POSIX shell';

test('the older Node these tests run on says it is older than 22 (the system\'s, or the one emulated where there is none)', { skip: oldSkip }, () => {
  const v = run(oldNode!, ['-e', 'console.log(process.version, process.versions.node)']).stdout.trim().split(' ');
  assert.ok(Number(v[0].slice(1).split('.')[0]) < 22 && v[1] === v[0].slice(1), v.join(' '));
});
const launcher = () => join(installed, 'bin', 'imgpu.js');
const projectNode = join(project, 'node_modules', '.bin', 'node');

test('on an older Node without a Node 22 in the project: the launcher and the library say one true line; README and engines agree', { skip: oldSkip }, () => {
  rmSync(projectNode, { force: true });
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, '>=22');
  const advice = '`npm install --save-dev node@22`';
  const r = run(oldNode!, [launcher(), 'equalize', 'in.png', 'out.png'], { cwd: project });
  assert.equal(r.status, 6, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^imgpu: error: imgpu needs Node\.js >= 22 \(this is v\d+\.\d+\.\d+\)/);
  assert.ok(lines[0].includes(advice), lines[0]);
  const lib = run(oldNode!, ['-e', `import('imgpu').then((m) => m.createNodeGpuContext()).catch((e) => console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })))`], { cwd: project });
  const e = JSON.parse(lib.stdout) as { name: string; code: string; message: string };
  assert.equal(e.code, 'RUNTIME_VERSION', lib.stdout + lib.stderr);
  assert.equal(`imgpu: error: ${e.message}`, lines[0], 'the library says what the launcher says');
  assert.ok(readFileSync(join(installed, 'README.md'), 'utf8').includes(advice), 'the README gives the same advice');
});

test('on an older Node with node@22 in the project (as the advice says): the launcher runs imgpu on it', { skip: oldSkip }, () => {
  mkdirSync(dirname(projectNode), { recursive: true });
  rmSync(projectNode, { force: true });
  symlinkSync(process.execPath, projectNode);
  const r = run(oldNode!, [launcher(), '--help'], { cwd: project });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^imgpu — /);
  const npx = run('npx', ['imgpu', '--help'], { cwd: project, env: cleanEnv({ PATH: `${dirname(oldNode!)}${delimiter}${process.env.PATH}` }) });
  assert.equal(npx.status, 0, npx.stderr);
});

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`on an older Node, ${signal} of the launcher ends the imgpu it started under Node 22`, { skip: oldSkip || (!linux && 'needs Linux /proc and mkfifo') }, async () => {
    if (!existsSync(projectNode)) symlinkSync(process.execPath, projectNode);
    const dir = mkdtempSync(join(work, 'signal-'));
    const input = join(dir, 'in.png');
    mkfifo(input);
    // imgpu's input is a FIFO: it reads until a writer closes it, i.e. it is at work until we say.
    const proc = spawn(oldNode!, [launcher(), 'equalize', input, join(dir, 'out.png'), '--device', 'cpu'], { cwd: project, stdio: 'ignore', env: cleanEnv() });
    const fd = await readerOf(input);
    try {
      const kids = childrenOf(proc.pid!);
      assert.equal(kids.length, 1, 'the launcher runs one child');
      const exited = once(proc, 'exit');
      proc.kill(signal);
      const [, sig] = await exited;
      assert.equal(sig, signal, 'the launcher ends by the signal it got');
      await readerGone(fd, `the imgpu child (pid ${kids[0]}) still reads its input after ${signal} of the launcher`);
      await until(() => (running(kids[0]) ? undefined : true), `pid ${kids[0]} still runs`);
      assert.ok(!existsSync(join(dir, 'out.png')), 'no output written');
    } finally {
      closeSync(fd);
    }
  });
}

// ---- 5. `npx imgpu` inside a checkout runs the CLI, and builds nothing.

test('npx imgpu inside a checkout runs the built CLI without rebuilding dist/ (npm exec would run `prepare` on it)', () => {
  const checkout = join(work, 'checkout');
  mkdirSync(join(checkout, 'dist'), { recursive: true });
  for (const p of ['package.json', 'tsconfig.json', 'src', 'bin', 'scripts', 'native']) cpSync(join(ROOT, p), join(checkout, p), { recursive: true });
  for (const p of ['src', 'native']) if (existsSync(join(ROOT, 'dist', p))) cpSync(join(ROOT, 'dist', p), join(checkout, 'dist', p), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  const stamp = () => {
    const out: Record<string, number> = {};
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        const s = statSync(p);
        if (s.isDirectory()) walk(p);
        else out[relative(checkout, p)] = s.mtimeMs;
      }
    };
    walk(join(checkout, 'dist'));
    return out;
  };
  const before = stamp();
  const r = run('npx', ['--offline', 'imgpu', '--help'], { cwd: checkout, env: cleanEnv({ npm_config_cache: join(work, 'npm-cache') }) });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^imgpu — /);
  const after = stamp();
  const changed = Object.keys(after).filter((f) => after[f] !== before[f]);
  assert.deepEqual(changed.slice(0, 5), [], `npx rewrote ${changed.length} files of dist/`);
});

// ---- imgpu/batch from the installed package (issue 36's acceptance).

test('imgpu/batch from code writes the bytes of `imgpu <op> <folder> <out>`, an event for every input (the corrupt one failed), an AbortSignal stops it with nothing half-written, and 2 processes give the same', () => {
  const inDir = join(work, 'batch-in');
  mkdirSync(inDir);
  // Small photos (lavapipe and two cores are slow): three real JPEGs, copies of them to have images left to abort, one corrupt.
  for (let i = 0; i < 4; i++) for (const f of ['camera_gray.jpg', 'chelsea_q90.jpg', 'crop_o1.jpg']) copyFileSync(fixture('jpeg', f), join(inDir, `${i}-${f}`));
  writeFileSync(join(inDir, 'corrupt.jpg'), readFileSync(fixture('jpeg', 'chelsea_q90.jpg')).subarray(0, 700));
  const cliOut = join(work, 'batch-cli');
  const c = run(process.execPath, [join(project, 'node_modules', '.bin', 'imgpu'), 'equalize', inDir, cliOut, '--device', 'cpu', '--quiet'], { cwd: project });
  assert.equal(c.status, 9, `the CLI: some failed\n${c.stderr}`);
  const r = ok(userScript('batch.mjs', `
import { batch } from 'imgpu/batch';
const [inDir, out, aborted] = process.argv.slice(2);
const events = [];
const run = batch([{ op: 'equalize' }], { inputs: [inDir], out, threads: 2, codecThreads: 2 });
for await (const e of run) events.push(e.type === 'failed' ? { ...e, error: { name: e.error.name, code: e.error.code } } : e);
const summary = await run.done;
// Aborted after the first image written: those in flight finish whole, no other is started.
const ac = new AbortController();
const second = batch([{ op: 'equalize' }], { inputs: [inDir], out: aborted, threads: 2, codecThreads: 2, window: 2, signal: ac.signal });
const abortEvents = [];
for await (const e of second) {
  abortEvents.push(e.type);
  if (e.type === 'done') ac.abort();
}
// Two processes: the engine spawns its own child entry from the installed package (not this script).
const third = batch([{ op: 'equalize' }], { inputs: [inDir], out: process.argv[5], processes: 2, threads: 1, codecThreads: 1 });
const twoDone = [];
for await (const e of third) if (e.type === 'done') twoDone.push(e.id);
const two = { done: twoDone, summary: await third.done };
console.log(JSON.stringify({ events, summary, abortEvents, abortSummary: await second.done, two }));
`, [inDir, join(work, 'batch-lib'), join(work, 'batch-aborted'), join(work, 'batch-two')]), 'imgpu/batch');
  const { events, summary, abortEvents, abortSummary, two } = JSON.parse(r.stdout) as {
    two: { done: string[]; summary: { processed: number; processes: number } };
    events: { type: string; id?: string; output?: string; path?: string; error?: { name: string; code: string } }[];
    summary: { processed: number; failed: { file: string }[]; aborted?: boolean }; abortEvents: string[]; abortSummary: { processed: number; aborted?: boolean };
  };
  const inputs = readdirSync(inDir).map((f) => join(inDir, f));
  const done = events.filter((e) => e.type === 'done');
  assert.deepEqual(done.map((e) => e.id).sort(), inputs.filter((f) => !f.endsWith('corrupt.jpg')).sort(), 'a done event for every good input');
  assert.ok(done.every((e) => e.path === 'cpu'));
  assert.deepEqual(events.filter((e) => e.type === 'failed'), [{ type: 'failed', id: join(inDir, 'corrupt.jpg'), error: { name: 'UnsupportedFormatError', code: 'UNSUPPORTED_FORMAT' } }]);
  assert.equal(summary.processed, 12);
  assert.equal(summary.aborted, undefined);
  for (const f of readdirSync(cliOut).filter((n) => !n.startsWith('.'))) assert.deepEqual(readFileSync(join(work, 'batch-lib', f)), readFileSync(join(cliOut, f)), `${f}: the CLI's bytes`);
  assert.equal(readdirSync(cliOut).filter((n) => !n.startsWith('.')).length, 12);
  // The abort: fewer images than the folder's, every output whole (the CLI's bytes), no temporary file left.
  assert.equal(abortSummary.aborted, true);
  assert.ok(abortSummary.processed >= 1 && abortSummary.processed < 12, `stopped early: ${abortSummary.processed} processed`);
  const left = readdirSync(join(work, 'batch-aborted'));
  assert.deepEqual(left.filter((n) => n.startsWith('.') && n !== '.imgpu-batch.json'), [], 'no temporary file');
  const written = left.filter((n) => !n.startsWith('.'));
  assert.equal(written.length, abortSummary.processed);
  for (const f of written) assert.deepEqual(readFileSync(join(work, 'batch-aborted', f)), readFileSync(join(cliOut, f)), `${f} whole`);
  assert.equal(abortEvents.filter((t) => t === 'done').length, abortSummary.processed);
  // processes: 2 — the same done events and bytes as one process.
  assert.deepEqual([two.summary.processed, two.summary.processes], [12, 2]);
  assert.deepEqual(two.done.sort(), done.map((e) => e.id).sort());
  for (const f of readdirSync(cliOut).filter((n) => !n.startsWith('.'))) assert.deepEqual(readFileSync(join(work, 'batch-two', f)), readFileSync(join(cliOut, f)), `${f}: 2 processes, the CLI's bytes`);
});

// `npm run playground`: builds the browser playground (esbuild) into playground/dist — plain static files —
// and serves it on http://127.0.0.1:8080 (PORT to change) with the COOP/COEP headers that give pages
// SharedArrayBuffer. `--build-only [--out DIR]` builds without serving (CI tests, static hosting).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

const arg = (n) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : undefined; };
const out = arg('out') ?? 'playground/dist';
mkdirSync(join(out, 'samples'), { recursive: true });
const common = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', outdir: out, logLevel: 'warning', sourcemap: true };
await build({ ...common, entryPoints: ['playground/app.ts', 'playground/cpu-worker.ts', 'playground/detect.ts', 'playground/detect-worker.ts'] });
// The volume page split: zarrita and numcodecs' wasm codecs (1.7 MB) load only when an OME-Zarr is opened.
await build({ ...common, entryPoints: ['playground/volume.ts'], splitting: true });
for (const page of ['index.html', 'volume.html', 'detect.html', 'playground.css']) copyFileSync(join('playground', page), join(out, page));
for (const [src, name] of [['samples/camera.png', 'camera.png'], ['test/fixtures/images/coins.png', 'coins.png'], ['test/fixtures/images/chelsea.png', 'chelsea.png'], ['test/fixtures/volumes/anatomical.nii', 'anatomical.nii'],
  // The detection page's sample and its bundled classifier (OpenCV's, from opencv-data).
  ['test/fixtures/detect/astronaut.png', 'astronaut.png'], ['test/fixtures/detect/lbpcascade_frontalface.xml', 'lbpcascade_frontalface.xml']]) {
  copyFileSync(src, join(out, 'samples', name));
}
const HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
// Static hosts that read a _headers file (Netlify, Cloudflare Pages) get the same two headers.
writeFileSync(join(out, '_headers'), `/*\n${Object.entries(HEADERS).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`);
console.log(`built ${out}`);
if (process.argv.includes('--build-only')) process.exit(0);

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.map': 'application/json', '.png': 'image/png', '.css': 'text/css', '.xml': 'application/xml' };
const port = Number(process.env.PORT ?? 8080);
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^([/\\])+/, '');
  const file = join(out, path === '' ? 'index.html' : path);
  if (!file.startsWith(normalize(out)) || !existsSync(file)) { res.writeHead(404, HEADERS).end('not found'); return; }
  res.writeHead(200, { ...HEADERS, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
server.listen(port, '127.0.0.1', () => console.log(`imgpu playground: http://127.0.0.1:${server.address().port}/ (Chromium with WebGPU; Ctrl-C stops)`));

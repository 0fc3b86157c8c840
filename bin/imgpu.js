#!/usr/bin/env node
// imgpu launcher. imgpu runs on Node >= 22 (src/node/runtime.ts). Started from an older Node, it re-runs itself with
// a Node 22 from node_modules/.bin — this checkout's (its dev dependency `node`) or, installed as a dependency, the
// user's project's — as a child that dies with it; with none, it says in one line what to do.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import module from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// V8's code cache for the ~300 modules a command loads, kept in the system's temporary folder (Node >= 22.1; older
// Nodes lack it and re-run below anyway): on the H200 machine a CPU run of one small image took 230 ms instead of
// 262 (medians of 7 processes each, interleaved), a GPU run ~20 ms less.
module.enableCompileCache?.();

// Image decoding and encoding (sharp) and file I/O run on libuv's thread pool, 4 threads unless told: batch mode
// keeps several images in flight, so give it the cores (read when the pool starts, i.e. before any I/O below).
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, Math.min(16, availableParallelism())));
const self = fileURLToPath(import.meta.url);
const here = dirname(self);
const dist = join(here, '..', 'dist', 'src');
const cli = join(dist, 'cli', 'main.js');
if (!existsSync(cli)) {
  console.error('imgpu: error: the CLI is not built; run `npm install && npm run build` first');
  process.exit(1);
}
const { MIN_NODE_MAJOR, nodeMajor, nodeVersionMessage, PARENT_ENV } = await import(pathToFileURL(join(dist, 'node', 'runtime.js')).href);

if (nodeMajor() >= MIN_NODE_MAJOR) {
  await import(pathToFileURL(bundledOr(cli)).href);
} else {
  const node = process.env[PARENT_ENV] ? undefined : projectNode();
  if (!node) {
    console.error(`imgpu: error: ${nodeVersionMessage()}`);
    process.exit(6);
  }
  relaunch(node);
}

/**
 * The CLI bundled by scripts/bundle-cli.mjs (npm run build, pretest, prebench) where it is not older than tsc's
 * main.js, else main.js itself: ~260 modules loaded one by one cost half the CPU time of a small command (issue 40
 * item 5, docs/throughput.md), and a `tsc` since the bundle (which rewrites main.js) must not run stale code.
 */
function bundledOr(main) {
  const bundle = join(dist, 'bundle', 'main.js');
  const mtime = (p) => statSync(p, { throwIfNoEntry: false })?.mtimeMs;
  return (mtime(bundle) ?? -Infinity) >= mtime(main) ? bundle : main;
}

/** The Node of node_modules/.bin: this checkout's own, or that of the project imgpu is installed in. */
function projectNode() {
  return [join(here, '..', 'node_modules', '.bin', 'node'), join(here, '..', '..', '.bin', 'node')].find((p) => existsSync(p));
}

/**
 * Runs this launcher under `node` as a child that ends with this process: the signals that end a process are passed
 * on (and this one then ends as the child did), and a SIGKILL of this process, which cannot be passed on, closes
 * the IPC channel the child watches (endWithParent in src/node/runtime.ts, called by the CLI).
 */
function relaunch(node) {
  const child = spawn(node, [self, ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [PARENT_ENV]: String(process.pid) },
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const s of signals) process.on(s, () => child.kill(s));
  child.on('error', (e) => {
    console.error(`imgpu: error: cannot start ${node}: ${e.message}`);
    process.exit(6);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // End as the child did: the signal's default action (the listeners above are removed) ends this process here.
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}


// The playground's browser tests: the Chromium they drive, and `npm run playground` served for them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = process.env.IMGPU_CHROMIUM ?? '/usr/bin/chromium';
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Flags that keep headless Chromium from reaching out (updates, sync, QUIC) while it is tested. */
export const QUIET = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Whether Chromium is there; skips the test if not, unless IMGPU_REQUIRE_BROWSER=1 makes that a failure. */
export function chromiumOrSkip(t: { skip(msg: string): void }): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.IMGPU_REQUIRE_BROWSER === '1') throw new Error(`IMGPU_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (scripts/install-system-deps.sh installs it)`);
  t.skip(`no Chromium at ${CHROMIUM}`);
  return false;
}

/** `npm run playground` itself (build, then serve with COOP/COEP) on a free port, into a temporary folder. */
export async function servePlayground(): Promise<{ server: ChildProcess; url: string }> {
  const out = mkdtempSync(join(tmpdir(), 'imgpu-playground-'));
  const server = spawn(process.execPath, ['scripts/playground.mjs', '--out', out], { cwd: ROOT, env: { ...process.env, PORT: '0' } });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    server.stdout!.on('data', (d) => {
      log += d;
      const m = /imgpu playground: (http:\/\/\S+)/.exec(log);
      if (m) resolve(m[1]);
    });
    server.stderr!.on('data', (d) => { log += d; });
    server.on('exit', (code) => reject(new Error(`npm run playground exited (${code}): ${log}`)));
  });
  return { server, url };
}

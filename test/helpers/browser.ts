// Headless Chromium for the browser tests (playwright-core); the playground served by its own script.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = process.env.IMGPU_CHROMIUM ?? '/usr/bin/chromium';
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Chromium flags for a quiet test run (no sandbox in containers, nothing fetched from the network). */
export const QUIET = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
/** WebGPU on SwiftShader (software), as in CI. */
export const WEBGPU = [...QUIET, '--enable-unsafe-webgpu', '--enable-unsafe-swiftshader'];
/** No WebGPU and no GPU at all: the pages' CPU-only path. */
export const NO_WEBGPU = [...QUIET, '--disable-webgpu', '--disable-gpu'];

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

/** Headless Chromium (CHROMIUM) started with `args`; playwright-core is imported only when a test gets this far. */
export async function launchChromium(args: readonly string[] = WEBGPU): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...args] });
}

/** Chromium started with `args` for `body`, closed after it whatever happens. */
export async function withChromium<T>(args: readonly string[], body: (browser: Browser) => Promise<T>): Promise<T> {
  const browser = await launchChromium(args);
  try {
    return await body(browser);
  } finally {
    await browser.close();
  }
}

/**
 * The playground served (servePlayground) and Chromium started with `args` for `body`, which gets the browser and
 * the playground's URL; both closed after it whatever happens.
 */
export async function withPlayground<T>(args: readonly string[], body: (browser: Browser, url: string) => Promise<T>): Promise<T> {
  const { server, url } = await servePlayground();
  try {
    return await withChromium(args, (browser) => body(browser, url));
  } finally {
    server.kill();
  }
}

/** The page's uncaught exceptions, collected as they happen (`prefix` before each): a test asserts it empty at the end. */
export function pageErrors(page: Page, prefix = ''): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`${prefix}${e.message}`));
  return errors;
}

/** Goes to `url` and waits until the page says it is idle (body[data-state="idle"]: loaded, its adapter known). */
export async function openIdle(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('body[data-state="idle"]', { timeout: 60_000 });
}

/** An HTTP server answering `handler` on a free port of 127.0.0.1: its URL (ending in '/') and how to close it. */
export async function serveLocal(handler: RequestListener): Promise<{ url: string; close: () => void }> {
  const server = createServer(handler);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

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

/** What the page's last run left in window.__last (checksums, errors, dtype). */
export function lastRun(page: Page): Promise<Record<string, unknown>> {
  return page.evaluate(() => (window as unknown as { __last: Record<string, unknown> }).__last);
}

/** Picks the operation and its form values in the playground, runs it, waits for the result: what __last then says. */
export async function runInPage(page: Page, op: string, values: Record<string, string>): Promise<Record<string, unknown>> {
  await page.selectOption('#op', op);
  for (const [k, v] of Object.entries(values)) {
    if ((await page.$eval(`#param-${k}`, (e) => e.tagName)) === 'SELECT') await page.selectOption(`#param-${k}`, v);
    else await page.fill(`#param-${k}`, v);
  }
  await page.click('#run');
  await page.waitForSelector('body[data-state="done"]', { timeout: 300_000 });
  return lastRun(page);
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { checkServer, parseRedisUrl, type RedisTls } from '../../src/engine/scale/connection.js';
import { queueModules } from '../../src/engine/scale/modules.js';
import { freePort } from './process.js';

// A real redis-server for the scale-out tests (installed by scripts/install-system-deps.sh): skipped with the
// reason where it is not installed, unless IMGPU_REQUIRE_REDIS=1 (.ci/run), which fails instead.

export function redisServerOrSkip(t: TestContext): string | undefined {
  const path = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(existsSync) ?? spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
  if (path) return path;
  if (process.env.IMGPU_REQUIRE_REDIS === '1') throw new Error('IMGPU_REQUIRE_REDIS=1 but redis-server is not installed (scripts/install-system-deps.sh installs it)');
  t.skip('redis-server is not installed (scripts/install-system-deps.sh installs it; IMGPU_REQUIRE_REDIS=1 fails instead)');
  return undefined;
}

export interface StartedRedis {
  url: string;
  port: number;
  proc: ChildProcess;
}

/**
 * A redis-server of the test's own on a free loopback port, nothing saved; stopped when the test ends. `args` are
 * more of its options (an ACL user, TLS: then `url` and `tls` say how to reach it, and the plain port is closed).
 */
export async function startRedis(t: TestContext, binary: string, o: { port?: number; password?: string; args?: string[]; url?: (port: number) => string; tls?: RedisTls } = {}): Promise<StartedRedis> {
  const port = o.port ?? (await freePort());
  const listen = o.tls ? ['--port', '0', '--tls-port', String(port)] : ['--port', String(port)];
  const proc = spawn(binary, [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(o.password ? ['--requirepass', o.password] : []), ...(o.args ?? [])], { stdio: 'ignore' });
  t.after(() => proc.kill('SIGKILL'));
  const url = o.url?.(port) ?? `redis://${o.password ? `:${o.password}@` : ''}127.0.0.1:${port}`;
  const m = await queueModules();
  const end = Date.now() + 20_000;
  for (;;) {
    try {
      await checkServer(m, parseRedisUrl(url, o.tls));
      return { url, port, proc };
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A certificate authority and a server certificate for 127.0.0.1 (openssl, EC keys: fast), in a folder removed after the test. */
export function testCertificates(t: TestContext): { dir: string; ca: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=imgpu test CA']);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'ext']);
  return { dir, ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key') };
}

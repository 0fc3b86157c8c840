import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { IRedisClient } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { InvalidArgumentError, QueueUnavailableError } from '../../core/errors.js';
import type { QueueModules } from './modules.js';

// The Redis server of scale-out: its address from a URL (redis://, rediss:// with TLS, unix://), a quick check that
// it answers (a bad address or a server that is down is a one-line error in seconds, never a hang), and
// connections for BullMQ. Messages name the options (option `redis`); the CLI words them as its flags.

/** The queue when none is named. */
export const DEFAULT_QUEUE = 'imgpu';

/** How long a command waits for the server to answer before it says it cannot reach it. */
const CONNECT_TIMEOUT_MS = 3000;

/** TLS material for a rediss:// server: PEM contents (not paths), as node:tls takes them. */
export interface RedisTls {
  /** the certificate authorities to trust (the server's CA, where it is not one Node trusts) */
  ca?: string | Buffer;
  /** a client certificate and its key, where the server asks for one (tls-auth-clients) */
  cert?: string | Buffer;
  key?: string | Buffer;
}

/** Where the queue is: what every scale-out function takes. */
export interface QueueTarget {
  /** redis://[user:password@]host[:port][/db], rediss://… (TLS), or unix:///path/redis.sock[?db=N] */
  redis: string;
  /** the queue's name (default 'imgpu') */
  queue?: string;
  /** certificates for a rediss:// server */
  tls?: RedisTls;
}

/** Where a Redis server is: TCP host and port, or a unix socket path; the credentials and database the URL names. */
export interface RedisTarget {
  host?: string;
  port?: number;
  path?: string;
  username?: string;
  password?: string;
  db?: number;
  tls?: ConnectionOptions;
}

/** Told when the connection to the server is lost (once per outage) and when it is back. */
export interface OutageHooks {
  down?(reason: Error): void;
  up?(): void;
}

/**
 * Reconnection: BullMQ needs commands to wait for the server rather than fail (maxRetriesPerRequest null), and
 * a worker should be back within about 2 s of the server (ioredis's default back-off, capped here at 2 s).
 */
const RECONNECT: RedisOptions = { maxRetriesPerRequest: null, retryStrategy: (times: number) => Math.min(100 * times, 2000) };

/** A Redis server as scale-out reaches it. */
export interface RedisServer {
  /** the URL, without its password (for messages) */
  shown: string;
  target: RedisTarget;
}

/**
 * The server of a URL: redis://[user:password@]host[:port][/db], rediss://… (TLS, with `tls`'s certificates), or
 * unix:///path/to/redis.sock[?db=N] (also redis+unix://…). Anything else is an InvalidArgumentError (exit 2)
 * before any connection is tried.
 */
export function parseRedisUrl(url: string | undefined, tls?: RedisTls): RedisServer {
  if (!url) throw new InvalidArgumentError('option `redis` (a URL) is required, e.g. redis://127.0.0.1:6379, rediss://queue-host:6380 or unix:///run/redis/redis.sock');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidArgumentError(`option \`redis\` must be a URL such as redis://host:6379 or unix:///path/redis.sock, got '${url}'`);
  }
  const auth = { username: decodeURIComponent(u.username) || undefined, password: decodeURIComponent(u.password) || undefined };
  u.password = u.password ? '***' : '';
  const shown = u.toString();
  const secure = u.protocol === 'rediss:';
  if (tls && !secure) throw new InvalidArgumentError(`TLS certificates (option \`tls\`) are for a rediss:// server, got ${shown}`);
  if (u.protocol === 'unix:' || u.protocol === 'redis+unix:') {
    if (!u.pathname || u.pathname === '/') throw new InvalidArgumentError(`option \`redis\` ${shown} names no socket path`);
    return { shown, target: { path: decodeURIComponent(u.pathname), db: database(u.searchParams.get('db') ?? '0', shown), ...auth } };
  }
  if (u.protocol !== 'redis:' && !secure) throw new InvalidArgumentError(`option \`redis\` must start with redis://, rediss:// (TLS) or unix://, got '${shown}'`);
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = u.port ? Number(u.port) : 6379;
  // The certificate is checked against the host name; a server reached by IP address needs its address in the
  // certificate's subjectAltName (node:tls checks it; SNI carries names only).
  const secured = secure ? { tls: { ...tls, ...(isIP(host) ? {} : { servername: host }) } } : {};
  return { shown, target: { host, port, db: database(u.pathname.slice(1) || '0', shown), ...auth, ...secured } };
}

function database(v: string, shown: string): number {
  const db = Number(v);
  if (!Number.isInteger(db) || db < 0) throw new InvalidArgumentError(`option \`redis\` ${shown}: the database must be a number, got '${v}'`);
  return db;
}

/** A queue's name: BullMQ keys are '<prefix>:<queue>:…', so no ':' and nothing empty. */
export function queueName(name: string | undefined): string {
  const q = name ?? DEFAULT_QUEUE;
  if (!/^[\w.-]{1,100}$/.test(q)) throw new InvalidArgumentError(`option \`queue\` must be 1–100 letters, digits, '.', '_' or '-', got '${q}'`);
  return q;
}

/**
 * Checks that the server answers (PING) within a few seconds: scale-out says so in one line rather than wait on
 * BullMQ's reconnecting forever. QueueUnavailableError (exit 7) when it does not.
 */
export async function checkServer(m: QueueModules, server: RedisServer): Promise<void> {
  // One try, no offline queue: a server that is down is an answer now, not after reconnecting.
  const c = new m.ioredis.Redis({ ...server.target, lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, commandTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // ioredis rejects connect() with 'Connection is closed'; the reason is the error event before it.
  let reason: Error | undefined;
  c.on('error', (e: Error) => { reason ??= e; });
  try {
    await c.connect();
    const pong = await c.ping();
    if (pong !== 'PONG') throw new Error(`it answered ${JSON.stringify(pong)} to PING`);
  } catch (thrown) {
    const e = reason ?? thrown;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ECONNREFUSED' ? 'connection refused (is redis-server running there?)' : code === 'ENOENT' ? 'no such socket' : code === 'ENOTFOUND' ? 'unknown host' : (e as Error).message;
    // A refused password or database is the server's answer, not a network failure.
    throw new QueueUnavailableError(e instanceof m.ioredis.ReplyError ? `the Redis server at ${server.shown} refused the connection: ${why}` : `cannot reach the Redis server at ${server.shown}: ${why}`);
  } finally {
    c.disconnect();
  }
}

/**
 * A connection for BullMQ (ioredis, through BullMQ's adapter): it and the connections BullMQ makes from it re-open
 * themselves when the server goes away, telling `hooks`. Close it with quit().
 */
export function redisConnection(m: QueueModules, server: RedisServer, hooks: OutageHooks = {}): IRedisClient {
  const r = new m.ioredis.Redis({ ...server.target, connectTimeout: CONNECT_TIMEOUT_MS, ...RECONNECT });
  r.on('error', (e: Error) => hooks.down?.(e));
  r.on('ready', () => hooks.up?.());
  return m.bullmq.createIORedisClient(r);
}

/** A queue target checked and its server answering: the start of every scale-out function. */
export async function openTarget(m: QueueModules, t: QueueTarget): Promise<{ server: RedisServer; queue: string }> {
  const server = parseRedisUrl(t.redis, t.tls);
  const queue = queueName(t.queue);
  await checkServer(m, server);
  return { server, queue };
}

/** Where a batch's description (its jobs, images and pipeline) is kept: beside the queue's own keys. */
export function batchKey(queue: string, batch: string): string {
  return `bull:${queue}:imgpu-batch:${batch}`;
}

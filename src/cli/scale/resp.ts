import { connect, type Socket } from 'node:net';

// A minimal Redis client (RESP2 over TCP or a unix socket) in the shape of Bun's built-in RedisClient, which BullMQ
// adapts to its IRedisClient (createBunRedisClient): BullMQ 6 ships no Redis driver of its own (ioredis and
// node-redis are optional peers), and this one — commands, ordered replies, errors, close — is all it needs; the
// adapter does the rest (Lua scripts by EVALSHA, transactions, reconnecting with back-off).

/** Where the server is: host and port, or a unix socket; the password and database of the URL. */
export interface RedisTarget {
  host?: string;
  port?: number;
  path?: string;
  username?: string;
  password?: string;
  db?: number;
}

type Reply = string | number | null | Reply[];
const CRLF = '\r\n';

/** The error of a reply (-ERR …): the server's message, as Bun's client gives it. */
export class RedisReplyError extends Error {}

/**
 * Parses one RESP2 reply from `buf` at `at`; undefined while it is incomplete. Returns the reply and where the
 * next one starts.
 */
function parseReply(buf: Buffer, at: number): { value: Reply | RedisReplyError; next: number } | undefined {
  const eol = buf.indexOf(CRLF, at);
  if (eol < 0) return undefined;
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (buf[at]) {
    case 0x2b: // '+'
      return { value: line, next };
    case 0x2d: // '-'
      return { value: new RedisReplyError(line), next };
    case 0x3a: // ':'
      return { value: Number(line), next };
    case 0x24: { // '$'
      const n = Number(line);
      if (n < 0) return { value: null, next };
      if (buf.length < next + n + 2) return undefined;
      return { value: buf.toString('utf8', next, next + n), next: next + n + 2 };
    }
    case 0x2a: { // '*'
      const n = Number(line);
      if (n < 0) return { value: null, next };
      const items: Reply[] = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, p);
        if (!r) return undefined;
        // An error inside an array (EXEC's replies) is kept as the element, as an Error.
        items.push(r.value as Reply);
        p = r.next;
      }
      return { value: items, next: p };
    }
    default:
      throw new Error(`not a Redis server: it answered ${JSON.stringify(buf.toString('utf8', at, Math.min(eol, at + 40)))}`);
  }
}

/** A command as RESP2: an array of bulk strings. */
function encode(command: string, args: readonly unknown[]): Buffer {
  const parts = [command, ...args].map((a) => (Buffer.isBuffer(a) ? a : Buffer.from(a === undefined || a === null ? '' : String(a as string | number), 'utf8')));
  const chunks: Buffer[] = [Buffer.from(`*${parts.length}${CRLF}`)];
  for (const p of parts) chunks.push(Buffer.from(`$${p.length}${CRLF}`), p, Buffer.from(CRLF));
  return Buffer.concat(chunks);
}

/** Told when a connection is lost and when it is back (a worker says so once per outage). */
export interface OutageHooks {
  down?(reason: Error): void;
  up?(): void;
}

/** One connection to a Redis server, with the members of Bun's RedisClient that BullMQ's adapter uses. */
export class RespClient {
  connected = false;
  onconnect: () => void = () => undefined;
  onclose: (error?: Error) => void = () => undefined;
  onerror: (error: Error) => void = () => undefined;
  private socket: Socket | undefined;
  private pending: { resolve: (v: Reply) => void; reject: (e: Error) => void }[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private closedByUs = false;
  /** the connection dropped and is being re-opened */
  private lost = false;
  /** connect() under way: commands sent meanwhile wait for it (as Bun's client queues them) */
  private connecting: Promise<void> | undefined;

  constructor(readonly target: RedisTarget, private readonly connectTimeoutMs = 5000, private readonly hooks: OutageHooks = {}) {}

  /** Opens the connection (AUTH and SELECT as the URL asks); rejects when the server cannot be reached. */
  connect(): Promise<void> {
    if (this.connected) return Promise.resolve();
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const socket = this.target.path ? connect(this.target.path) : connect(this.target.port ?? 6379, this.target.host ?? '127.0.0.1');
    socket.setNoDelay(true);
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer within ${this.connectTimeoutMs / 1000} s`));
      }, this.connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    socket.on('data', (d) => this.received(d));
    socket.on('error', (e) => this.onerror(e));
    socket.on('close', () => this.closed());
    this.connected = true;
    if (this.target.password) await this.send('AUTH', this.target.username ? [this.target.username, this.target.password] : [this.target.password]);
    if (this.target.db) await this.send('SELECT', [this.target.db]);
    if (this.lost) this.hooks.up?.();
    this.lost = false;
    // Also after a reconnect: the adapter then loads its Lua scripts again (a restarted server has none).
    this.onconnect();
  }

  /** Sends a command; its reply in the order of the commands sent (an error reply rejects). */
  send(command: string, args: readonly unknown[] = []): Promise<Reply> {
    if (this.connecting && !this.connected) return this.connecting.then(() => this.send(command, args));
    if (!this.connected || !this.socket) return Promise.reject(new Error('Connection is closed.'));
    return new Promise<Reply>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket!.write(encode(command, args));
    });
  }

  close(): void {
    this.closedByUs = true;
    this.socket?.destroy();
  }

  /** Another connection to the same server (BullMQ's blocking reads and reconnects each take one). */
  async duplicate(): Promise<RespClient> {
    return new RespClient(this.target, this.connectTimeoutMs, this.hooks);
  }

  private received(data: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
    let at = 0;
    for (;;) {
      let r: ReturnType<typeof parseReply>;
      try {
        r = parseReply(this.buffer, at);
      } catch (e) {
        // Not a Redis server (an HTTP port, say): every command waiting gets the reason, and the connection ends.
        for (const w of this.pending.splice(0)) w.reject(e as Error);
        this.socket?.destroy();
        return;
      }
      if (!r) break;
      at = r.next;
      const waiter = this.pending.shift();
      if (r.value instanceof RedisReplyError) waiter?.reject(r.value);
      else waiter?.resolve(r.value);
    }
    this.buffer = this.buffer.subarray(at);
  }

  private closed(): void {
    if (!this.connected) return;
    this.connected = false;
    const lost = this.pending;
    this.pending = [];
    this.buffer = Buffer.alloc(0);
    for (const w of lost) w.reject(new Error('Connection is closed.'));
    if (this.closedByUs) {
      this.onclose();
      return;
    }
    // Dropped (the server restarted, the network failed): this connection re-opens itself, every 0.1 s growing to
    // 2 s, while commands fail as 'Connection is closed.', which BullMQ takes as a connection error and retries.
    // (Left to the adapter, whose back-off grows to 20 s, a worker was seen waiting minutes after a restart.)
    this.hooks.down?.(new Error('the connection was closed'));
    this.lost = true;
    this.reopen(0);
  }

  private reopen(attempt: number): void {
    setTimeout(() => {
      if (this.closedByUs || this.connected) return;
      this.connect().catch(() => this.reopen(attempt + 1));
    }, Math.min(2000, 100 * 2 ** attempt));
  }
}

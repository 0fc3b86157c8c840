// Processes and FIFOs in tests: whether a process and its children run, and FIFOs as inputs that keep imgpu at work
// until the test says (Linux: /proc and mkfifo).
import { spawnSync } from 'node:child_process';
import { constants, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';

/** Pids of `pid`'s children (Linux /proc). */
export function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) kids.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return kids;
}

/** Whether `pid` runs (exists and is not a zombie). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls `probe` until it returns a value (liveness, not speed: the deadline only ends a hung test). */
export async function until<T>(probe: () => T | undefined, failure: string, seconds = 60): Promise<T> {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(failure);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Makes a FIFO at `path` (mkfifo). */
export function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mkfifo ${path}: ${r.stderr}`);
}

/**
 * Waits until a process reads the FIFO `path` (a non-blocking open for writing succeeds once a reader has it open)
 * and returns the write end: the reader is then at work until the test closes it.
 */
export function readerOf(path: string): Promise<number> {
  return until(() => {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENXIO') return undefined;
      throw e;
    }
  }, `nothing ever opened ${path} for reading`);
}

/** Waits until nothing reads the FIFO behind the write end `fd` any more (a write fails with EPIPE). */
export function readerGone(fd: number, failure: string): Promise<true> {
  return until(() => {
    try {
      writeSync(fd, Buffer.from([0]));
      return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') return true;
      throw e;
    }
  }, failure);
}

/** A TCP port free on loopback now (a server of the test's own, e.g. redis-server, is then started on it). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/imgpu.js', import.meta.url));

/** Runs the imgpu CLI in a child process (the project's Node), capturing its output. */
export function cli(...args: string[]) {
  return cliWith({}, ...args);
}

/** The same with variables added to the environment (e.g. a native module turned off). */
export function cliWith(env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...env } });
}

/** Bad input ends in one line on stderr and a non-zero exit code, never a stack trace. */
export function assertOneLineError(r: ReturnType<typeof cli>, code: number, pattern: RegExp): void {
  assert.equal(r.status, code, `exit ${r.status}: ${r.stderr}`);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('imgpu:'));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

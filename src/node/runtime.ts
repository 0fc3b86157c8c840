import { RuntimeVersionError } from '../core/errors.js';

/** The oldest Node.js imgpu runs on: the version it is built and tested with (package.json `engines` says the same). */
export const MIN_NODE_MAJOR = 22;

export function nodeMajor(version = process.versions.node): number {
  return Number(version.replace(/^v/, '').split('.')[0]);
}

/**
 * What to do on an older Node — true in a user's own project, where imgpu brings no Node of its own (its `node`
 * package is a development dependency): npm scripts and npx put the project's node_modules/.bin first on PATH,
 * and bin/imgpu.js re-launches itself with a Node found there.
 */
export function nodeVersionMessage(version = process.version): string {
  return (
    `imgpu needs Node.js >= ${MIN_NODE_MAJOR} (this is ${version}): install Node.js ${MIN_NODE_MAJOR} or newer, or add it to ` +
    `your project with \`npm install --save-dev node@${MIN_NODE_MAJOR}\` and run imgpu through npx or an npm script`
  );
}

export function assertNodeVersion(): void {
  if (nodeMajor() < MIN_NODE_MAJOR) throw new RuntimeVersionError(nodeVersionMessage());
}

/**
 * Set by a parent imgpu process in the environment of a child it starts with an IPC channel (the launcher's
 * re-run under a newer Node, a `--jobs` batch's processes): the child then ends when the parent does.
 */
export const PARENT_ENV = 'IMGPU_PARENT_PID';

/**
 * In a child of an imgpu process (PARENT_ENV set, IPC channel open): end with SIGTERM when the channel closes —
 * the parent ended, however (a SIGKILL cannot be passed on), so no orphan goes on writing outputs. The variable is
 * removed so that the child's own children are not taken for such children.
 */
export function endWithParent(): void {
  if (!process.env[PARENT_ENV] || !process.channel) return;
  delete process.env[PARENT_ENV];
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

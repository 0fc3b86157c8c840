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

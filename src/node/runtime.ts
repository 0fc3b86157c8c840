import { RuntimeVersionError } from '../core/errors.js';

/** Dawn (npm `webgpu`) crashes under Node < 22 (../shared/WEBGPU-NODE.md): refuse to start GPU work there. */
export const MIN_NODE_MAJOR = 22;

export function nodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

export function assertNodeVersion(): void {
  if (nodeMajor() < MIN_NODE_MAJOR) {
    throw new RuntimeVersionError(
      `imgpu needs Node.js >= ${MIN_NODE_MAJOR} (this is ${process.version}): Dawn crashes under older Nodes. ` +
        `Run through npm (npm run / npx use the project's own Node 22 from node_modules/.bin) or install Node 22.`,
    );
  }
}

// The package's 'imgpu/scale' entry: scale-out over a Redis queue from code (docs/scale-out.md). Node only;
// bullmq and ioredis are optional peer dependencies that the first call loads (MissingDependencyError, exit 6,
// names what to install where they are missing).

export * from './engine/scale/index.js';
export { MissingDependencyError, QueueUnavailableError } from './core/errors.js';

import { MissingDependencyError } from '../../core/errors.js';

// bullmq and ioredis are optional peer dependencies: loaded here, on the first call of a scale-out function, never
// by importing a module (so `import 'imgpu'` and `import 'imgpu/scale'` load neither), and where they are not
// installed the call fails with one line saying what to install.

const importBullMQ = (): Promise<BullMQ> => import('bullmq');
const importIORedis = () => import('ioredis');
export type BullMQ = typeof import('bullmq');
/** (ioredis is CommonJS: its namespace as import() gives it, with `default` beside the named exports.) */
export type IORedis = Awaited<ReturnType<typeof importIORedis>>;

/** The queue's packages, as loaded. */
export interface QueueModules {
  bullmq: BullMQ;
  ioredis: IORedis;
}

/** What to install, as the error says it (the versions package.json's peerDependencies accept). */
export const INSTALL_QUEUE = 'npm install bullmq@^6.7.0 ioredis@^6.0.0';

let loading: Promise<QueueModules> | undefined;

/** bullmq and ioredis, loaded once; MissingDependencyError (exit 6) when either is not installed. */
export function queueModules(): Promise<QueueModules> {
  // A failure is not kept: the packages may be installed while the process runs.
  loading ??= load().catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

async function load(): Promise<QueueModules> {
  const [bullmq, ioredis] = await Promise.all([importOrSay('bullmq', importBullMQ), importOrSay('ioredis', importIORedis)]);
  return { bullmq, ioredis };
}

async function importOrSay<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw e;
    throw new MissingDependencyError(`scale-out (imgpu/scale, imgpu submit|worker|status|retry) needs the optional packages bullmq and ioredis, and ${name} is not installed: ${INSTALL_QUEUE}`);
  }
}

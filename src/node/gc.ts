import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's full garbage collection, for the threads of a long run that hands SharedArrayBuffers around. Shared buffers
 * do not count towards V8's external-memory pressure, so nothing collects them in time: measured on Node 22, 200
 * shared 4 MiB buffers, each dropped at once, stayed resident (800 MiB) where plain ones were collected (44 MiB),
 * and a worker that was passed them held them too until it collected. A chunked volume run (io/chunked.ts) gives
 * each slab fresh shared buffers and so collects after each slab, in the main thread and in every worker.
 */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

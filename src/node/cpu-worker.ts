// Worker-thread side of NodeWorkerPool: runs one task from the task table per message (its name and argument object).
import { parentPort } from 'node:worker_threads';
import { runTask } from '../core/cpu/pool.js';
import { TASKS } from '../ops/tasks.js';
import { fullGc } from './gc.js';

let collect: (() => void) | undefined;

parentPort!.on('message', (msg: { task: string; args: unknown } | { gc: true }) => {
  if ('gc' in msg) {
    // NodeWorkerPool.collect: the shared buffers of past tasks are garbage here too (node/gc.ts).
    (collect ??= fullGc())();
    parentPort!.postMessage({ ok: true });
    return;
  }
  try {
    parentPort!.postMessage({ ok: true, value: runTask(TASKS, msg.task, msg.args) });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: (e as Error).message });
  }
});

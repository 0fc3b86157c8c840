// Worker-thread side of NodeWorkerPool: runs one task from the task table per message (its name and argument object).
import { parentPort } from 'node:worker_threads';
import { runTask } from '../core/cpu/pool.js';
import { TASKS } from '../ops/tasks.js';

parentPort!.on('message', (msg: { task: string; args: unknown }) => {
  try {
    parentPort!.postMessage({ ok: true, value: runTask(TASKS, msg.task, msg.args) });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: (e as Error).message });
  }
});

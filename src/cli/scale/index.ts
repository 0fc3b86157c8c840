import { retryCommand, statusCommand } from './status.js';
import { submitCommand } from './submit.js';
import { workerCommand } from './worker.js';

// Scale-out over a Redis queue (BullMQ): loaded by the CLI only for these commands (main.ts imports this module
// lazily), so that the image commands, the library and the browser bundle never load bullmq.

export const SCALE_COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  submit: submitCommand,
  worker: workerCommand,
  status: statusCommand,
  retry: retryCommand,
};

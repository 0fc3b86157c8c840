// A CodecPool worker's entry: its priority is lowered first, then its jobs' code is loaded (codec-jobs.ts) — a
// worker's start is ~160 ms of CPU, mostly loading modules, and a CPU lane's workers starting at once at the default
// priority took the cores the GPU's first reads and kernel compilation needed.
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

// Codec threads yield to the main thread and the CPU pool when cores are short: on Linux a thread's nice value is
// its own (setpriority(2) on the calling thread), so this lowers only this worker. The pool's `nice` (a CPU lane's
// workers: 19), else IMGPU_CODEC_NICE, else 5.
try {
  setPriority(0, (workerData as { nice?: number } | undefined)?.nice ?? Number(process.env.IMGPU_CODEC_NICE ?? 5));
} catch {
  /* not permitted or not supported: run at the default priority */
}
await import('./codec-jobs.js');

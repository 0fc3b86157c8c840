// Worker-thread side of CodecPool: reads (decodes, converts to gray) and writes (encodes, atomically) images,
// so a batch's codec work and pixel conversions run beside the main thread instead of on it.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { Image } from '../core/image.js';
import { readImage, writeImage, type ReadOptions, type WriteOptions } from '../io/index.js';
import { RecycledBuffers } from './codec-pool.js';

type Job = { id: number; kind: 'read'; path: string; opts: ReadOptions } | { id: number; kind: 'write'; path: string; image: Image; opts: WriteOptions }
  | { kind: 'recycle'; buffer: SharedArrayBuffer };

// Codec threads yield to the main thread and the CPU pool when cores are short: on Linux a thread's nice value is
// its own (setpriority(2) on the calling thread), so this lowers only this worker. IMGPU_CODEC_NICE overrides.
try {
  setPriority(0, Number(process.env.IMGPU_CODEC_NICE ?? 5));
} catch {
  /* not permitted or not supported: run at the default priority */
}

// Buffers handed back by the main thread (CodecPool.recycle): decoding goes into one of them.
const buffers = new RecycledBuffers(4);
const alloc = (bytes: number) => buffers.alloc(bytes);

// Each job's errors go back to the main thread as a message: the handler's promise never rejects.
parentPort!.on('message', (job: Job) => void handle(job));

async function handle(job: Job): Promise<void> {
  if (job.kind === 'recycle') {
    buffers.give(job.buffer);
    return;
  }
  try {
    const value = job.kind === 'read' ? await readImage(job.path, { ...job.opts, alloc }) : await writeImage(job.path, job.image, job.opts);
    parentPort!.postMessage({ id: job.id, ok: true, value });
  } catch (e) {
    const err = e as Error & { code?: string };
    parentPort!.postMessage({ id: job.id, ok: false, name: err.name, message: err.message });
  }
}

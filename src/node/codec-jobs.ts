// Worker-thread side of CodecPool (loaded by codec-worker.ts): reads (decodes, converts to gray) and writes (encodes,
// atomically) images, so a batch's codec work and pixel conversions run beside the main thread instead of on it — or
// processes an image whole (read, operations on the CPU, write: a batch's CPU lane).
import { parentPort } from 'node:worker_threads';
import type { CpuPool, TaskHandle } from '../core/cpu/pool.js';
import type { Image } from '../core/image.js';
import { readImage, writeImage, type ReadOptions, type WriteOptions } from '../io/index.js';
import { runPipeline, type PipelineStep } from '../ops/pipeline.js';
import { COLLECT_BYTES, RecycledBuffers, SharedGarbage, type LaneDone } from './codec-pool.js';
import { fullGc } from './gc.js';
import { loadPointKernels } from './native-kernels.js';

type Job = { id: number; kind: 'read'; path: string; opts: ReadOptions } | { id: number; kind: 'write'; path: string; image: Image; opts: WriteOptions }
  | { id: number; kind: 'process'; path: string; out: string; steps: PipelineStep[]; read: ReadOptions; write: WriteOptions }
  | { kind: 'recycle'; buffer: SharedArrayBuffer } | { kind: 'gc' };

// Buffers handed back by the main thread (CodecPool.recycle): decoding goes into one of them.
const buffers = new RecycledBuffers(4);
const alloc = (bytes: number) => buffers.alloc(bytes);

/**
 * The CPU pool of an image processed whole here: one thread, this one — a CPU lane's parallelism is its images, one
 * per worker — with the native point kernels (histogram, LUT) run inline (one thread).
 */
const inline = <A, R>(task: TaskHandle<A, R>, args: A): R => task.fn(args);
const onePool: CpuPool = { size: 1, native: loadPointKernels(), run: async (t, a) => inline(t, a), runLocal: inline, close: async () => {} };

let processed = 0;
let collect: (() => void) | undefined;
// A CPU lane's images are processed here whole: their outputs and intermediates are this thread's fresh shared
// buffers, and their promises this thread's garbage, which this thread's own collections free (SharedGarbage).
const garbage = new SharedGarbage(COLLECT_BYTES, () => (collect ??= fullGc())());

/**
 * Reads `path`, runs `steps` on the CPU, writes the output to `out` (atomically, as every write); returns the
 * milliseconds it took, whether it was this worker's first (its code compiled and its modules loaded then), and the
 * decoder's warnings on a damaged file read through under a lenient failOn (the batch summary lists them).
 */
async function processWhole(job: Extract<Job, { kind: 'process' }>): Promise<LaneDone> {
  const t = performance.now();
  const img = await readImage(job.path, { ...job.read, alloc });
  const r = await runPipeline(img, job.steps, { pool: onePool });
  await writeImage(job.out, r.output, job.write);
  buffers.give(img.data.buffer);
  garbage.drop(r.output.data.buffer !== img.data.buffer ? r.output.data.byteLength : 0);
  return { ms: performance.now() - t, first: processed++ === 0, ...(img.warnings?.length ? { warnings: img.warnings } : {}) };
}

// Each job's errors go back to the main thread as a message: the handler's promise never rejects.
parentPort!.on('message', (job: Job) => void handle(job));

async function handle(job: Job): Promise<void> {
  if (job.kind === 'recycle') {
    buffers.give(job.buffer);
    return;
  }
  if (job.kind === 'gc') {
    // CodecPool.collect: the shared pixel buffers this worker encoded or was handed are garbage here too (node/gc.ts).
    (collect ??= fullGc())();
    return;
  }
  try {
    const value = job.kind === 'read' ? await readImage(job.path, { ...job.opts, alloc }) : job.kind === 'write' ? await writeImage(job.path, job.image, job.opts) : await processWhole(job);
    parentPort!.postMessage({ id: job.id, ok: true, value });
  } catch (e) {
    const err = e as Error & { code?: string };
    parentPort!.postMessage({ id: job.id, ok: false, name: err.name, message: err.message });
  }
}

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { type ChunkJob, JOBS_PER_GC, pixelsOver } from './zarr-pool.js';
import { openLevelArray, readChunkInto, writeChunkFrom, type ZarrArrayHandle } from './zarr.js';

/**
 * A chunk thread of ZarrChunkPool (zarr-pool.ts): reads and decodes a chunk file into a slab, or encodes one from
 * a slab and writes its file atomically. Replies { id } or { id, error } (the message, for a typed error there).
 */

/** Levels opened, by opening (a store recreated at one path is a new opening); the last few kept. */
const arrays = new Map<string, Promise<ZarrArrayHandle>>();
const KEEP = 16;

function arrayOf(job: ChunkJob): Promise<ZarrArrayHandle> {
  const key = `${job.level.opened}\n${job.level.path}`;
  let a = arrays.get(key);
  if (!a) {
    if (arrays.size >= KEEP) arrays.delete(arrays.keys().next().value!);
    a = openLevelArray(job.level.root, job.level.path);
    arrays.set(key, a);
  }
  return a;
}

async function runJob(job: ChunkJob): Promise<void> {
  const array = await arrayOf(job);
  if (job.op === 'read') {
    const dst = pixelsOver(job.buffer, job.dtype, job.buffer.byteLength / { uint8: 1, uint16: 2, float32: 4 }[job.dtype]);
    try {
      await readChunkInto(array, job.chunk, job.planes, dst, job.dstPlane);
    } catch (e) {
      throw new Error(`${job.level.root}: chunks of level ${job.level.path || '0'} cannot be decoded (${(e as Error).message}); imgpu reads raw, gzip, zlib, zstd, blosc and lz4 chunks`);
    }
    return;
  }
  const [, h, w] = array.shape.length === 2 ? [1, ...array.shape] : array.shape.slice(-3);
  const src = pixelsOver(job.buffer, job.dtype, job.planes * h * w, job.offset);
  await writeChunkFrom(array, job.chunk, src, job.srcZ0, job.planes);
}

/**
 * A young-generation collection every JOBS_PER_GC jobs: each job leaves a chunk's file bytes and voxels as dead
 * ArrayBuffers, which V8 collects only once ~64 MiB of them have piled up per thread (measured: two threads added
 * 30–50 MiB to a run's peak); a scavenge frees them for about a millisecond.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (o: { type: 'minor' }) => void;
let jobs = 0;
function collectEvery(): void {
  if (++jobs % JOBS_PER_GC === 0) gc({ type: 'minor' });
}

parentPort!.on('message', (m: { op: 'load' } | { id: number; job: ChunkJob }) => {
  if ('op' in m) {
    void import('zarrita').then(() => parentPort!.postMessage({ id: 0 }));
    return;
  }
  runJob(m.job).then(() => parentPort!.postMessage({ id: m.id }), (e: Error) => parentPort!.postMessage({ id: m.id, error: e.message })).finally(collectEvery);
});

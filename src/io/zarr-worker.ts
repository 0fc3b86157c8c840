import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import type { Dtype } from '../core/image.js';
import { type ChunkJob, JOBS_PER_GC, type MeanJob, pixelsOver } from './zarr-pool.js';
import { meanBox, openLevelArray, readChunkInto, writeChunkFrom, type ZarrArrayHandle } from './zarr.js';
import { blankChunk, boxOf, nativeLayout, originOf, readChunkNative, writeChunkEncoded, writeChunkNative, type NativeLayout } from './zarr-native.js';

/**
 * A chunk thread of ZarrChunkPool (zarr-pool.ts): reads and decodes a chunk file into a slab, encodes one from a
 * slab and writes its file atomically, or computes a pyramid chunk from a finer level's slab and writes it.
 * Chunks of the layouts Node's zlib covers go the native route (zarr-native.ts: synchronous file and codec calls,
 * this thread's own), the others through zarrita. Replies { id } or { id, error } (the message, for a typed error).
 */

/** A level as opened here: its native layout, or zarrita's array where it has none. */
interface Opened {
  native?: NativeLayout;
  array?: Promise<ZarrArrayHandle>;
}

/** Levels opened, by opening (a store recreated at one path is a new opening); the last few kept. */
const levels = new Map<string, Opened>();
const KEEP = 16;

function levelOf(job: ChunkJob): Opened {
  const key = `${job.level.opened}\n${job.level.path}`;
  let o = levels.get(key);
  if (!o) {
    if (levels.size >= KEEP) levels.delete(levels.keys().next().value!);
    const native = nativeLayout(job.level.root, job.level.path);
    o = native ? { native } : { array: openLevelArray(job.level.root, job.level.path) };
    levels.set(key, o);
  }
  return o;
}

const SIZES: Record<Dtype, number> = { uint8: 1, uint16: 2, float32: 4 };

async function runJob(job: ChunkJob): Promise<void> {
  const { native, array } = levelOf(job);
  if (job.op === 'mean') return meanJob(job, native!);
  if (job.op === 'read') {
    try {
      if (native) readChunkNative(native, job.chunk, job.planes, new Uint8Array(job.buffer), job.dstPlane);
      else await readChunkInto(await array!, job.chunk, job.planes, pixelsOver(job.buffer, job.dtype, job.buffer.byteLength / SIZES[job.dtype]), job.dstPlane);
    } catch (e) {
      throw new Error(`${job.level.root}: chunks of level ${job.level.path || '0'} cannot be decoded (${(e as Error).message}); imgpu reads raw, gzip, zlib, zstd, blosc and lz4 chunks`);
    }
    return;
  }
  const a = native ?? (await array!);
  const [, h, w] = 'rank' in a ? a.shape : a.shape.length === 2 ? [1, ...a.shape] : a.shape.slice(-3);
  if (native) writeChunkNative(native, job.chunk, new Uint8Array(job.buffer, job.offset * SIZES[job.dtype], job.planes * h * w * SIZES[job.dtype]), job.srcZ0, job.planes);
  else await writeChunkFrom(a as ZarrArrayHandle, job.chunk, pixelsOver(job.buffer, job.dtype, job.planes * h * w, job.offset), job.srcZ0, job.planes);
}

/** A pyramid chunk: the 2×2×2 means of its voxels in coarse planes [s0, s1) from the finer level's slab, written. */
function meanJob(job: MeanJob, l: NativeLayout): void {
  const box = boxOf(l, job.chunk);
  box[0] = [Math.max(box[0][0], job.coarse[0]), Math.min(box[0][1], job.coarse[1])];
  const bytes = blankChunk(l, job.chunk, box);
  const out = pixelsOver(bytes.buffer, job.dtype, bytes.byteLength / SIZES[job.dtype]);
  const src = pixelsOver(job.buffer, job.dtype, job.fineVoxels, job.fineOffset);
  meanBox(src, job.fineShape, 2 * job.coarse[0], box, out, originOf(l, job.chunk), [l.chunks[1], l.chunks[2]]);
  writeChunkEncoded(l, job.chunk, bytes);
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

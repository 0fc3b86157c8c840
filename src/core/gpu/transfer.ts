import type { PixelArray } from '../image.js';
import { alignUp, type GpuContext } from './context.js';

/**
 * Host↔device transfers. Measured on the H100 through Dawn: a fresh queue.writeBuffer / mapAsync per image
 * ran at about 1 GB/s, mostly first-touch page faults on newly allocated staging memory. So both directions
 * reuse staging buffers that stay allocated: uploads copy into a MAP_WRITE buffer that is re-mapped in the
 * background after each use, downloads read from a pooled MAP_READ buffer.
 */

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/**
 * A recording (recording.ts, which imports this module: named here by its shape) that copies are recorded into instead
 * of being submitted apart: one submission fewer per copy, the work after them in the same command buffer.
 */
export interface CopyTarget {
  readonly ctx: GpuContext;
  copyRange(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void;
  afterSubmit(fn: () => void): void;
}

/** Byte size of a device buffer for `n` bytes of pixels: padded to 16 so kernels may read whole vec4<u32>. */
export function deviceBytes(n: number): number {
  return alignUp(Math.max(n, 16), 16);
}

/** The smallest power of two at least `b`. */
const nextPow2 = (b: number): number => 2 ** Math.ceil(Math.log2(b));

/** `limit` rounded down to a multiple of 16 (a buffer's size must be one). */
const within = (limit: number): number => Math.floor(limit / 16) * 16;

/**
 * The capacity of a buffer of `b` (padded) bytes up to 1 MiB: up to 256 bytes as asked, then the next power of two.
 * Exact sizes made a new buffer for nearly every photo of a folder (the GPU entropy coder's per-block bit counts and
 * prefix sums, its coded bytes' readback: measured 16 photos of 1–4 MP creating 122 buffers), each then kept free in
 * the pool under its own size; the extra memory is under 1 MiB a buffer.
 */
function smallClass(b: number): number {
  return b <= 256 ? b : nextPow2(b);
}

/** `b` bytes (padded) rounded up to a power of two, at most `limit` (but never below `b`). */
function pow2Capacity(b: number, limit: number): number {
  return Math.max(b, Math.min(nextPow2(b), within(limit)));
}

/**
 * The capacity a pooled buffer for `n` bytes gets: above 1 MiB rounded up to one of 8 size classes per doubling
 * (at most 12.5% more), so images of different sizes — a folder of photos — reuse the same buffers instead of
 * creating new ones each time (measured on the H100: buffer creation was a seventh of a batch's main thread).
 * Never beyond the device's buffer/binding limits; copies still move only deviceBytes(n).
 */
export function capacityFor(ctx: GpuContext, n: number): number {
  const b = deviceBytes(n);
  if (b <= 1 << 20) return smallClass(b);
  const step = 2 ** (Math.floor(Math.log2(b)) - 3);
  const cap = Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
  return Math.max(b, Math.min(Math.ceil(b / step) * step, within(cap)));
}

/**
 * The capacity of a host-mapped staging buffer (upload or readback) for `n` bytes: above 1 MiB the next power of
 * two. Coarser than capacityFor because a new staging buffer is expensive — its memory is touched by the host for
 * the first time (page faults: ~1 GB/s measured on the H100 machine) — and a folder of photos sorted by size
 * otherwise creates one per size class; at most 2× the bytes, and only a few such buffers live at once.
 */
export function stagingCapacity(ctx: GpuContext, n: number): number {
  const b = deviceBytes(n);
  if (b <= 1 << 20) return smallClass(b);
  return pow2Capacity(b, ctx.limits.maxBufferSize);
}

/**
 * The capacity a new pooled storage buffer gets where requests outgrow the free ones (BufferPool.outgrown): the next
 * power of two (at most 2× the bytes, within the device's limits), so that the next, slightly larger requests of a
 * folder of growing photos find it. Measured on 40 photos of 2–12 MP, growing (`--jpeg gpu` equalize): 36 of them
 * created their coefficient buffer and 28 their plane buffers.
 */
function grownCapacity(ctx: GpuContext, size: number): number {
  return pow2Capacity(size, Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize));
}

/** A storage buffer from the pool, big enough for `bytes` bytes (padded). */
export function acquireStorage(ctx: GpuContext, bytes: number, label: string): GPUBuffer {
  const size = capacityFor(ctx, bytes);
  const pool = ctx.buffers;
  return pool.acquire(size, STORAGE(), (s) => ctx.createBuffer(pool.outgrown(s, STORAGE()) ? grownCapacity(ctx, s) : s, STORAGE(), label));
}

interface Staging {
  buf: GPUBuffer;
  /** True once the background re-map has finished (the buffer can be written at once). */
  mapped: boolean;
  ready: Promise<boolean>;
}
const writers = new WeakMap<GpuContext, Staging[]>();

/**
 * Idle upload staging buffers kept per context. Beyond it the smallest is destroyed to make room: a folder whose
 * images grow one size class after another would otherwise keep one mapped buffer per class.
 */
const MAX_IDLE_STAGING = 4;

/** The idle staging buffers of `ctx` in `lists` (made on first use, their buffers destroyed with the context). */
function idleList(lists: WeakMap<GpuContext, Staging[]>, ctx: GpuContext): Staging[] {
  let list = lists.get(ctx);
  if (!list) {
    const made: Staging[] = (list = []);
    lists.set(ctx, made);
    ctx.onDestroy(() => {
      for (const s of made) s.buf.destroy();
      lists.delete(ctx);
    });
  }
  return list;
}

const idleStaging = (ctx: GpuContext): Staging[] => idleList(writers, ctx);

/**
 * A mapped upload staging buffer of at least `need` bytes (a new one gets `createSize`): the smallest idle one that
 * is mapped already; else, while fewer than MAX_IDLE_STAGING are idle, a new one (so that consecutive uploads do not
 * wait for each other's re-map); else the smallest that fits, once re-mapped.
 */
async function takeWriteStaging(ctx: GpuContext, need: number, createSize = need): Promise<GPUBuffer> {
  const list = idleStaging(ctx);
  for (;;) {
    const fits = list.filter((s) => s.buf.size >= need).sort((a, b) => a.buf.size - b.buf.size);
    const s = fits.find((x) => x.mapped) ?? (list.length >= MAX_IDLE_STAGING ? fits[0] : undefined);
    if (!s) break;
    list.splice(list.indexOf(s), 1);
    if (await s.ready) return s.buf;
  }
  if (list.length >= MAX_IDLE_STAGING) {
    const smallest = list.reduce((a, b) => (b.buf.size < a.buf.size ? b : a));
    list.splice(list.indexOf(smallest), 1);
    smallest.buf.destroy();
  }
  ctx.buffers.created++;
  return ctx.createBuffer(Math.max(need, createSize), GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, 'upload staging', true);
}

/** Idle upload staging buffers of a context and their bytes (tests, diagnostics). */
export function idleStagingStats(ctx: GpuContext): { count: number; bytes: number } {
  const list = writers.get(ctx) ?? [];
  return { count: list.length, bytes: list.reduce((a, s) => a + s.buf.size, 0) };
}

function remapInBackground(ctx: GpuContext, buf: GPUBuffer): void {
  idleStaging(ctx).push(remapping(buf));
}

/** A used (unmapped) upload staging buffer, being re-mapped for writing. */
function remapping(buf: GPUBuffer): Staging {
  const s: Staging = { buf, mapped: false, ready: Promise.resolve(false) };
  s.ready = buf.mapAsync(GPUMapMode.WRITE).then(() => (s.mapped = true), () => false);
  return s;
}

/** Where a transfer's time went: host memcpy to/from mapped staging memory vs. waiting for the GPU copy. */
export interface TransferPhases {
  memcpy: number;
  wait: number;
}

/** Copies host pixels into a (pooled) device storage buffer (the copy is submitted, not awaited). */
export async function upload(ctx: GpuContext, data: PixelArray, label = 'image', phases?: TransferPhases): Promise<GPUBuffer> {
  ctx.assertAlive();
  const dst = acquireStorage(ctx, data.byteLength, label);
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (ctx.transfer === 'writeBuffer') {
    const main = bytes.byteLength & ~3;
    // A view, not (ArrayBuffer, offset): Dawn's binding refuses a SharedArrayBuffer passed as a buffer.
    if (main) ctx.device.queue.writeBuffer(dst, 0, bytes as Uint8Array<ArrayBuffer>, 0, main);
    if (main < bytes.byteLength) {
      const tail = new Uint8Array(4);
      tail.set(bytes.subarray(main));
      ctx.device.queue.writeBuffer(dst, main, tail);
    }
    return dst;
  }
  const size = deviceBytes(bytes.byteLength);
  // With a one-thread host copy (TypedArray.set, ~5–8 GB/s into mapped memory), large uploads go in chunks, each
  // through its own mapped staging buffer and submitted at once, so that the GPU copies chunk i while JavaScript
  // copies chunk i + 1. With the native multi-threaded copy that copy is faster than the per-chunk submissions
  // and re-maps cost: one piece measured best (8K on the H100: 1.8 ms against 3.6 ms in 8 MiB chunks).
  const c = transferTuning.uploadChunk ?? (ctx.hostCopy.parallel ? 0 : UPLOAD_CHUNK);
  const chunk = c > 0 && size > 2 * c ? c : size;
  for (let off = 0; off < size; off += chunk) {
    const n = Math.min(chunk, size - off);
    const t0 = performance.now();
    const staging = await takeWriteStaging(ctx, n, chunk === size ? stagingCapacity(ctx, bytes.byteLength) : chunk);
    const t1 = performance.now();
    const part = bytes.subarray(off, Math.min(off + n, bytes.byteLength));
    ctx.hostCopy(new Uint8Array(staging.getMappedRange(0, n), 0, part.byteLength), part);
    staging.unmap();
    if (phases) {
      phases.wait += t1 - t0;
      phases.memcpy += performance.now() - t1;
    }
    submitStagedCopy(ctx, staging, dst, off, n);
  }
  return dst;
}

/** Submits the copy of `n` bytes from an (unmapped) upload staging buffer to `dst` at `offset`, then re-maps the staging buffer. */
function submitStagedCopy(ctx: GpuContext, staging: GPUBuffer, dst: GPUBuffer, offset: number, n: number): void {
  const enc = ctx.device.createCommandEncoder({ label: 'upload' });
  enc.copyBufferToBuffer(staging, 0, dst, offset, n);
  ctx.device.queue.submit([enc.finish()]);
  remapInBackground(ctx, staging);
}

/**
 * Mapped upload memory for the caller to fill: write the pixels into `bytes` (decode, read from a pipe, compute
 * them there), then `submit()` copies them to a pooled device buffer — no JavaScript copy at all, where a host
 * array costs one (~8 GB/s on one thread) — submitted at once, or recorded `into` a recording ahead of its work.
 * `discard()` gives the memory back unused.
 */
export async function stagingView(ctx: GpuContext, byteLength: number): Promise<{ bytes: ArrayBuffer; submit(label?: string, into?: CopyTarget): GPUBuffer; discard(): void }> {
  ctx.assertAlive();
  const size = deviceBytes(byteLength);
  const staging = await takeWriteStaging(ctx, size, stagingCapacity(ctx, byteLength));
  let done = false;
  const finish = () => {
    if (done) throw new Error('staging memory already submitted or discarded');
    done = true;
    staging.unmap();
  };
  return {
    bytes: staging.getMappedRange(0, size),
    submit(label = 'image', into) {
      finish();
      const dst = acquireStorage(ctx, byteLength, label);
      if (into) {
        into.copyRange(staging, 0, dst, 0, size);
        into.afterSubmit(() => remapInBackground(ctx, staging));
      } else {
        submitStagedCopy(ctx, staging, dst, 0, size);
      }
      return dst;
    },
    discard() {
      finish();
      remapInBackground(ctx, staging);
    },
  };
}

/**
 * Bytes of each upload staging chunk stageOffThread copies through. One size for every photo, so that any photo's
 * coefficients reuse the chunks any other left: with a staging buffer per photo, sized to it, a 210-photo batch of
 * 1–24 MP created 31–43 of them (0.8–1.1 GB of pinned memory, each created mapped), 0.55–0.8 s of the main thread's
 * 2.4 s on the H100 (`node --import ./dist/bench/buffer-counts.js`, docs/jpeg.md).
 */
export const STAGE_CHUNK = 8 << 20;

/** Idle staging chunks per context: mapped, or being re-mapped after their last copy. */
const chunkPools = new WeakMap<GpuContext, Staging[]>();

const idleChunks = (ctx: GpuContext): Staging[] => idleList(chunkPools, ctx);

/** Idle staging chunks of a context (tests, diagnostics). */
export function idleChunkCount(ctx: GpuContext): number {
  return chunkPools.get(ctx)?.length ?? 0;
}

/**
 * A mapped staging chunk: an idle mapped one; else one being re-mapped, once it is (a re-map ends with the GPU's copy
 * out of it, sooner than a new chunk is made: creating one costs the JavaScript thread ~0.7 ms a MiB); a new one only
 * where none is idle — so the chunks a context holds are the most its work had in flight at once.
 */
async function takeChunk(ctx: GpuContext): Promise<GPUBuffer> {
  const list = idleChunks(ctx);
  while (list.length > 0) {
    const at = list.findIndex((s) => s.mapped);
    const s = at >= 0 ? list[at] : await Promise.race(list.map((x) => x.ready.then(() => x)));
    const i = list.indexOf(s);
    if (i < 0) continue; // another caller took it while this one waited
    list.splice(i, 1);
    if (s.mapped || (await s.ready)) return s.buf; // else its re-map failed (a destroyed context): dropped
  }
  ctx.buffers.created++;
  return ctx.createBuffer(STAGE_CHUNK, GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, 'upload staging chunk', true);
}

/**
 * `data` copied into mapped upload memory off the JavaScript thread where the context's host copy has an
 * asynchronous form (HostCopy.async: a native copy on libuv's pool, one per chunk), else on it; then `submit()`
 * copies it to a pooled device buffer (nothing GPU-side happens before submit, so a caller may await this outside
 * its error scope). For large sources nothing else writes meanwhile: a batch's JPEG coefficients, whose synchronous
 * copy was 0.65 s of a 210-photo batch's main thread on the H100. The memory is STAGE_CHUNK chunks, re-mapped after
 * each copy and reused by any size. `data` must not change until it resolves. `submit(label, into)` records the copy
 * into a recording ahead of its work instead of submitting it apart.
 */
export async function stageOffThread(ctx: GpuContext, data: Uint8Array): Promise<{ submit(label?: string, into?: CopyTarget): GPUBuffer; discard(): void }> {
  ctx.assertAlive();
  const size = deviceBytes(data.byteLength);
  const chunks = await Promise.all(Array.from({ length: Math.ceil(size / STAGE_CHUNK) }, () => takeChunk(ctx)));
  const pieces = chunks.map((buf, i) => ({ buf, at: i * STAGE_CHUNK, n: Math.min(STAGE_CHUNK, size - i * STAGE_CHUNK) }));
  let done = false;
  const finish = () => {
    if (done) throw new Error('staging memory already submitted or discarded');
    done = true;
    for (const p of pieces) p.buf.unmap();
  };
  const remap = () => {
    for (const p of pieces) remapChunk(ctx, p.buf);
  };
  try {
    await Promise.all(pieces.map(async ({ buf, at, n }) => {
      const src = data.subarray(at, Math.min(at + n, data.byteLength));
      const dst = new Uint8Array(buf.getMappedRange(0, n), 0, src.byteLength);
      if (ctx.hostCopy.async) await ctx.hostCopy.async(dst, src);
      else ctx.hostCopy(dst, src);
    }));
  } catch (e) {
    finish();
    remap();
    throw e;
  }
  return {
    submit(label = 'image', into) {
      finish();
      const dst = acquireStorage(ctx, data.byteLength, label);
      if (into) {
        for (const p of pieces) into.copyRange(p.buf, 0, dst, p.at, p.n);
        into.afterSubmit(remap);
        return dst;
      }
      const enc = ctx.device.createCommandEncoder({ label: 'upload' });
      for (const p of pieces) enc.copyBufferToBuffer(p.buf, 0, dst, p.at, p.n);
      ctx.device.queue.submit([enc.finish()]);
      remap();
      return dst;
    },
    discard() {
      finish();
      remap();
    },
  };
}

/** Puts a used (unmapped) staging chunk back among the idle ones, re-mapping it in the background. */
function remapChunk(ctx: GpuContext, buf: GPUBuffer): void {
  idleChunks(ctx).push(remapping(buf));
}

/**
 * Bytes per upload chunk (a multiple of 16) with a one-thread host copy: 8 MiB measured best on the H100
 * (bench/results/h100-transfer-sweep.json), within noise of the others.
 */
export const UPLOAD_CHUNK = 8 << 20;
/**
 * Transfer settings benchmarks may change (bench/transfer.ts, bench/hosthost.ts): uploadChunk 0 = one piece,
 * undefined = chosen by the context's host copy (one piece when it is multi-threaded, else UPLOAD_CHUNK);
 * downloadChunk 0 or undefined = one piece, else the bytes per readback chunk (a multiple of 16); readChunk: the bytes
 * of downloadChunks' staging chunks (a multiple of 16; tests make it small so that a readback spans many), default
 * READ_CHUNK.
 */
export const transferTuning: { uploadChunk?: number; downloadChunk?: number; readChunk?: number } = {};

/** Reads a device buffer back into `out`: the mapped view (downloadView) copied out, then released. */
export async function download<A extends PixelArray | Uint32Array>(ctx: GpuContext, src: GPUBuffer, out: A, phases?: TransferPhases): Promise<A> {
  const chunk = transferTuning.downloadChunk ?? 0;
  if (chunk > 0 && chunk % 16 === 0 && out.byteLength > 2 * chunk) return downloadInChunks(ctx, src, out, chunk, phases);
  const t0 = performance.now();
  const view = await downloadView(ctx, src, out.byteLength);
  const t1 = performance.now();
  ctx.hostCopy(new Uint8Array(out.buffer, out.byteOffset, out.byteLength), new Uint8Array(view.bytes, 0, out.byteLength));
  if (phases) {
    phases.wait += t1 - t0;
    phases.memcpy += performance.now() - t1;
  }
  view.release();
  return out;
}

/**
 * download() in chunks, each copied to its own staging buffer in its own submission, so that the host copies
 * chunk i out of mapped memory while the GPU still copies chunk i + 1 (one readback for readbackCount).
 */
async function downloadInChunks<A extends PixelArray | Uint32Array>(ctx: GpuContext, src: GPUBuffer, out: A, chunk: number, phases?: TransferPhases): Promise<A> {
  beginReadback(ctx);
  const dst = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  const parts: { offset: number; n: number; view: Promise<MappedReadback> }[] = [];
  for (let offset = 0; offset < dst.byteLength; offset += chunk) {
    const n = Math.min(chunk, dst.byteLength - offset);
    parts.push({ offset, n, view: startReadback(ctx, src, offset, n) });
  }
  // Every chunk's view is released, also when one fails, so no staging buffer stays mapped.
  const settled = parts.map((p) => p.view.then((v) => v, () => undefined));
  try {
    for (const p of parts) {
      const t0 = performance.now();
      const v = await p.view;
      const t1 = performance.now();
      ctx.hostCopy(dst.subarray(p.offset, p.offset + p.n), new Uint8Array(v.bytes, 0, p.n));
      if (phases) {
        phases.wait += t1 - t0;
        phases.memcpy += performance.now() - t1;
      }
    }
  } finally {
    for (const v of await Promise.all(settled)) v?.release();
  }
  return out;
}

const readbacks = new WeakMap<GpuContext, number>();

/**
 * Readbacks (device → host copies, each a wait for the GPU) made on a context so far: tests check with it that a
 * path reads nothing back that it does not need (a batch's Otsu threshold), without timing anything.
 */
export function readbackCount(ctx: GpuContext): number {
  return readbacks.get(ctx) ?? 0;
}

/** The start of one readback (however many copies it takes): the context checked alive, the readback counted. */
function beginReadback(ctx: GpuContext): void {
  ctx.assertAlive();
  readbacks.set(ctx, readbackCount(ctx) + 1);
}

/** A view of mapped readback memory, valid until release() (which unmaps it and pools the staging buffer). */
interface MappedReadback { bytes: ArrayBuffer; release: () => void }

/**
 * The bytes of a device buffer (from `offset`, a multiple of 16) as a view of mapped readback memory — no copy into a host array. The view is
 * valid until `release()`, which unmaps it (the view is then detached) and returns the staging buffer to the pool.
 */
export async function downloadView(ctx: GpuContext, src: GPUBuffer, byteLength: number, offset = 0): Promise<MappedReadback> {
  beginReadback(ctx);
  return startReadback(ctx, src, offset, byteLength);
}

/**
 * Bytes of each readback staging chunk downloadChunks reads through. One size for every readback, so that any
 * readback reuses the chunks any other left: with a staging buffer per readback sized to it (a power of two), the
 * GPU encoder's coded bytes of a 210-photo batch of 1–24 MP created 42–56 mapped buffers (400–490 MiB) across the
 * whole run, 140–150 ms of its 1.2 s main thread on the H200 (`node --import ./dist/bench/buffer-counts.js`): each
 * size class grew to the most readbacks of that size in flight at once.
 */
export const READ_CHUNK = 4 << 20;

/** A device buffer's bytes, mapped in READ_CHUNK pieces: valid until release(), which unmaps and pools them. */
export interface ChunkedReadback {
  readonly byteLength: number;
  /** The u32 at byte `at` (a multiple of 4). */
  u32(at: number): number;
  /**
   * Copies bytes [from, from + dst.byteLength) into `dst`, off the JavaScript thread where `offThread` and the
   * context's host copy has an asynchronous form (HostCopy.async: one native copy a piece on libuv's pool).
   */
  copyTo(dst: Uint8Array, from: number, offThread: boolean): Promise<void>;
  release(): void;
}

/**
 * `byteLength` bytes of `src` from `offset` (a multiple of 4) read back through pooled READ_CHUNK staging chunks (one
 * submission, one map each): for readbacks of many sizes in flight together (a batch's encoded photos), whose chunks
 * then serve one another; a readback of one known size uses downloadView. With `needed`, `byteLength` is only the
 * most the result can be: the first chunk is read back alone, `needed` reads what it must from it (u32s) and says how
 * many bytes are wanted, and only the chunks after it that hold those are copied and mapped, in a second submission
 * (none where the first chunk holds them all) — the GPU encoder's coded bytes, read with their count in one trip for
 * most photos, which code to far less than the capacity sized for the most bytes per block seen. With `into`, the first
 * read's copies are recorded there (the recording that computes `src`: one submission fewer), and mapped once it is
 * submitted; call it before that submission, and await it after.
 */
export async function downloadChunks(
  ctx: GpuContext, src: GPUBuffer, byteLength: number, offset = 0, needed?: (u32: (at: number) => number) => number, into?: CopyTarget,
): Promise<ChunkedReadback> {
  beginReadback(ctx);
  const chunk = transferTuning.readChunk ?? READ_CHUNK;
  const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  const pieces: { at: number; n: number; buf: GPUBuffer }[] = [];
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    for (const p of pieces) {
      p.buf.unmap(); // nothing where a map failed
      ctx.buffers.release(p.buf);
    }
  };
  /**
   * Copies bytes [from, to) (multiples of 4) of `src` to new pieces — recorded into `target` and mapped once it is
   * submitted, or in a submission of their own — and maps them.
   */
  const read = async (from: number, to: number, target?: CopyTarget) => {
    const added = [];
    for (let at = from; at < to; at += chunk) {
      added.push({ at, n: Math.min(chunk, to - at), buf: ctx.buffers.acquire(chunk, usage, (s) => ctx.createBuffer(s, usage, 'download staging chunk')) });
    }
    pieces.push(...added);
    if (target) {
      for (const p of added) target.copyRange(src, offset + p.at, p.buf, 0, p.n);
      await new Promise<void>((resolve) => target.afterSubmit(resolve));
    } else {
      const enc = ctx.device.createCommandEncoder({ label: 'download' });
      for (const p of added) enc.copyBufferToBuffer(src, offset + p.at, p.buf, 0, p.n);
      ctx.device.queue.submit([enc.finish()]);
    }
    const failed = (await Promise.allSettled(added.map((p) => p.buf.mapAsync(GPUMapMode.READ, 0, p.n)))).find((m) => m.status === 'rejected');
    if (failed) {
      release();
      ctx.assertAlive();
      throw failed.reason;
    }
  };
  // Each chunk's mapped range, taken once (a range may be asked for only once while mapped).
  const views: Uint8Array[] = [];
  const view = (i: number) => (views[i] ??= new Uint8Array(pieces[i].buf.getMappedRange(0, pieces[i].n)));
  const u32 = (at: number) => {
    const i = Math.floor(at / chunk), v = view(i);
    return new Uint32Array(v.buffer, v.byteOffset + at - pieces[i].at, 1)[0];
  };
  const size = deviceBytes(byteLength);
  let length = byteLength;
  if (needed) {
    await read(0, Math.min(chunk, size), into);
    length = Math.min(byteLength, needed(u32));
    if (deviceBytes(length) > chunk) await read(chunk, deviceBytes(length));
  } else {
    await read(0, size, into);
  }
  return {
    byteLength: length,
    u32,
    async copyTo(dst, from, offThread) {
      const copies: Promise<void>[] = [];
      pieces.forEach((p, i) => {
        const lo = Math.max(from, p.at), hi = Math.min(from + dst.byteLength, p.at + p.n);
        if (lo >= hi) return;
        const to = dst.subarray(lo - from, hi - from), part = view(i).subarray(lo - p.at, hi - p.at);
        if (offThread && ctx.hostCopy.async) copies.push(ctx.hostCopy.async(to, part));
        else ctx.hostCopy(to, part);
      });
      await Promise.all(copies);
    },
    release,
  };
}

/** Submits the copy of `byteLength` bytes of `src` from `offset` (a multiple of 16) to pooled readback memory and maps it. */
async function startReadback(ctx: GpuContext, src: GPUBuffer, offset: number, byteLength: number): Promise<MappedReadback> {
  const size = deviceBytes(byteLength);
  const staging = readbackStaging(ctx, byteLength);
  const enc = ctx.device.createCommandEncoder({ label: 'download' });
  enc.copyBufferToBuffer(src, offset, staging, 0, size);
  ctx.device.queue.submit([enc.finish()]);
  return mapReadback(ctx, staging, size);
}

/** Pooled readback memory for `byteLength` bytes. */
function readbackStaging(ctx: GpuContext, byteLength: number): GPUBuffer {
  const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  return ctx.buffers.acquire(stagingCapacity(ctx, byteLength), usage, (s) => ctx.createBuffer(s, usage, 'download staging'));
}

/**
 * downloadView recorded into `rec`: the copy to readback memory goes in the recording's own submission (one fewer),
 * and is mapped once that is submitted. Resolves after rec.submit(); where the recording is never submitted (its
 * recording failed: the caller's error) it never resolves, and a failure to map is never an unhandled rejection.
 */
export function downloadAfter(rec: CopyTarget, src: GPUBuffer, byteLength: number): Promise<MappedReadback> {
  const ctx = rec.ctx;
  beginReadback(ctx);
  const size = deviceBytes(byteLength);
  const staging = readbackStaging(ctx, byteLength);
  rec.copyRange(src, 0, staging, 0, size);
  const view = new Promise<MappedReadback>((resolve) => rec.afterSubmit(() => resolve(mapReadback(ctx, staging, size))));
  view.catch(() => undefined);
  return view;
}

/** Maps pooled readback memory once the GPU has written it: a view valid until release(), which pools it again. */
async function mapReadback(ctx: GpuContext, staging: GPUBuffer, size: number): Promise<MappedReadback> {
  try {
    await staging.mapAsync(GPUMapMode.READ, 0, size);
  } catch (e) {
    ctx.buffers.release(staging);
    ctx.assertAlive();
    throw e;
  }
  let released = false;
  return {
    bytes: staging.getMappedRange(0, size),
    release() {
      if (released) return;
      released = true;
      staging.unmap();
      ctx.buffers.release(staging);
    },
  };
}


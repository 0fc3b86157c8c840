import type { PixelArray } from '../image.js';
import { alignUp, type GpuContext } from './context.js';

/**
 * Host↔device transfers. Measured on the H100 through Dawn: a fresh queue.writeBuffer / mapAsync per image
 * ran at about 1 GB/s, mostly first-touch page faults on newly allocated staging memory. So both directions
 * reuse staging buffers that stay allocated: uploads copy into a MAP_WRITE buffer that is re-mapped in the
 * background after each use, downloads read from a pooled MAP_READ buffer.
 */

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** Byte size of a device buffer for `n` bytes of pixels: padded to 16 so kernels may read whole vec4<u32>. */
export function deviceBytes(n: number): number {
  return alignUp(Math.max(n, 16), 16);
}

/**
 * The capacity a pooled buffer for `n` bytes gets: above 1 MiB rounded up to one of 8 size classes per doubling
 * (at most 12.5% more), so images of different sizes — a folder of photos — reuse the same buffers instead of
 * creating new ones each time (measured on the H100: buffer creation was a seventh of a batch's main thread).
 * Never beyond the device's buffer/binding limits; copies still move only deviceBytes(n).
 */
export function capacityFor(ctx: GpuContext, n: number): number {
  const b = deviceBytes(n);
  if (b <= 1 << 20) return b;
  const step = 2 ** (Math.floor(Math.log2(b)) - 3);
  const cap = Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
  return Math.max(b, Math.min(Math.ceil(b / step) * step, Math.floor(cap / 16) * 16));
}

/** A storage buffer from the pool, big enough for `bytes` bytes (padded). */
export function acquireStorage(ctx: GpuContext, bytes: number, label: string): GPUBuffer {
  const size = capacityFor(ctx, bytes);
  return ctx.buffers.acquire(size, STORAGE(), (s) => ctx.createBuffer(s, STORAGE(), label));
}

interface Staging {
  buf: GPUBuffer;
  ready: Promise<boolean>;
}
const writers = new WeakMap<GpuContext, Map<number, Staging[]>>();

async function takeWriteStaging(ctx: GpuContext, size: number): Promise<GPUBuffer> {
  let byKey = writers.get(ctx);
  if (!byKey) {
    writers.set(ctx, (byKey = new Map()));
    ctx.onDestroy(() => releaseStaging(ctx));
  }
  const list = byKey.get(size) ?? [];
  byKey.set(size, list);
  while (list.length) {
    const s = list.shift()!;
    if (await s.ready) return s.buf;
  }
  ctx.buffers.created++;
  return ctx.createBuffer(size, GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, 'upload staging', true);
}

function remapInBackground(ctx: GpuContext, buf: GPUBuffer): void {
  const list = writers.get(ctx)!.get(buf.size)!;
  const ready = buf.mapAsync(GPUMapMode.WRITE).then(() => true, () => false);
  list.push({ buf, ready });
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
  // Large uploads go in chunks, each through its own mapped staging buffer and submitted at once: the GPU copies
  // chunk i while JavaScript copies chunk i + 1 into mapped memory (one TypedArray.set runs at ~8 GB/s on one
  // thread; the GPU's copy would otherwise wait for all of it). Chunk-sized staging buffers serve every image size.
  // Uploads up to one chunk go through a chunk-sized staging buffer too, so one staging size serves every image.
  const c = transferTuning.uploadChunk;
  const chunk = c > 0 && size > 2 * c ? c : size;
  for (let off = 0; off < size; off += chunk) {
    const n = Math.min(chunk, size - off);
    const t0 = performance.now();
    const staging = await takeWriteStaging(ctx, c > 0 && size <= c ? c : chunk === size ? capacityFor(ctx, bytes.byteLength) : chunk);
    const t1 = performance.now();
    new Uint8Array(staging.getMappedRange(0, n)).set(bytes.subarray(off, Math.min(off + n, bytes.byteLength)));
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
 * array costs one (~8 GB/s on one thread). `discard()` gives the memory back unused.
 */
export async function stagingView(ctx: GpuContext, byteLength: number): Promise<{ bytes: ArrayBuffer; submit(label?: string): GPUBuffer; discard(): void }> {
  ctx.assertAlive();
  const cap = capacityFor(ctx, byteLength);
  const staging = await takeWriteStaging(ctx, cap);
  const size = deviceBytes(byteLength);
  let done = false;
  const finish = () => {
    if (done) throw new Error('staging memory already submitted or discarded');
    done = true;
    staging.unmap();
  };
  return {
    bytes: staging.getMappedRange(0, size),
    submit(label = 'image') {
      finish();
      const dst = acquireStorage(ctx, byteLength, label);
      submitStagedCopy(ctx, staging, dst, 0, size);
      return dst;
    },
    discard() {
      finish();
      remapInBackground(ctx, staging);
    },
  };
}

/** Bytes per upload chunk (a multiple of 16): 8 MiB measured best on the H100 (bench/results/h100-transfer-sweep.json), within noise of the others. */
export const UPLOAD_CHUNK = 8 << 20;
/** Transfer settings benchmarks may change (bench/transfer.ts): uploadChunk 0 = one piece. */
export const transferTuning = { uploadChunk: UPLOAD_CHUNK };

/** Reads a device buffer back into `out`: the mapped view (downloadView) copied out, then released. */
export async function download<A extends PixelArray | Uint32Array>(ctx: GpuContext, src: GPUBuffer, out: A, phases?: TransferPhases): Promise<A> {
  const t0 = performance.now();
  const view = await downloadView(ctx, src, out.byteLength);
  const t1 = performance.now();
  new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(new Uint8Array(view.bytes, 0, out.byteLength));
  if (phases) {
    phases.wait += t1 - t0;
    phases.memcpy += performance.now() - t1;
  }
  view.release();
  return out;
}

/**
 * The bytes of a device buffer as a view of mapped readback memory — no copy into a host array. The view is
 * valid until `release()`, which unmaps it (the view is then detached) and returns the staging buffer to the pool.
 */
export async function downloadView(ctx: GpuContext, src: GPUBuffer, byteLength: number): Promise<{ bytes: ArrayBuffer; release(): void }> {
  ctx.assertAlive();
  const size = deviceBytes(byteLength);
  const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  const staging = ctx.buffers.acquire(capacityFor(ctx, byteLength), usage, (s) => ctx.createBuffer(s, usage, 'download staging'));
  const enc = ctx.device.createCommandEncoder({ label: 'download' });
  enc.copyBufferToBuffer(src, 0, staging, 0, size);
  ctx.device.queue.submit([enc.finish()]);
  try {
    await staging.mapAsync(GPUMapMode.READ, 0, size);
  } catch (e) {
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

/** Destroys the staging buffers kept for this context (done by GpuContext.destroy). */
function releaseStaging(ctx: GpuContext): void {
  const byKey = writers.get(ctx);
  if (!byKey) return;
  for (const list of byKey.values()) for (const s of list) s.buf.destroy();
  writers.delete(ctx);
}

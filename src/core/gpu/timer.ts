import type { KernelTime } from '../timings.js';
import type { GpuContext } from './context.js';

interface TimerResources {
  querySet: GPUQuerySet;
  resolveBuf: GPUBuffer;
  readBuf: GPUBuffer;
}

/**
 * Query sets and buffers of finished timers, per context, for the next ones: every host→host operation makes a
 * timer, and creating and destroying three GPU objects per call showed in a profile of a batch on the H100 (the
 * main thread sets a GPU batch's pace).
 */
const idleTimers = new WeakMap<GpuContext, TimerResources[]>();
const CAPACITY = 32;

function takeResources(ctx: GpuContext): TimerResources {
  let list = idleTimers.get(ctx);
  if (!list) {
    idleTimers.set(ctx, (list = []));
    ctx.onDestroy(() => {
      for (const r of list!) destroyResources(r);
      list!.length = 0;
    });
  }
  return list.pop() ?? createResources(ctx, CAPACITY);
}

function createResources(ctx: GpuContext, capacity: number): TimerResources {
  return {
    querySet: ctx.device.createQuerySet({ type: 'timestamp', count: capacity * 2 }),
    resolveBuf: ctx.device.createBuffer({ size: capacity * 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }),
    readBuf: ctx.device.createBuffer({ size: capacity * 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
  };
}

function destroyResources(r: TimerResources): void {
  r.querySet.destroy();
  r.resolveBuf.destroy();
  r.readBuf.destroy();
}

/**
 * Per-kernel GPU times from timestamp queries: each compute pass gets a begin/end pair. Where the adapter has
 * no timestamp queries (e.g. OpenGL ES), `enabled` is false and callers fall back to wall-clock time.
 * Dawn quantizes timestamps unless created with `disable-dawn-features=timestamp_quantization` (the Node
 * runtime does that).
 */
export class KernelTimer {
  readonly enabled: boolean;
  private readonly names: string[] = [];
  private readonly res?: TimerResources;
  /** A readback map is pending or the buffer is mapped: the resources cannot be reused as they are. */
  private reading = false;

  constructor(private readonly ctx: GpuContext, want: boolean, private readonly capacity = CAPACITY) {
    this.enabled = want && ctx.timestamps;
    if (this.enabled) this.res = capacity === CAPACITY ? takeResources(ctx) : createResources(ctx, capacity);
  }

  /** A compute pass descriptor that records this pass's begin and end time under `name`. */
  pass(name: string): GPUComputePassDescriptor {
    if (!this.enabled || this.names.length >= this.capacity) return { label: name };
    const i = this.names.push(name) - 1;
    return { label: name, timestampWrites: { querySet: this.res!.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } };
  }

  /** Appends the query resolution to `encoder` (call once, after the last timed pass). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.enabled || !this.names.length) return;
    const n = this.names.length * 2;
    encoder.resolveQuerySet(this.res!.querySet, 0, n, this.res!.resolveBuf, 0);
    encoder.copyBufferToBuffer(this.res!.resolveBuf, 0, this.res!.readBuf, 0, n * 8);
  }

  /** Reads the times back (after the encoder was submitted). */
  async read(): Promise<KernelTime[]> {
    if (!this.enabled || !this.names.length) return [];
    this.reading = true;
    await this.res!.readBuf.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(this.res!.readBuf.getMappedRange().slice(0));
    this.res!.readBuf.unmap();
    this.reading = false;
    return this.names.map((name, i) => ({ name, ms: Math.max(0, Number(t[2 * i + 1] - t[2 * i])) / 1e6 }));
  }

  /** Gives the query set and buffers to the next timer (destroys them if a readback never finished). */
  destroy(): void {
    if (!this.res) return;
    if (this.reading || this.capacity !== CAPACITY || this.ctx.lost) destroyResources(this.res);
    else idleTimers.get(this.ctx)!.push(this.res);
  }
}

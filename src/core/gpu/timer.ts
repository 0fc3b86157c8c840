import type { KernelTime } from '../timings.js';
import type { GpuContext } from './context.js';

/**
 * Per-kernel GPU times from timestamp queries: each compute pass gets a begin/end pair. Where the adapter has
 * no timestamp queries (e.g. OpenGL ES), `enabled` is false and callers fall back to wall-clock time.
 * Dawn quantizes timestamps unless created with `disable-dawn-features=timestamp_quantization` (the Node
 * runtime does that).
 */
export class KernelTimer {
  readonly enabled: boolean;
  private readonly names: string[] = [];
  private querySet?: GPUQuerySet;
  private resolveBuf?: GPUBuffer;
  private readBuf?: GPUBuffer;

  constructor(ctx: GpuContext, want: boolean, private readonly capacity = 32) {
    this.enabled = want && ctx.timestamps;
    if (this.enabled) {
      this.querySet = ctx.device.createQuerySet({ type: 'timestamp', count: capacity * 2 });
      this.resolveBuf = ctx.device.createBuffer({ size: capacity * 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      this.readBuf = ctx.device.createBuffer({ size: capacity * 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    }
  }

  /** A compute pass descriptor that records this pass's begin and end time under `name`. */
  pass(name: string): GPUComputePassDescriptor {
    if (!this.enabled || this.names.length >= this.capacity) return { label: name };
    const i = this.names.push(name) - 1;
    return { label: name, timestampWrites: { querySet: this.querySet!, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } };
  }

  /** Appends the query resolution to `encoder` (call once, after the last timed pass). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.enabled || !this.names.length) return;
    const n = this.names.length * 2;
    encoder.resolveQuerySet(this.querySet!, 0, n, this.resolveBuf!, 0);
    encoder.copyBufferToBuffer(this.resolveBuf!, 0, this.readBuf!, 0, n * 8);
  }

  /** Reads the times back (after the encoder was submitted). */
  async read(): Promise<KernelTime[]> {
    if (!this.enabled || !this.names.length) return [];
    await this.readBuf!.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(this.readBuf!.getMappedRange().slice(0));
    this.readBuf!.unmap();
    return this.names.map((name, i) => ({ name, ms: Math.max(0, Number(t[2 * i + 1] - t[2 * i])) / 1e6 }));
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolveBuf?.destroy();
    this.readBuf?.destroy();
  }
}

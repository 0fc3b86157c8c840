/**
 * Reuses GPU buffers by (usage, size). Operations acquire scratch and output buffers here and release them
 * when done, so a second run of the same plan allocates nothing new (tested). `created` counts allocations.
 * Above 1 MiB a request with no free buffer of its exact size takes the smallest free one of the same usage up to
 * twice as large: a folder of photos of 210 sizes otherwise created a buffer per size class and use (on the H100,
 * buffer creation was an eighth of a batch's main thread). Callers already get buffers larger than they asked for
 * (transfer.ts capacityFor) and never rely on the exact size.
 */
export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private bytesFree = 0;
  created = 0;
  /** Free buffers beyond this many bytes are destroyed instead of kept. */
  maxFreeBytes = 1 << 30;

  private key(size: number, usage: number): string {
    return `${usage}:${size}`;
  }

  acquire(size: number, usage: GPUBufferUsageFlags, create: (size: number) => GPUBuffer): GPUBuffer {
    const list = this.free.get(this.key(size, usage)) ?? (size > 1 << 20 ? this.bestFit(size, usage) : undefined);
    const buf = list?.pop();
    if (buf) {
      this.bytesFree -= buf.size;
      return buf;
    }
    this.created++;
    return create(size);
  }

  /** The free list of the smallest buffers of `usage` in (size, 2·size], if any. */
  private bestFit(size: number, usage: number): GPUBuffer[] | undefined {
    let best: GPUBuffer[] | undefined, bestSize = Infinity;
    for (const list of this.free.values()) {
      const b = list[list.length - 1];
      if (b && b.usage === usage && b.size > size && b.size <= 2 * size && b.size < bestSize) {
        best = list;
        bestSize = b.size;
      }
    }
    return best;
  }

  release(buf: GPUBuffer | undefined): void {
    if (!buf) return;
    if (this.bytesFree + buf.size > this.maxFreeBytes) {
      buf.destroy();
      return;
    }
    const k = this.key(buf.size, buf.usage);
    let list = this.free.get(k);
    if (!list) this.free.set(k, (list = []));
    list.push(buf);
    this.bytesFree += buf.size;
  }

  clear(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
    this.bytesFree = 0;
  }
}

/**
 * Reuses GPU buffers by (usage, size). Operations acquire scratch and output buffers here and release them
 * when done, so a second run of the same plan allocates nothing new (tested). `created` counts allocations.
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
    const list = this.free.get(this.key(size, usage));
    const buf = list?.pop();
    if (buf) {
      this.bytesFree -= buf.size;
      return buf;
    }
    this.created++;
    return create(size);
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

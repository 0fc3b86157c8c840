/**
 * Reuses GPU buffers by (usage, size). Operations acquire scratch and output buffers here and release them
 * when done, so a second run of the same plan allocates nothing new (tested). `created` counts allocations.
 * Above 1 MiB a request with no free buffer of its exact size takes the smallest free one of the same usage up to
 * twice as large: a folder of photos of 210 sizes otherwise created a buffer per size class and use (on the H100,
 * buffer creation was an eighth of a batch's main thread). Callers already get buffers larger than they asked for
 * (transfer.ts capacityFor) and never rely on the exact size.
 */
/** Whether a buffer's memory is host-mapped (GPUBufferUsage.MAP_READ 0x1, MAP_WRITE 0x2). */
const isMapped = (b: GPUBuffer) => (b.usage & 0x3) !== 0;

export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  /** The free buffers, least recently released first. */
  private readonly byAge = new Set<GPUBuffer>();
  private bytesFree = 0;
  created = 0;
  /**
   * Free buffers beyond this many bytes are destroyed, device-memory ones before host-mapped ones, each the least
   * recently released first: the buffer just released
   * is the likeliest to be asked for again (the next photo of a folder growing in size; a JPEG batch's readback
   * buffers, which were destroyed on release and created again per photo while older sizes filled the pool).
   */
  maxFreeBytes = 1 << 30;

  private key(size: number, usage: number): string {
    return `${usage}:${size}`;
  }

  acquire(size: number, usage: GPUBufferUsageFlags, create: (size: number) => GPUBuffer): GPUBuffer {
    const list = this.free.get(this.key(size, usage)) ?? (size > 1 << 20 ? this.bestFit(size, usage) : undefined);
    const buf = list?.pop();
    if (buf) {
      this.bytesFree -= buf.size;
      this.byAge.delete(buf);
      return buf;
    }
    this.created++;
    return create(size);
  }

  /**
   * Whether requests of `usage` are outgrowing the pool: a free buffer of that usage is a little smaller than `size`
   * (above 1 MiB, at least half of it) — a folder of photos of growing size, whose every photo otherwise missed and
   * created its buffers (transfer.ts acquireStorage then creates with headroom).
   */
  outgrown(size: number, usage: GPUBufferUsageFlags): boolean {
    if (size <= 1 << 20) return false;
    for (const b of this.byAge) if (b.usage === usage && b.size < size && 2 * b.size >= size) return true;
    return false;
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
    if (buf.size > this.maxFreeBytes) {
      buf.destroy();
      return;
    }
    // Device-memory buffers go first: a host-mapped one (readback staging) costs far more to create again — on the
    // H100 its creation took 45% of a `--jpeg gpu` batch's main thread.
    for (const mapped of [false, true]) {
      for (const old of this.byAge) {
        if (this.bytesFree + buf.size <= this.maxFreeBytes) break;
        if (isMapped(old) === mapped) this.evict(old);
      }
    }
    const k = this.key(buf.size, buf.usage);
    let list = this.free.get(k);
    if (!list) this.free.set(k, (list = []));
    list.push(buf);
    this.byAge.add(buf);
    this.bytesFree += buf.size;
  }

  /** Destroys a free buffer. */
  private evict(buf: GPUBuffer): void {
    const list = this.free.get(this.key(buf.size, buf.usage))!;
    list.splice(list.indexOf(buf), 1);
    this.byAge.delete(buf);
    this.bytesFree -= buf.size;
    buf.destroy();
  }

  clear(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
    this.byAge.clear();
    this.bytesFree = 0;
  }
}

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
  /**
   * Per usage, the sizes that have free buffers, ascending: the best fit and the outgrown check are a binary search
   * (a scan of every free list was 294 ms of a 210-photo batch's main thread on the H100, the pool holding a list
   * per size ever released).
   */
  private readonly sizes = new Map<number, number[]>();
  /**
   * The free buffers, least recently released first: device-memory ones and host-mapped ones apart, so that an
   * eviction takes the first of a list instead of scanning past the other kind (a scan of one list of both was
   * 45 ms of a 210-photo batch's main thread on the H200).
   */
  private readonly byAge = { device: new Set<GPUBuffer>(), mapped: new Set<GPUBuffer>() };
  private bytesFree = 0;
  /** Buffers the pool handed out and not yet released, and their bytes (a buffer released twice counts once). */
  private readonly lent = new WeakSet<GPUBuffer>();
  private bytesLent = 0;
  /** The most bytes lent at once: what the work itself held on the device together. */
  private peakLent = 0;
  created = 0;
  /**
   * Free buffers beyond this many bytes are destroyed, device-memory ones before host-mapped ones, each the least
   * recently released first: the buffer just released
   * is the likeliest to be asked for again (the next photo of a folder growing in size; a JPEG batch's readback
   * buffers, which were destroyed on release and created again per photo while older sizes filled the pool).
   * Where the work held more than this at once (peakLent), free buffers are kept up to that peak less what is still
   * lent: ten calls in flight on a 378 MB volume returned 3.8 GB, a fixed 1 GiB destroyed most of it and every call
   * of the next round created its output again — and a fresh buffer is zero-filled by Dawn on first use, a full extra
   * write (H100 roofline: sobel-x 3D 0.518 ms back to back against 0.342 isolated). The device never holds more than
   * max(what is lent + maxFreeBytes, the peak it already held), as CuPy's pool keeps what the work once needed.
   */
  maxFreeBytes = 1 << 30;

  /** The bytes of free buffers kept: the budget, or more where the work held more at once. */
  private get freeBudget(): number {
    return Math.max(this.maxFreeBytes, this.peakLent - this.bytesLent);
  }

  private key(size: number, usage: number): string {
    return `${usage}:${size}`;
  }

  acquire(size: number, usage: GPUBufferUsageFlags, create: (size: number) => GPUBuffer): GPUBuffer {
    const fit = this.free.has(this.key(size, usage)) ? size : size > 1 << 20 ? this.bestFit(size, usage) : undefined;
    if (fit !== undefined) {
      const buf = this.take(fit, usage);
      this.bytesFree -= buf.size;
      this.agesOf(buf).delete(buf);
      return this.lend(buf);
    }
    this.created++;
    return this.lend(create(size));
  }

  private lend(buf: GPUBuffer): GPUBuffer {
    this.lent.add(buf);
    this.bytesLent += buf.size;
    this.peakLent = Math.max(this.peakLent, this.bytesLent);
    return buf;
  }

  /** Kinds of free buffers (usage and size) the pool holds: a free list is dropped once empty (tests). */
  get freeKinds(): number {
    return this.free.size;
  }

  /**
   * Whether requests of `usage` are outgrowing the pool: a free buffer of that usage is a little smaller than `size`
   * (above 1 MiB, at least half of it) — a folder of photos of growing size, whose every photo otherwise missed and
   * created its buffers (transfer.ts acquireStorage then creates with headroom).
   */
  outgrown(size: number, usage: GPUBufferUsageFlags): boolean {
    if (size <= 1 << 20) return false;
    const sizes = this.sizes.get(usage) ?? [];
    const below = sizes[lowerBound(sizes, size) - 1];
    return below !== undefined && 2 * below >= size;
  }

  /** The smallest free size of `usage` in (size, 2·size], if any. */
  private bestFit(size: number, usage: number): number | undefined {
    const sizes = this.sizes.get(usage) ?? [];
    const s = sizes[lowerBound(sizes, size + 1)];
    return s !== undefined && s <= 2 * size ? s : undefined;
  }

  /** Takes the most recently released free buffer of (size, usage), dropping its list once empty. */
  private take(size: number, usage: number, buf?: GPUBuffer): GPUBuffer {
    const k = this.key(size, usage);
    const list = this.free.get(k)!;
    if (buf) list.splice(list.indexOf(buf), 1);
    else buf = list.pop()!;
    if (!list.length) {
      this.free.delete(k);
      const sizes = this.sizes.get(usage)!;
      sizes.splice(lowerBound(sizes, size), 1);
    }
    return buf;
  }

  release(buf: GPUBuffer | undefined): void {
    if (!buf) return;
    if (this.lent.delete(buf)) this.bytesLent -= buf.size;
    const budget = this.freeBudget;
    if (buf.size > budget) {
      buf.destroy();
      return;
    }
    // Device-memory buffers go first: a host-mapped one (readback staging) costs far more to create again — on the
    // H100 its creation took 45% of a `--jpeg gpu` batch's main thread.
    for (const ages of [this.byAge.device, this.byAge.mapped]) {
      for (const old of ages) {
        if (this.bytesFree + buf.size <= budget) break;
        this.evict(old);
      }
    }
    const k = this.key(buf.size, buf.usage);
    let list = this.free.get(k);
    if (!list) {
      this.free.set(k, (list = []));
      let sizes = this.sizes.get(buf.usage);
      if (!sizes) this.sizes.set(buf.usage, (sizes = []));
      sizes.splice(lowerBound(sizes, buf.size), 0, buf.size);
    }
    list.push(buf);
    this.agesOf(buf).add(buf);
    this.bytesFree += buf.size;
  }

  /** The age list of a buffer's kind. */
  private agesOf(buf: GPUBuffer): Set<GPUBuffer> {
    return isMapped(buf) ? this.byAge.mapped : this.byAge.device;
  }

  /** Destroys a free buffer. */
  private evict(buf: GPUBuffer): void {
    this.take(buf.size, buf.usage, buf);
    this.agesOf(buf).delete(buf);
    this.bytesFree -= buf.size;
    buf.destroy();
  }

  /** Destroys every free buffer, and forgets the peak (what is lent stays counted). */
  clear(): void {
    this.peakLent = this.bytesLent;
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
    this.sizes.clear();
    this.byAge.device.clear();
    this.byAge.mapped.clear();
    this.bytesFree = 0;
  }
}

/** The first index of ascending `xs` whose value is at least `x` (xs.length if none). */
function lowerBound(xs: number[], x: number): number {
  let lo = 0, hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

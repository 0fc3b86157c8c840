/**
 * GPU buffers created and destroyed by a process, by label and usage, printed on stderr at exit: a preload for any
 * imgpu command, `node --import ./dist/bench/buffer-counts.js bin/imgpu.js equalize DIR OUT --device gpu --jpeg gpu`,
 * to see which buffers a batch still creates per photo (each creation is main-thread time: Dawn's allocation and, for
 * mapped staging, the first touch of its memory). Counts, bytes and the main-thread time of the creations, the
 * destructions before exit (the pool's evictions: a buffer created again later), and how many creations came in each
 * quarter of the run (a warm-up that settles, or a steady churn); the command runs as usual.
 */
import { GpuContext } from '../src/core/gpu/context.js';

interface Count { n: number; bytes: number; ms: number; destroyed: number; destroyedBytes: number; quarters: number[] }
const counts = new Map<string, Count>();
const keyOf = new WeakMap<GPUBuffer, string>();
const created: { at: number; key: string }[] = [];
const t0 = performance.now();
let exiting = false;
let patchedDestroy = false;

/** Counts each destroy() before exit under the buffer's creation key (patched on the first buffer's prototype). */
function patchDestroy(buf: GPUBuffer): void {
  if (patchedDestroy) return;
  patchedDestroy = true;
  const proto = Object.getPrototypeOf(buf) as GPUBuffer;
  // The method itself (not a bound copy), called below with each buffer as `this`.
  const destroy = Object.getOwnPropertyDescriptor(proto, 'destroy')!.value as GPUBuffer['destroy'];
  proto.destroy = function (this: GPUBuffer) {
    const key = keyOf.get(this);
    const c = key ? counts.get(key) : undefined;
    if (c && !exiting) {
      c.destroyed++;
      c.destroyedBytes += this.size;
    }
    return destroy.call(this);
  };
}

// The method itself (not a bound copy), called below with each context as `this`.
const create = Object.getOwnPropertyDescriptor(GpuContext.prototype, 'createBuffer')!.value as GpuContext['createBuffer'];
GpuContext.prototype.createBuffer = function (this: GpuContext, size, usage, label, mappedAtCreation) {
  const key = `${label} (usage ${usage}${mappedAtCreation ? ', mapped at creation' : ''})`;
  const c = counts.get(key) ?? { n: 0, bytes: 0, ms: 0, destroyed: 0, destroyedBytes: 0, quarters: [] };
  c.n++;
  c.bytes += size;
  counts.set(key, c);
  const start = performance.now();
  created.push({ at: start - t0, key });
  try {
    const buf = create.call(this, size, usage, label, mappedAtCreation);
    keyOf.set(buf, key);
    patchDestroy(buf);
    return buf;
  } finally {
    c.ms += performance.now() - start;
  }
};

// Counting stops once a context is destroyed (its teardown destroys every buffer) or the process exits.
const destroyContext = Object.getOwnPropertyDescriptor(GpuContext.prototype, 'destroy')!.value as GpuContext['destroy'];
GpuContext.prototype.destroy = function (this: GpuContext) {
  exiting = true;
  return destroyContext.call(this);
};
process.on('beforeExit', () => { exiting = true; });
process.on('exit', () => {
  // Creations per quarter of the span from the first creation to the last.
  const first = created[0]?.at ?? 0, span = Math.max((created.at(-1)?.at ?? 0) - first, 1e-9);
  for (const { at, key } of created) {
    const q = Math.min(3, Math.floor(((at - first) / span) * 4));
    const c = counts.get(key)!;
    c.quarters[q] = (c.quarters[q] ?? 0) + 1;
  }
  const rows = [...counts].sort((a, b) => b[1].n - a[1].n);
  const total = rows.reduce((a, [, c]) => a + c.n, 0);
  const ms = rows.reduce((a, [, c]) => a + c.ms, 0);
  process.stderr.write(`GPU buffers created: ${total} (${ms.toFixed(0)} ms of the main thread); destroyed before exit; created per quarter of the run\n`);
  for (const [k, c] of rows) {
    const quarters = [0, 1, 2, 3].map((q) => c.quarters[q] ?? 0).join('/');
    process.stderr.write(`${String(c.n).padStart(7)} ${(c.bytes / 2 ** 20).toFixed(1).padStart(9)} MiB ${c.ms.toFixed(1).padStart(8)} ms  destroyed ${String(c.destroyed).padStart(4)} (${(c.destroyedBytes / 2 ** 20).toFixed(1)} MiB)  ${quarters.padEnd(14)} ${k}\n`);
  }
});

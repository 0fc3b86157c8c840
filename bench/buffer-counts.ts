/**
 * GPU buffers created by a process, by label and usage, printed on stderr at exit: a preload for any imgpu command,
 * `node --import ./dist/bench/buffer-counts.js bin/imgpu.js equalize DIR OUT --device gpu --jpeg gpu`, to see which
 * buffers a batch still creates per photo (each creation is main-thread time: Dawn's allocation and, for mapped
 * staging, the first touch of its memory). Counts, bytes and the main-thread time of the creations; the command
 * runs as usual.
 */
import { GpuContext } from '../src/core/gpu/context.js';

const counts = new Map<string, { n: number; bytes: number; ms: number }>();
// The method itself (not a bound copy), called below with each context as `this`.
const create = Object.getOwnPropertyDescriptor(GpuContext.prototype, 'createBuffer')!.value as GpuContext['createBuffer'];
GpuContext.prototype.createBuffer = function (this: GpuContext, size, usage, label, mappedAtCreation) {
  const key = `${label} (usage ${usage}${mappedAtCreation ? ', mapped at creation' : ''})`;
  const c = counts.get(key) ?? { n: 0, bytes: 0, ms: 0 };
  c.n++;
  c.bytes += size;
  counts.set(key, c);
  const t0 = performance.now();
  try {
    return create.call(this, size, usage, label, mappedAtCreation);
  } finally {
    c.ms += performance.now() - t0;
  }
};

process.on('exit', () => {
  const rows = [...counts].sort((a, b) => b[1].n - a[1].n);
  const total = rows.reduce((a, [, c]) => a + c.n, 0);
  const ms = rows.reduce((a, [, c]) => a + c.ms, 0);
  process.stderr.write(`GPU buffers created: ${total} (${ms.toFixed(0)} ms of the main thread)\n`);
  for (const [k, c] of rows) process.stderr.write(`${String(c.n).padStart(7)} ${(c.bytes / 2 ** 20).toFixed(1).padStart(9)} MiB ${c.ms.toFixed(1).padStart(8)} ms  ${k}\n`);
});

/**
 * GPU buffers created by a process, by label and usage, printed on stderr at exit: a preload for any imgpu command,
 * `node --import ./dist/bench/buffer-counts.js bin/imgpu.js equalize DIR OUT --device gpu --jpeg gpu`, to see which
 * buffers a batch still creates per photo (each creation is main-thread time: Dawn's allocation and, for mapped
 * staging, the first touch of its memory). Counts only; the command runs as usual.
 */
import { GpuContext } from '../src/core/gpu/context.js';

const counts = new Map<string, { n: number; bytes: number }>();
// The method itself (not a bound copy), called below with each context as `this`.
const create = Object.getOwnPropertyDescriptor(GpuContext.prototype, 'createBuffer')!.value as GpuContext['createBuffer'];
GpuContext.prototype.createBuffer = function (this: GpuContext, size, usage, label, mappedAtCreation) {
  const c = counts.get(`${label} (usage ${usage})`) ?? { n: 0, bytes: 0 };
  c.n++;
  c.bytes += size;
  counts.set(`${label} (usage ${usage})`, c);
  return create.call(this, size, usage, label, mappedAtCreation);
};

process.on('exit', () => {
  const rows = [...counts].sort((a, b) => b[1].n - a[1].n);
  const total = rows.reduce((a, [, c]) => a + c.n, 0);
  process.stderr.write(`GPU buffers created: ${total}\n`);
  for (const [k, c] of rows) process.stderr.write(`${String(c.n).padStart(7)} ${(c.bytes / 2 ** 20).toFixed(1).padStart(9)} MiB  ${k}\n`);
});

/**
 * How often `setImmediate` callbacks ran in a process, and for how long, printed on stderr at exit: a preload for any
 * imgpu command (`node --import ./dist/bench/poll-counts.js bin/imgpu.js …`). dawn.node polls for GPU completions
 * (mapAsync, queue work) from a setImmediate callback each turn of the event loop while anything is pending
 * (wgpuInstanceProcessEvents), so the count and time say whether its polling is a cost per turn of the loop — turns
 * that I/O completions drive — or a spin through idle time (many short polls).
 */
const original = globalThis.setImmediate;
let calls = 0;
let ms = 0;
let longest = 0;
const t0 = performance.now();
globalThis.setImmediate = Object.assign(function <A extends unknown[]>(fn: (...args: A) => void, ...args: A) {
  return original(function (this: unknown) {
    const t = performance.now();
    try {
      fn(...args);
    } finally {
      const d = performance.now() - t;
      calls++;
      ms += d;
      longest = Math.max(longest, d);
    }
  });
}, original) as typeof setImmediate;

process.on('exit', () => {
  const wall = performance.now() - t0;
  process.stderr.write(`setImmediate callbacks: ${calls} in ${wall.toFixed(0)} ms, ${ms.toFixed(1)} ms inside them (mean ${(1000 * ms / Math.max(calls, 1)).toFixed(1)} µs, longest ${longest.toFixed(2)} ms)\n`);
});

// The pages' side of the CPU worker (cpu-worker.ts): runs a registry operation off the page's thread.
import type { Image } from '../src/core/image.js';
import type { OpResult, Timings } from '../src/core/timings.js';
import type { ChosenFile } from './file-params.js';

type Reply = { id: number; output?: Image; timings?: Timings; error?: string };

/** A function running an operation in a new CPU worker: the worker's output and timings, or its error. */
export function cpuRunner(): (op: string, params: Record<string, unknown>, files: Record<string, ChosenFile>, img: Image) => Promise<OpResult<Image>> {
  const worker = new Worker(new URL('./cpu-worker.js', import.meta.url), { type: 'module' });
  const pending = new Map<number, (m: Reply) => void>();
  let nextId = 0;
  worker.onmessage = (e: MessageEvent<Reply>) => { pending.get(e.data.id)?.(e.data); pending.delete(e.data.id); };
  return (op, params, files, img) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (m) => (m.error ? reject(new Error(m.error)) : resolve({ output: m.output!, timings: m.timings! })));
    worker.postMessage({ id, op, params, files, image: { data: img.data, shape: img.shape, channels: img.channels, geometry: img.geometry } });
  });
}

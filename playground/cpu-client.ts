// The pages' side of the CPU worker (cpu-worker.ts): runs a registry operation, or a pipeline, off the page's thread.
import type { Image } from '../src/browser.js';
import type { OpResult, Timings } from '../src/browser.js';
import type { Stage } from './chain.js';
import type { ChosenFile } from './file-params.js';

type Reply = { id: number; output?: Image; timings?: Timings; stages?: Stage[]; error?: string };
/** What the worker runs: an operation with its parameters and chosen files, or a pipeline's text. */
export type WorkerRequest = { op: string; params: Record<string, unknown>; files: Record<string, ChosenFile> } | { chain: string };

/** A function running a request on an image in a new CPU worker: the worker's output, timings and stages, or its error. */
export function workerClient(): (req: WorkerRequest, img: Image) => Promise<OpResult<Image> & { stages?: Stage[] }> {
  const worker = new Worker(new URL('./cpu-worker.js', import.meta.url), { type: 'module' });
  const pending = new Map<number, (m: Reply) => void>();
  let nextId = 0;
  worker.onmessage = (e: MessageEvent<Reply>) => { pending.get(e.data.id)?.(e.data); pending.delete(e.data.id); };
  return (req, img) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (m) => (m.error ? reject(new Error(m.error)) : resolve({ output: m.output!, timings: m.timings!, stages: m.stages })));
    worker.postMessage({ id, ...req, image: { data: img.data, shape: img.shape, channels: img.channels, geometry: img.geometry } });
  });
}

/** A function running an operation in a new CPU worker (the volume page's form of workerClient). */
export function cpuRunner(): (op: string, params: Record<string, unknown>, files: Record<string, ChosenFile>, img: Image) => Promise<OpResult<Image>> {
  const call = workerClient();
  return (op, params, files, img) => call({ op, params, files }, img);
}

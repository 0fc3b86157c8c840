// Worker-thread side of GpuLanes: one GPU device per thread, whole images through it — read and decode, upload,
// the operation's kernels, download as a view of mapped memory, encode straight from that view, atomic write.
import { parentPort, workerData } from 'node:worker_threads';
import type { Image } from '../core/image.js';
import { now } from '../core/timings.js';
import { COMMANDS, type OpCommand } from '../cli/commands.js';
import { readImage, writeImage, type ReadOptions, type WriteOptions } from '../io/index.js';
import { inlinePool } from '../ops/tasks.js';
import { createNodeGpuContext } from './gpu.js';

interface LaneData { command: string; params: Record<string, unknown>; read: ReadOptions; write: WriteOptions; adapter?: string; backend?: string }
const data = workerData as LaneData;
const cmd = COMMANDS[data.command] as OpCommand<unknown>;
const gpuReady = createNodeGpuContext({ adapter: data.adapter, backend: data.backend }).catch((e: Error) => e);

parentPort!.on('message', async (job: { id: number; input: string; output: string }) => {
  try {
    const gpu = await gpuReady;
    if (gpu instanceof Error) throw gpu;
    const t0 = now();
    const img = await readImage(job.input, { ...data.read, gray: !cmd.colour });
    const t1 = now();
    const r = await cmd.run(img, data.params, { pool: inlinePool, gpu, profile: false, view: true }, {});
    const t2 = now();
    try {
      if (cmd.write) await cmd.write(job.output, r.output, data.write);
      else await writeImage(job.output, r.output as Image, data.write);
    } finally {
      r.release?.();
    }
    parentPort!.postMessage({ id: job.id, ok: true, timings: r.timings, read: t1 - t0, op: t2 - t1, write: now() - t2 });
  } catch (e) {
    const err = e as Error;
    parentPort!.postMessage({ id: job.id, ok: false, name: err.name, message: err.message });
  }
});

import { acquire, type Execution } from '../context.js';
import { batch } from './api.js';
import { asImgpuError, eventToWire, toWire } from './events.js';
import { ORPHAN_GRACE_S, type FromChild, type ToChild } from './shard.js';

// A child process of a batch split over processes (shard.ts spawns this file): it waits for its shard over the IPC
// channel, acquires its own devices, runs the shard through batch() and sends everything back; it writes nothing
// to stdout or stderr itself. An 'abort' from the parent — or the parent gone (the channel closed) — stops it as an
// AbortSignal stops a batch: no image started after it, those in flight written whole.

const send = (m: FromChild) => new Promise<void>((resolve) => (process.connected ? process.send!(m, undefined, {}, () => resolve()) : resolve()));

process.once('message', (m: ToChild) => {
  if (m.type === 'start') void runShard(m).finally(() => process.connected && process.disconnect());
});

async function runShard({ steps, options, devices }: Extract<ToChild, { type: 'start' }>): Promise<void> {
  const controller = new AbortController();
  let finished = false;
  process.on('message', (m: ToChild) => m.type === 'abort' && controller.abort());
  process.once('disconnect', () => {
    if (finished) return;
    controller.abort();
    // A read that never ends (a FIFO, a hung mount) must not keep an orphan alive.
    setTimeout(() => process.exit(70), ORPHAN_GRACE_S * 1000).unref();
  });
  let exec: Execution | undefined;
  try {
    const flags = new Map(Object.entries({ adapter: devices.adapter, backend: devices.backend, threads: devices.threads }).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as const])));
    exec = await acquire(devices.device, flags);
    for (const text of exec.warnings) await send({ type: 'event', event: { type: 'note', code: 'IMGPU_DEVICE', key: text, text } });
    const run = batch(steps, {
      ...options, gpu: exec.gpu, pool: exec.pool, compare: exec.cpu && exec.gpu !== undefined, cpuFallback: (options.cpuFallback as boolean | undefined) ?? exec.auto,
      signal: controller.signal, record: (key, record) => void send({ type: 'record', key, record }),
    });
    for await (const e of run) await send({ type: 'event', event: eventToWire(e) });
    await send({ type: 'summary', summary: await run.done });
  } catch (e) {
    await send({ type: 'error', error: toWire(asImgpuError(e)) });
  } finally {
    finished = true;
    await exec?.close();
  }
}

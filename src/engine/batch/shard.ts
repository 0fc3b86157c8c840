import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ImgpuError } from '../../core/errors.js';
import { now } from '../../core/timings.js';
import type { StepsSpec } from '../commands.js';
import type { DeviceChoice } from '../context.js';
import { onceEach } from '../notes.js';
import { BatchRecords, type OutputRecord } from '../records.js';
import { eventFromWire, fromWire, type BatchEvent, type BatchResult, type WireError, type WireEvent } from './events.js';
import { noImages, pending, plan, prepareOutputFolder, saveRecords, type BatchOptions as PlanOptions } from './plan.js';
import { mergeSummaries, type BatchSummary } from './report.js';

// A batch split over child processes (imgpu/batch's `processes`, the CLI's --jobs): each child runs one shard of
// the batch through batch() (child.ts) and sends its events, its outputs' records and its summary back over the IPC
// channel; this process keeps the folder's records, passes the events on as one batch's, says each note once,
// and merges the summaries. Its shard and options reach a child as an IPC message, never through the environment.

/** The child entry (dist/src/engine/batch/child.js, beside this module): the package's own file wherever it is imported from. */
const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));

/** Seconds a child whose parent is gone (the IPC channel closed) has to finish its images in flight before it exits. */
export const ORPHAN_GRACE_S = 5;

/** How a child acquires its devices (engine/context.ts acquire: the CLI's --device, --adapter, --backend, --threads). */
export interface ChildDevices {
  device: DeviceChoice;
  adapter?: string;
  backend?: string;
  threads: number;
}

/** What the parent sends a child: first the batch (plain data: `options` are batch()'s less devices, signal and sink), then perhaps 'abort'. */
export type ToChild =
  | { type: 'start'; steps: StepsSpec; options: Record<string, unknown> & { inputs: string[]; out: string; shard: { index: number; count: number } }; devices: ChildDevices }
  | { type: 'abort' };

/** What a child sends: its events, its outputs' records, then its summary — or the error that stopped it before any image. */
export type FromChild =
  | { type: 'event'; event: WireEvent }
  | { type: 'record'; key: string; record: OutputRecord }
  | { type: 'summary'; summary: BatchResult }
  | { type: 'error'; error: WireError };

/** A batch to split over processes, as api.ts resolved it. */
export interface ProcessesRun {
  name: string;
  steps: StepsSpec;
  inputs: string[];
  out: string;
  /** batch()'s options for every child (plain data) */
  options: Record<string, unknown>;
  count: number;
  devices: Omit<ChildDevices, 'threads'> & { threads?: number };
  plan: PlanOptions;
  signal?: AbortSignal;
  failFast: boolean;
}

/** One child's end: its summary, or why it has none. */
interface ChildEnd {
  code: number;
  summary?: BatchResult;
  error?: ImgpuError;
  stderr: string;
}

/**
 * Runs the batch in `r.count` processes, image i in process i mod count, each with its own GPU device, main thread,
 * CPU pool and codec threads (the cores divided between them): one process's main thread sets the pace of a GPU
 * batch (copies through mapped memory and Dawn's polling run there); several share the codec work of one folder
 * the way a process pool does. Abort (signal, failFast) is sent to every child: each finishes its images in
 * flight. A child that ends without its summary rejects with its typed error, or one naming it.
 */
export async function runInProcesses(r: ProcessesRun, emit: (e: BatchEvent) => void): Promise<BatchResult> {
  const all = await plan(r.inputs, r.out, r.plan);
  if (all.length === 0) throw noImages(r.inputs, r.plan);
  await prepareOutputFolder(r.out);
  const records = await BatchRecords.open(r.out);
  const total = (await pending(all, records, r.plan)).length;
  const cores = availableParallelism();
  const threads = r.devices.threads ?? Math.max(1, Math.floor(Math.min(16, cores) / r.count));
  const codecThreads = (r.options.codecThreads as number | undefined) ?? Math.max(1, Math.floor((cores - r.count) / r.count));
  const note = onceEach((n) => emit({ type: 'note', ...n }));
  const tallies = Array.from({ length: r.count }, () => ({ processed: 0, failed: 0, bytes: 0 }));
  const sum = (k: 'processed' | 'failed' | 'bytes') => tallies.reduce((a, t) => a + t[k], 0);
  const t0 = now();
  emit({ type: 'progress', processed: 0, failed: 0, total, bytes: 0 });
  const children: ChildProcess[] = [];
  const abortAll = () => {
    for (const c of children) if (c.connected) c.send({ type: 'abort' } satisfies ToChild, () => undefined);
  };
  /** A child's event, passed on as the batch's: progress added up over the children, notes said once. */
  const onEvent = (index: number, e: BatchEvent) => {
    if (e.type === 'progress') {
      tallies[index] = { processed: e.processed, failed: e.failed, bytes: e.bytes };
      emit({ type: 'progress', processed: sum('processed'), failed: sum('failed'), total, bytes: sum('bytes') });
    } else if (e.type === 'note') note(e);
    else emit(e);
    if (e.type === 'failed' && r.failFast) abortAll();
  };
  const ends = Array.from({ length: r.count }, (_, index) => {
    const child = spawn(process.execPath, [CHILD], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced',
      // libuv's pool size is read when it starts (bin/imgpu.js sets it for a batch; a library caller may not have).
      env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? String(Math.max(4, Math.min(16, cores))) },
    });
    children.push(child);
    return childEnd(child, index, records, onEvent, {
      type: 'start', steps: r.steps, devices: { ...r.devices, threads },
      options: { ...r.options, codecThreads, inputs: r.inputs, out: r.out, shard: { index, count: r.count } },
    });
  });
  r.signal?.addEventListener('abort', abortAll);
  if (r.signal?.aborted) abortAll();
  let results: ChildEnd[];
  try {
    results = await Promise.all(ends);
  } finally {
    r.signal?.removeEventListener('abort', abortAll);
    await saveRecords(records, note);
  }
  const broken = results.findIndex((e) => !e.summary);
  if (broken >= 0) throw brokenChild(results[broken], broken, r.count);
  const parts = results.map((e) => e.summary!);
  const summary: BatchSummary = { ...mergeSummaries(r.name, parts, (now() - t0) / 1000), processes: r.count };
  return r.signal?.aborted && parts.some((p) => p.aborted) ? { ...summary, aborted: true } : summary;
}

/** Starts a child on its shard and resolves when it has ended, its messages handed on as they come. */
function childEnd(child: ChildProcess, index: number, records: BatchRecords, onEvent: (index: number, e: BatchEvent) => void, start: ToChild): Promise<ChildEnd> {
  return new Promise((resolve) => {
    const end: ChildEnd = { code: 0, stderr: '' };
    // Kept for the error when it ends without a summary (a crash); the library writes nothing of it to stderr.
    child.stderr!.on('data', (d: Buffer) => (end.stderr = (end.stderr + d.toString()).slice(-2000)));
    child.on('message', (m: FromChild) => {
      if (m.type === 'event') onEvent(index, eventFromWire(m.event));
      else if (m.type === 'record') records.add(m.key, m.record);
      else if (m.type === 'summary') end.summary = m.summary;
      else end.error = fromWire(m.error);
    });
    child.on('error', (e) => (end.error ??= new ImgpuError(`cannot start batch process ${index + 1}: ${e.message}`)));
    child.on('close', (code) => resolve({ ...end, code: code ?? 70 }));
    child.send(start, () => undefined);
  });
}

/** Why a child gave no summary: the typed error it sent (no GPU, a bad option), or its exit (a crash), as an error. */
function brokenChild(e: ChildEnd, index: number, count: number): ImgpuError {
  if (e.error) return e.error;
  const said = e.stderr.trim() ? `: ${e.stderr.trim().split('\n').slice(-3).join(' | ')}` : '';
  const error = new ImgpuError(`batch process ${index + 1} of ${count} ended with exit code ${e.code} before finishing its share${said}; rerun to complete it`);
  Object.defineProperty(error, 'exitCode', { value: e.code || 70 });
  return error;
}

import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { now } from '../../core/timings.js';
import { PARENT_ENV } from '../../node/runtime.js';
import { BatchRecords, type OutputRecord } from '../records.js';
import { noImages, pending, plan, prepareOutputFolder, saveRecords, type BatchOptions } from './plan.js';
import { mergeSummaries, Progress, report, type BatchSummary } from './report.js';

// `--jobs N`: one batch shared by N child processes, their progress, records and summaries merged into one.

/**
 * The package's own launcher (bin/imgpu.js, from dist/src/engine/batch/), which runs the shards: not whatever script
 * started this process (process.argv[1]: a user's program calling the engine, a test runner).
 */
const LAUNCHER = fileURLToPath(new URL('../../../../bin/imgpu.js', import.meta.url));

/** Environment variable that makes a process run shard k of n of a batch (set by runBatchInProcesses). */
const SHARD_ENV = 'IMGPU_BATCH_SHARD';

/** The shard this process runs of a --jobs batch (k of n), or undefined in a process of its own. */
export function shardOf(): { k: number; n: number } | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(process.env[SHARD_ENV] ?? '');
  return m ? { k: Number(m[1]), n: Number(m[2]) } : undefined;
}

/**
 * A note a process says once (a path not available, say), from a shard: sent to the parent, which says each key
 * once for the whole batch, as a batch in one process does. False outside a shard (the caller says it itself).
 */
export function noteToParent(key: string, text: string): boolean {
  if (!shardOf()) return false;
  process.stdout.write(`${JSON.stringify({ note: { key, text } })}\n`);
  return true;
}

/**
 * `--jobs N`: the batch split over N processes, each with its own GPU device, main thread, CPU pool and codec
 * threads (the cores divided between them), image i going to process i mod N. One process's main thread sets the
 * pace of a GPU batch (copies through mapped memory and Dawn's polling run there); several share the codec work
 * of one folder the way a process pool does. The children report progress and a summary on stdout; the parent
 * shows one progress line and one summary, and its exit code covers them all.
 */
export async function runBatchInProcesses(name: string, inputs: string[], outDir: string, o: BatchOptions, jobs: number, argv: string[], threads?: number): Promise<number> {
  const all = await plan(inputs, outDir, o);
  if (all.length === 0) throw noImages(inputs, o);
  await prepareOutputFolder(outDir);
  // The children report each output they write; this process keeps the folder's records.
  const records = await BatchRecords.open(outDir);
  const total = (await pending(all, records, o)).length;
  const cores = availableParallelism();
  const perThreads = threads ?? Math.max(1, Math.floor(Math.min(16, cores) / jobs));
  const perCodecs = Math.max(1, Math.floor((cores - jobs) / jobs));
  const t0 = now();
  const progress = new Progress(total, { quiet: o.quiet || o.json });
  const done = new Array<number>(jobs).fill(0), failed = new Array<number>(jobs).fill(0), bytes = new Array<number>(jobs).fill(0);
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
  const notesSaid = new Set<string>();
  const children = Array.from({ length: jobs }, (_, k) => new Promise<{ code: number; summary?: BatchSummary }>((resolve) => {
    const child = spawn(process.execPath, [LAUNCHER, ...argv, '--json', '--quiet', ...(threads ? [] : ['--threads', String(perThreads)])], {
      // With an IPC channel and PARENT_ENV the child ends when this process does, even by SIGKILL (endWithParent).
      env: { ...process.env, [SHARD_ENV]: `${k}/${jobs}`, IMGPU_CODEC_THREADS: String(perCodecs), [PARENT_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    let summary: BatchSummary | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { progress?: number; failed?: number; bytes?: number; record?: OutputRecord & { key: string }; note?: { key: string; text: string } } & Partial<BatchSummary>;
        if (msg.note) {
          if (!notesSaid.has(msg.note.key)) process.stderr.write(`${msg.note.text}\n`);
          notesSaid.add(msg.note.key);
        } else if (msg.record) {
          const { key, ...record } = msg.record;
          records.add(key, record);
        } else if (msg.progress !== undefined) {
          done[k] = msg.progress;
          failed[k] = msg.failed ?? 0;
          bytes[k] = msg.bytes ?? 0;
          progress.update(sum(done), sum(failed), sum(bytes));
        } else if (msg.processed !== undefined) summary = msg as BatchSummary;
      } catch {
        process.stdout.write(`${line}\n`);
      }
    });
    child.on('close', (code) => resolve({ code: code ?? 70, summary }));
  }));
  const results = await Promise.all(children);
  progress.update(sum(done), sum(failed), sum(bytes), true);
  await saveRecords(records);
  const broken = results.map((r, k) => ({ ...r, k })).filter((r) => !r.summary);
  for (const b of broken) process.stderr.write(`imgpu: batch process ${b.k + 1} of ${jobs} ended with exit code ${b.code} before finishing its share; rerun to complete it\n`);
  const parts = results.flatMap((r) => (r.summary ? [r.summary] : []));
  const summary: BatchSummary = { ...mergeSummaries(name, parts, (now() - t0) / 1000), processes: jobs };
  if (!o.json) for (const f of summary.failed) process.stderr.write(`imgpu: skipped ${f.file}: ${f.message}\n`);
  const code = report(summary, o.json);
  return broken.length ? broken[0].code || 70 : code;
}


/**
 * The GPU pipelines a single-image command used, remembered between runs (issue 40 item 5): its plans ask for their
 * pipelines one family after another as each is first used (a JPEG → equalize → JPEG run on the GPU: 17 pipelines
 * in 8 rounds), and Dawn compiles pipelines asked for together side by side — on lavapipe the 17 took 756–792 ms all
 * at once against 1105–1478 one after another (bench/dawn-startup.ts). So a run remembers what it asked for, in a
 * file named by the command, its parameters, the input and output types and the adapter, and the next such run asks
 * for all of them as soon as its device exists (GpuContext.prefetchPipelines), while it reads its input. The file
 * only saves time: a missing, unreadable or stale one costs nothing but compiling what was not needed.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { GpuContext, PipelineRequest } from '../core/gpu/context.js';
import { InvalidArgumentError } from '../core/errors.js';

/** --pipeline-cache's default: a folder of this user's in the temporary folder (as V8's compile cache). */
export function defaultPipelineCacheDir(): string {
  return join(tmpdir(), `imgpu-pipelines-${process.getuid?.() ?? 'user'}`);
}

/** --pipeline-cache <dir|off>: the folder, or undefined for off. */
export function pipelineCacheOption(flags: Map<string, string>): string | undefined {
  const v = flags.get('pipeline-cache');
  if (v === 'off') return undefined;
  if (v === '') throw new InvalidArgumentError('--pipeline-cache needs a folder, or off');
  return v ?? defaultPipelineCacheDir();
}

/** What names a run's pipelines: everything that chooses its kernels. */
export interface PipelineRunKey {
  command: string;
  params: Record<string, unknown>;
  input: string;
  output: string | undefined;
  options: Record<string, unknown>;
}

/** The file of `key`'s pipelines on `ctx`'s adapter, in `dir`. */
export function pipelineCacheFile(dir: string, ctx: GpuContext, key: PipelineRunKey): string {
  const named = { ...key, input: extname(key.input).toLowerCase(), output: key.output && extname(key.output).toLowerCase(), adapter: ctx.adapter };
  return join(dir, `${createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 32)}.json`);
}

/** Whether `dir` is a folder only its owner (this user) can write: other users' files are not compiled. */
function ownFolder(dir: string): boolean {
  const s = statSync(dir, { throwIfNoEntry: false });
  return !!s && s.isDirectory() && (process.getuid === undefined || s.uid === process.getuid()) && (s.mode & 0o022) === 0;
}

function isRequest(r: unknown): r is PipelineRequest {
  const x = r as PipelineRequest;
  return typeof x?.label === 'string' && typeof x.code === 'string' && typeof x.entryPoint === 'string' && typeof x.constants === 'object' && x.constants !== null;
}

/** The pipelines remembered in `file`, asked for at once on `ctx`; how many (0 where there is no usable file). */
export function prefetchRemembered(ctx: GpuContext, dir: string, file: string): number {
  if (!ownFolder(dir)) return 0;
  let requests: unknown;
  try {
    requests = (JSON.parse(readFileSync(file, 'utf8')) as { pipelines?: unknown }).pipelines;
  } catch {
    return 0;
  }
  if (!Array.isArray(requests) || !requests.every(isRequest)) return 0;
  ctx.prefetchPipelines(requests);
  return requests.length;
}

/** Remembers the pipelines `ctx` was asked for in `file` (written whole, then renamed); a failure only loses time. */
export function rememberPipelines(ctx: GpuContext, dir: string, file: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!ownFolder(dir)) return;
    const part = `${file}.${process.pid}.part`;
    writeFileSync(part, JSON.stringify({ pipelines: ctx.pipelineRequests() }));
    renameSync(part, file);
  } catch {
    // A cache: not writable (a read-only temporary folder) means the next run compiles as this one did.
  }
}

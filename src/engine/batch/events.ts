import * as errors from '../../core/errors.js';
import { ImgpuError } from '../../core/errors.js';
import type { Note } from '../notes.js';
import type { BatchSummary } from './report.js';
import type { ImagePath } from './run.js';

// What a batch reports as it runs (imgpu/batch's events), and how an event crosses from a batch's child process to
// its parent (shard.ts): as structured-clone data, its error rebuilt as the same typed error on the other side.

/** What a batch reports as it runs. */
export type BatchEvent =
  /** an image written: `output` the file (or the sink's id), `path` where it ran, `ms` from its read to its output written */
  | { type: 'done'; id: string; output: string; path: ImagePath; ms: number }
  /** an input whose output is up to date by the output folder's records (not with `overwrite`) */
  | { type: 'skipped'; id: string; output: string }
  /** an image that failed (the others go on): a typed error — a damaged file is UnsupportedFormatError, a bug an ImgpuError saying so */
  | { type: 'failed'; id: string; error: ImgpuError }
  /** after each image: done and failed so far of `total` (absent for iterable inputs: not known ahead), input bytes read */
  | { type: 'progress'; processed: number; failed: number; total?: number; bytes: number }
  /** what the engine says once per `key` rather than per image (a GPU JPEG path fallback…): `code` stable (NoteCode), `text` the CLI's line */
  | ({ type: 'note' } & Note);

/** A batch's summary (the CLI's --json), `aborted` when its signal stopped it. */
export type BatchResult = BatchSummary & { aborted?: true };

/** A thrown error as a failed event carries it: typed; anything else is a bug, said as one (exit 70 in the CLI). */
export function asImgpuError(e: unknown): ImgpuError {
  if (e instanceof ImgpuError) return e;
  const bug = new ImgpuError(`internal error: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  Object.defineProperty(bug, 'exitCode', { value: 70 });
  return bug;
}

/** An ImgpuError as data (its class by name, its code and exit code: a bug's differ from its class's). */
export interface WireError {
  name: string;
  message: string;
  code: string;
  exitCode: number;
}

export const toWire = (e: ImgpuError): WireError => ({ name: e.name, message: e.message, code: e.code, exitCode: e.exitCode });

/** The error of `w` as its class (core/errors.ts), so that `instanceof` holds in the parent as in the child. */
export function fromWire(w: WireError): ImgpuError {
  const named = (errors as Record<string, unknown>)[w.name];
  const Class = typeof named === 'function' && (named === ImgpuError || named.prototype instanceof ImgpuError) ? (named as typeof ImgpuError) : ImgpuError;
  const e = new Class(w.message);
  for (const key of ['code', 'exitCode'] as const) if (e[key] !== w[key]) Object.defineProperty(e, key, { value: w[key] });
  return e;
}

/** An event as a child sends it: a failed event's error as data. */
export type WireEvent = Exclude<BatchEvent, { type: 'failed' }> | { type: 'failed'; id: string; error: WireError };

export const eventToWire = (e: BatchEvent): WireEvent => (e.type === 'failed' ? { ...e, error: toWire(e.error) } : e);
export const eventFromWire = (e: WireEvent): BatchEvent => (e.type === 'failed' ? { ...e, error: fromWire(e.error) } : e);

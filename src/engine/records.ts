import { createReadStream } from 'node:fs';
import { appendFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { FileAccessError } from '../core/errors.js';
import { join, relative, resolve, sep } from 'node:path';
import { writeAtomically } from '../io/index.js';

/**
 * Batch mode's record of an output folder, `<out>/.imgpu-batch.json`: for each output, the input it was made from
 * (absolute path, size, modification time), the recipe (operation, parameters, format and codec options: see
 * batchRecipe) and the output file as written (size, modification time). An output is up to date only while all
 * of them still hold: another parameter, a changed input, or an output replaced or touched since makes it due
 * again. A missing or unreadable record makes outputs due (redone, never wrongly skipped). The file is hidden,
 * so a folder scan never takes it for an image.
 *
 * The file is JSON lines (version 2): a header line, then one record a line, a later line for a key replacing an
 * earlier one. A run appends its records as it writes outputs and keeps none of them: the whole file was rewritten
 * from memory every 2 s before, which held every record of the run and a parse and a serialization of the whole file
 * at once — the part of a batch's memory that grew with its count (docs/memory.md). A line torn by a crash is
 * skipped (its output is redone). A version 1 file (one JSON object) is read and rewritten as version 2.
 */
export const RECORDS_FILE = '.imgpu-batch.json';
const VERSION = 2;
const HEADER = `${JSON.stringify({ imgpu_batch_records: VERSION })}\n`;
/** Lines of this run kept before they are appended, at the latest (besides every 2 s). */
const APPEND_EVERY = 256;

export interface OutputRecord {
  input: string;
  size: number;
  mtimeMs: number;
  recipe: string;
  output: { size: number; mtimeMs: number };
}

/** What a record is checked against: one planned output of a batch. */
export interface RecordedJob {
  input: string;
  output: string;
  /** the output's name in the folder's records (its path relative to the output folder: recordKey) */
  key: string;
  /** the input's size and modification time (with its path: which input an output was made from) */
  bytes: number;
  mtimeMs: number;
}

/** An output's name in the record: its path relative to the output folder, with '/' on every platform. */
export function recordKey(outDir: string, output: string): string {
  return relative(outDir, output).split(sep).join('/');
}

/** A record as one line of the file. */
const recordLine = (key: string, r: OutputRecord) => `${JSON.stringify({ key, ...r })}\n`;

/** What the file holds: its records by key (the last line of a key), and how many record lines it has. */
interface Read {
  records: Map<string, OutputRecord>;
  lines: number;
  /** a version 1 file, to be rewritten as version 2 before lines are appended to it */
  old: boolean;
}

/** Reads the file line by line (not whole: a folder's records may be megabytes); none or unreadable: no records. */
async function readRecords(path: string): Promise<Read> {
  const read: Read = { records: new Map(), lines: 0, old: false };
  // One string per recipe: every record of a run holds the same one.
  const recipes = new Map<string, string>();
  try {
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (read.lines === 0 && line.startsWith('{"version":1')) return readVersion1(line);
      const r = parseLine(line);
      if (!r) continue;
      read.lines++;
      const recipe = recipes.get(r.record.recipe) ?? r.record.recipe;
      recipes.set(recipe, recipe);
      read.records.set(r.key, { ...r.record, recipe });
    }
  } catch {
    return { records: new Map(), lines: 0, old: false }; // none yet, or unreadable: every output is due
  }
  return read;
}

/** A version 1 file: one JSON object `{ version: 1, outputs: { key: record } }`. */
function readVersion1(text: string): Read {
  try {
    const j = JSON.parse(text) as { version?: number; outputs?: Record<string, OutputRecord> };
    const outputs = j.version === 1 && j.outputs && typeof j.outputs === 'object' ? j.outputs : {};
    return { records: new Map(Object.entries(outputs)), lines: 0, old: true };
  } catch {
    return { records: new Map(), lines: 0, old: true };
  }
}

/** A record line's key and record; undefined for the header, a torn line, or anything else. */
function parseLine(line: string): { key: string; record: OutputRecord } | undefined {
  try {
    const { key, ...record } = JSON.parse(line) as OutputRecord & { key?: unknown };
    return typeof key === 'string' && typeof record.recipe === 'string' && record.output ? { key, record } : undefined;
  } catch {
    return undefined;
  }
}

export class BatchRecords {
  /** Lines of this run not appended yet. */
  private pending: string[] = [];
  private saving: Promise<void> | undefined;
  private savedAt = Date.now();

  private constructor(private readonly path: string, private readonly known: Map<string, OutputRecord>) {}

  /**
   * The folder's records. A version 1 file, or one in which lines replaced by later ones outnumber the records
   * (reruns append), is rewritten first (atomically: a record another run appends meanwhile may be lost, which
   * costs redoing that output).
   */
  static async open(outDir: string): Promise<BatchRecords> {
    const path = join(outDir, RECORDS_FILE);
    const read = await readRecords(path);
    if (read.old || read.lines > 2 * read.records.size + APPEND_EVERY) {
      const lines = [HEADER];
      for (const [key, r] of read.records) lines.push(recordLine(key, r));
      await writeAtomically(path, Buffer.from(lines.join(''))).catch(() => undefined); // not writable: save() says so
    }
    return new BatchRecords(path, read.records);
  }

  /** Whether `job`'s output exists as this recipe made it from this very input. */
  async upToDate(job: RecordedJob, recipe: string): Promise<boolean> {
    const r = this.known.get(job.key);
    if (!r || r.recipe !== recipe || r.input !== resolve(job.input) || r.size !== job.bytes || r.mtimeMs !== job.mtimeMs) return false;
    const out = await stat(job.output).catch(() => undefined);
    return out !== undefined && out.size === r.output.size && out.mtimeMs === r.output.mtimeMs;
  }

  /** The record of an output just written (stat of the file as it now is). */
  static async describe(job: RecordedJob, recipe: string): Promise<OutputRecord> {
    const out = await stat(job.output);
    return { input: resolve(job.input), size: job.bytes, mtimeMs: job.mtimeMs, recipe, output: { size: out.size, mtimeMs: out.mtimeMs } };
  }

  /**
   * Adds a record: appended to the file with the others of the last 2 s (so an interrupted run keeps most), or
   * sooner once APPEND_EVERY wait.
   */
  add(key: string, record: OutputRecord): void {
    this.pending.push(recordLine(key, record));
    if (!this.saving && (this.pending.length >= APPEND_EVERY || Date.now() - this.savedAt >= 2000)) void this.save().catch(() => undefined);
  }

  /**
   * Appends the records not appended yet (the header first where the file is new), in one write: lines appended by
   * another run into the same folder stay whole. Throws FileAccessError when it cannot be written (the lines are
   * kept for the next save).
   */
  async save(): Promise<void> {
    while (this.saving) await this.saving.catch(() => undefined);
    const lines = this.pending;
    this.pending = [];
    this.saving = (async () => {
      const fresh = await stat(this.path).then((s) => s.size === 0, () => true);
      if (!fresh && lines.length === 0) return;
      try {
        await appendFile(this.path, (fresh ? HEADER : '') + lines.join(''));
      } catch (e) {
        this.pending = lines.concat(this.pending);
        throw new FileAccessError(`cannot write ${this.path}: ${(e as Error).message}`);
      }
    })();
    try {
      await this.saving;
    } finally {
      this.saving = undefined;
      this.savedAt = Date.now();
    }
  }
}

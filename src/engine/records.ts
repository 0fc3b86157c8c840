import { readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { writeAtomically } from '../io/index.js';

/**
 * Batch mode's record of an output folder, `<out>/.imgpu-batch.json`: for each output, the input it was made from
 * (absolute path, size, modification time), the recipe (operation, parameters, format and codec options: see
 * batchRecipe) and the output file as written (size, modification time). An output is up to date only while all
 * of them still hold: another parameter, a changed input, or an output replaced or touched since makes it due
 * again. A missing or unreadable record makes outputs due (redone, never wrongly skipped). The file is hidden,
 * so a folder scan never takes it for an image.
 */
export const RECORDS_FILE = '.imgpu-batch.json';
const VERSION = 1;

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

async function readRecords(path: string): Promise<Record<string, OutputRecord>> {
  try {
    const j = JSON.parse(await readFile(path, 'utf8')) as { version?: number; outputs?: Record<string, OutputRecord> };
    return j.version === VERSION && j.outputs && typeof j.outputs === 'object' ? j.outputs : {};
  } catch {
    return {}; // none yet, or unreadable: every output is due
  }
}

export class BatchRecords {
  /** Records of this run, written over whatever the file holds when it is saved. */
  private readonly made: Record<string, OutputRecord> = {};
  private saving: Promise<void> | undefined;
  private savedAt = 0;

  private constructor(private readonly path: string, private readonly known: Record<string, OutputRecord>) {}

  static async open(outDir: string): Promise<BatchRecords> {
    const path = join(outDir, RECORDS_FILE);
    return new BatchRecords(path, await readRecords(path));
  }

  /** Whether `job`'s output exists as this recipe made it from this very input. */
  async upToDate(job: RecordedJob, recipe: string): Promise<boolean> {
    const r = this.known[job.key];
    if (!r || r.recipe !== recipe || r.input !== resolve(job.input) || r.size !== job.bytes || r.mtimeMs !== job.mtimeMs) return false;
    const out = await stat(job.output).catch(() => undefined);
    return out !== undefined && out.size === r.output.size && out.mtimeMs === r.output.mtimeMs;
  }

  /** The record of an output just written (stat of the file as it now is). */
  static async describe(job: RecordedJob, recipe: string): Promise<OutputRecord> {
    const out = await stat(job.output);
    return { input: resolve(job.input), size: job.bytes, mtimeMs: job.mtimeMs, recipe, output: { size: out.size, mtimeMs: out.mtimeMs } };
  }

  /** Adds a record; the file is saved at most every 2 s while a batch runs (so an interrupted run keeps most). */
  add(key: string, record: OutputRecord): void {
    this.made[key] = record;
    if (!this.saving && Date.now() - this.savedAt >= 2000) void this.save().catch(() => undefined);
  }

  /**
   * Writes the file atomically: what it holds now (another run into the same folder may have added records)
   * with this run's records over it. Throws FileAccessError when it cannot be written.
   */
  async save(): Promise<void> {
    while (this.saving) await this.saving.catch(() => undefined);
    this.saving = (async () => {
      const outputs = { ...(await readRecords(this.path)), ...this.made };
      await writeAtomically(this.path, Buffer.from(JSON.stringify({ version: VERSION, outputs })));
    })();
    try {
      await this.saving;
    } finally {
      this.saving = undefined;
      this.savedAt = Date.now();
    }
  }
}

// The engine's one-time notes: what it says once rather than per image (a JPEG path unavailable, work the GPU
// cannot hold run on the CPU, records that could not be saved). A batch run from code gets them as `note` events
// (imgpu/batch: the library writes nothing to stderr); the CLI's single-image commands print them, once per key.

/** A note: `code` a stable name for code to match, `key` what it is said once per, `text` the line the CLI prints. */
export interface Note {
  code: NoteCode;
  key: string;
  text: string;
}

/** The notes' codes (stable: documented in docs/batch.md). */
export type NoteCode =
  /** work of the GPU JPEG path (--jpeg gpu) done on the CPU instead: the same pixels and bytes */
  | 'IMGPU_JPEG_GPU_FALLBACK'
  /** work the GPU cannot hold even split (GpuLimitError) run on the CPU (cpuFallback) */
  | 'IMGPU_GPU_LIMIT_FALLBACK'
  /** the output folder's records could not be saved: the outputs are written, a rerun redoes them */
  | 'IMGPU_RECORDS_NOT_SAVED'
  /** how a batch process's devices were chosen (no GPU adapter, a software one left for the CPU) */
  | 'IMGPU_DEVICE';

export type NoteSink = (note: Note) => void;

/** A sink passing each (code, key) on once: a batch's, or the process's own for the CLI. */
export function onceEach(sink: NoteSink): NoteSink {
  const said = new Set<string>();
  return (n) => {
    const k = `${n.code}\0${n.key}`;
    if (said.has(k)) return;
    said.add(k);
    sink(n);
  };
}

/** Where notes go outside a batch (the CLI's single-image commands): stderr, once per key in the process. */
export const stderrNotes: NoteSink = onceEach((n) => console.error(n.text));

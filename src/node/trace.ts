/**
 * A batch's timeline, for finding what sets its pace: with IMGPU_TRACE=FILE every image's spans — read (file,
 * decode, upload: FileImages; within it file-read, entropy, coef-copy, decode-record for a JPEG decoded on the GPU), wait (the loop waiting for the next read), step (the command on it), keep (its
 * write), and once per batch `prepare` (the JPEG kernels' compilation, which a batch's first photos wait for) — are written to FILE as JSON lines {span, input, start, end} (ms since the batch began) when the process
 * ends. Off (and free) without the variable. bench/trace-summary.ts turns a trace into the concurrency of each span.
 */
import { writeFileSync } from 'node:fs';
import { now } from '../core/timings.js';

interface Span { span: string; input: string; start: number; end: number }

const file = process.env.IMGPU_TRACE;
const spans: Span[] = [];
const t0 = now();
if (file) process.on('exit', () => writeFileSync(file, spans.map((s) => JSON.stringify(s)).join('\n') + '\n'));

/** Runs `work`, recording it as span `span` of `input` when tracing (a function: the input known once it ends). */
export async function traced<T>(span: string, input: string | (() => string), work: () => Promise<T>): Promise<T> {
  if (!file) return work();
  const start = now() - t0;
  try {
    return await work();
  } finally {
    spans.push({ span, input: typeof input === 'string' ? input : input(), start, end: now() - t0 });
  }
}

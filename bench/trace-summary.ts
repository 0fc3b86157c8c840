/**
 * Summarizes a batch trace (IMGPU_TRACE=FILE, node/trace.ts): `node dist/bench/trace-summary.js FILE`.
 * Per span: how many, the median and 90th percentile duration, the total, and the mean number in progress over the
 * batch's wall clock (total ÷ wall) — the span the loop waits on (`wait`) and the spans that are always in progress
 * show where the pace is set.
 */
import { readFileSync } from 'node:fs';

interface Span { span: string; input: string; start: number; end: number }

const spans = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Span);
const wall = Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start));
const q = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
console.log(`${spans.length} spans over ${wall.toFixed(0)} ms`);
console.log('span            n   median ms   p90 ms   total ms   mean in progress');
for (const name of [...new Set(spans.map((s) => s.span))]) {
  const d = spans.filter((s) => s.span === name).map((s) => s.end - s.start);
  const total = d.reduce((a, b) => a + b, 0);
  console.log(`${name.padEnd(14)} ${String(d.length).padStart(4)} ${q(d, 0.5).toFixed(2).padStart(10)} ${q(d, 0.9).toFixed(2).padStart(8)} ${total.toFixed(0).padStart(10)} ${(total / wall).toFixed(2).padStart(10)}`);
}

/**
 * Summarizes V8 CPU profiles (`node --cpu-prof --cpu-prof-dir=DIR …`): `node dist/bench/prof-summary.js DIR [top]`.
 * Per profile (the main thread and each worker): sampled time, idle, garbage collection, the functions with the
 * most self time, and the functions with the most inclusive time (each counted once per sampled stack: what a call
 * and everything under it cost) — enough to see which thread sets a batch's pace, and which of its calls, in one
 * file a device run can bring back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 8);
const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
const keyOf = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;

/** The `top` entries of a time map, largest first, one line each. */
function print(title: string, times: Map<string, number>): void {
  console.log(`  ${title}:`);
  for (const [k, v] of [...times.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`   ${ms(v).padStart(8)}  ${k}`);
}

for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile')).sort()) {
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i];
    const key = keyOf(byId.get(id)!);
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = keyOf(byId.get(at)!);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    }
  });
  const busy = total - (self.get('(idle) :-1') ?? 0);
  console.log(`${f}: ${ms(total)} sampled, ${ms(busy)} not idle`);
  print('self', self);
  for (const k of ['(root) :-1', '(idle) :-1', '(program) :-1', '(garbage collector) :-1']) inclusive.delete(k);
  print('inclusive', inclusive);
}

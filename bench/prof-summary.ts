/**
 * Summarizes V8 CPU profiles (`node --cpu-prof --cpu-prof-dir=DIR …`): `node dist/bench/prof-summary.js DIR [top]`.
 * Per profile (the main thread and each worker): sampled time, idle, garbage collection, and the functions with the
 * most self time — enough to see which thread sets a batch's pace, in one file a device run can bring back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 8);
for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile')).sort()) {
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + p.timeDeltas[i]);
    total += p.timeDeltas[i];
  });
  const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
  const busy = total - (self.get('(idle) :-1') ?? 0);
  console.log(`${f}: ${ms(total)} sampled, ${ms(busy)} not idle`);
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`   ${ms(v).padStart(8)}  ${k}`);
}

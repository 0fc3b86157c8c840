/**
 * Each morphology pass alone, isolated (one call awaited, its kernels' own timestamps: what the roofline's
 * isolated column adds up), for schedules of the x and y passes: `node dist/bench/morph-isolated.js [--ks 3,51,101]
 * [--reps 15] [--out NAME] [--size 7680x4320] [--hold-clocks]`. The variant search of bench/morph.ts times 20 erosions in one compute
 * pass, where one pass's tail overlaps the next's start; isolated kernels pay their own ramp and tail, and a pass
 * of few long-running workgroups (the y pass) pays more of it. Picks the fastest x schedule and the fastest y
 * schedule at the largest k among those no slower at the other ks than the default (1 %), times the whole
 * erosion with both, and writes their fields to bench/results/NAME-best.json (IMGPU_MORPH_SCHEDULE, the context's variants.morphSchedule, for the
 * roofline) and every line to NAME.jsonl.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { GpuImage } from '../src/core/gpu/gpu-image.js';
import { kernelTotal } from '../src/core/timings.js';
import { createNodeGpuContext } from '../src/node/gpu.js';
import { OPERATIONS } from '../src/ops/registry.js';
import type { MorphSchedule } from '../src/ops/morph/gpu.js';
import { holdClocks, photoAt, warmUp } from './common.js';

const arg = (n: string, d: string) => { const i = process.argv.indexOf(`--${n}`); return i > 0 ? process.argv[i + 1] : d; };
const ks = arg('ks', '3,51,101').split(',').map(Number);
const reps = Number(arg('reps', '15'));
const name = arg('out', 'morph-isolated');
const [width, height] = arg('size', '7680x4320').split('x').map(Number);

type S = Partial<MorphSchedule>;
// x: words an invocation (lanes with their pixel on top).
const xs: S[] = [{}, { segX: 6 }, { segX: 8 }];
// y: rows an invocation and columns a workgroup, on unpacked lanes (pixel on top) and on packed words.
const ys: S[] = [{}, ...[16, 24, 32].flatMap((segY) => [32, 64].flatMap((segYCols) => [{ segY, segYCols }, { segY, segYCols, unpackY: false }]))];

async function main(): Promise<void> {
  const gpu = await createNodeGpuContext();
  const img = await photoAt(width, height);
  const hold = process.argv.includes('--hold-clocks') ? await holdClocks() : undefined;
  await warmUp(gpu, img);
  const dev = await GpuImage.upload(gpu, img);
  type Run = (src: unknown, params: Record<string, unknown>, on: Record<string, unknown>) => Promise<{ output: { release?: () => void }; timings: Parameters<typeof kernelTotal>[0] }>;
  const op = (OPERATIONS.morph as unknown as { run: Run }).run;
  const run = (r: { output: { release?: () => void }; timings: Parameters<typeof kernelTotal>[0] }) => { r.output.release?.(); return kernelTotal(r.timings); };
  const time = async (se: string, s: S): Promise<number> => {
    gpu.variants.morphSchedule = JSON.stringify(s);
    const t: number[] = [];
    for (let i = 0; i <= reps; i++) t.push(run(await op(dev, { op: 'erode', se }, { profile: false })));
    delete gpu.variants.morphSchedule;
    return t.slice(1).sort((a, b) => a - b)[reps >> 1];
  };
  const lines: string[] = [];
  const log = (o: Record<string, unknown>) => { const l = JSON.stringify(o); console.log(l); lines.push(l); };
  const pick = async (axis: 'x' | 'y', list: S[]): Promise<S> => {
    const ms = new Map<S, Record<number, number>>();
    for (const s of list) {
      const per: Record<number, number> = {};
      for (const k of ks) {
        per[k] = await time(axis === 'x' ? `rect:${k}x1` : `rect:1x${k}`, s);
        log({ axis, k, schedule: s, ms: per[k] });
      }
      ms.set(s, per);
    }
    const kMax = Math.max(...ks), base = ms.get(list[0])!;
    const ok = list.filter((s) => ks.every((k) => k === kMax || ms.get(s)![k] <= base[k] * 1.01));
    return ok.sort((a, b) => ms.get(a)![kMax] - ms.get(b)![kMax])[0];
  };
  const bx = await pick('x', xs), by = await pick('y', ys);
  const best = { ...bx, ...by };
  for (const s of [{}, best]) for (const k of ks) log({ axis: 'xy', k, schedule: s, ms: await time(`rect:${k}x${k}`, s) });
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${name}.jsonl`, lines.join('\n') + '\n');
  writeFileSync(`bench/results/${name}-best.json`, JSON.stringify(best));
  console.log(JSON.stringify({ best }));
  dev.release();
  hold?.release();
  gpu.destroy();
}

await main();

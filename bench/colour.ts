/**
 * The CPU path of colour (issue 40 item 2): OpenCV's colour conversions and colour CLAHE (YCrCb's Y, CLAHE, back) on a
 * camera-sized photo, imgpu's CPU path on 1 and N threads (native threads; and the JavaScript workers' fallback) against
 * cv2 on 1 and all its threads, in the same run; the outputs compared byte for byte.
 * `node dist/bench/colour.js [--size 4000x3000] [--runs 7] [--threads N] [--python /usr/bin/python3] [--out bench/results/colour-cpu.json]`
 * Each figure: median, min and max of `runs` timings after a warm-up; wall clock and the process's CPU time (all its
 * threads), for both: on a machine shared with other work the CPU time does not depend on what else runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { grayCpu, lumaCpu, withLumaCpu } from '../src/core/colour.js';
import { compareImages } from '../src/core/compare.js';
import type { CpuPool } from '../src/core/cpu/pool.js';
import { now } from '../src/core/timings.js';
import { readImage } from '../src/io/index.js';
import { NodeWorkerPool } from '../src/node/worker-pool.js';
import { clahe } from '../src/ops/clahe/index.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const size = arg('size', '4000x3000'), runs = Number(arg('runs', '7')), threads = Number(arg('threads', String(Math.min(availableParallelism(), 16))));
const python = arg('python', '/usr/bin/python3'), outPath = arg('out', 'bench/results/colour-cpu.json');

interface Spread { median: number; min: number; max: number; runs: number[] }
const spread = (xs: number[]): Spread => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1], runs: xs.map((x) => Math.round(x * 10) / 10) };
};

/** Wall clock and CPU time (this process, all its threads) of `runs` calls after a warm-up. */
async function timed(fn: () => Promise<unknown>): Promise<{ wall: Spread; cpu: Spread }> {
  await fn();
  const wall: number[] = [], cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage(), t0 = now();
    await fn();
    wall.push(now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall: spread(wall), cpu: spread(cpu) };
}

const dir = join(tmpdir(), 'imgpu-bench-colour');
mkdirSync(dir, { recursive: true });
const photoPath = join(dir, `astronaut-${size}.png`), cv2Out = join(dir, `cv2-clahe-${size}.png`);
const anchors = (): Record<string, unknown> => {
  const r = spawnSync(python, ['bench/colour_anchors.py', photoPath, size, String(runs), cv2Out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`colour_anchors.py: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};
const before = anchors();
const img = await readImage(photoPath);
const cv2Clahe = await readImage(cv2Out);
const y = await lumaCpu(img, new NodeWorkerPool(1));

const imgpu: Record<string, unknown> = {};
const pools: [string, CpuPool & { close(): Promise<void> }][] = [];
for (const n of [...new Set([1, threads])]) pools.push([`native${n}`, new NodeWorkerPool(n)]);
const js = new NodeWorkerPool(threads);
js.native = undefined;
pools.push([`jsWorkers${threads}`, js]);
for (const [name, pool] of pools) {
  const out = (await clahe(img, { pool, tiles: { width: 8, height: 8 }, clip: 2 })).output;
  imgpu[name] = {
    identicalToCv2: compareImages(out, cv2Clahe).identical,
    toYCrCb: await timed(() => lumaCpu(img, pool)),
    fromYCrCb: await timed(() => withLumaCpu(img, y, pool)),
    toGray: await timed(() => grayCpu(img, pool)),
    colourClahe: await timed(() => clahe(img, { pool, tiles: { width: 8, height: 8 }, clip: 2 })),
  };
  await pool.close();
}
const after = anchors();
const result = { size, runs, threads, machine: `${availableParallelism()} CPUs`, date: new Date().toISOString(), imgpu, cv2: { before, after } };
mkdirSync(dirname(outPath), { recursive: true });
writeFileSync(outPath, JSON.stringify(result, null, 1));
const med = (x: unknown): string => { const t = x as { wall: Spread; cpu: Spread }; return `${t.wall.median.toFixed(1)} (cpu ${t.cpu.median.toFixed(1)})`; };
for (const [name, r] of Object.entries(imgpu)) {
  const o = r as Record<string, unknown>;
  console.log(`imgpu ${name}: toYCrCb ${med(o.toYCrCb)} ms, fromYCrCb ${med(o.fromYCrCb)}, toGray ${med(o.toGray)}, colour CLAHE ${med(o.colourClahe)} (identical to cv2: ${String(o.identicalToCv2)})`);
}
for (const [when, a] of [['before', before], ['after', after]] as const) {
  for (const [k, v] of Object.entries(a)) {
    if (!k.startsWith('threads')) continue;
    const m = (x: { wall: number[]; cpu: number[] }): string => `${spread(x.wall).median.toFixed(1)} (cpu ${spread(x.cpu).median.toFixed(1)})`;
    const t = v as Record<string, { wall: number[]; cpu: number[] }>;
    console.log(`cv2 ${k} (${when}): toYCrCb ${m(t.toYCrCb)} ms, fromYCrCb ${m(t.fromYCrCb)}, toGray ${m(t.toGray)}, colour CLAHE ${m(t.colourClahe)}`);
  }
}

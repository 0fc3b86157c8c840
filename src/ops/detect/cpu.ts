import { forChunks, shareable, type CpuPool } from '../../core/cpu/pool.js';
import type { CompiledClassifier } from './compiled.js';
import { detectRowsTask, pyramidTask } from './cpu-kernels.js';
import type { Level } from './pyramid.js';

/** A window the classifier accepted: its pyramid level, position in that level, and final sum. */
export interface RawHit {
  level: number;
  x: number;
  y: number;
  score: number;
}

/** Where each level's integral image lies in one packed buffer (offsets, strides), and its total size. */
export function integralLayout(levels: Level[]): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let total = 0;
  for (const l of levels) {
    offsets.push(total);
    total += (l.width + 1) * (l.height + 1);
  }
  return { offsets, total };
}

function sharedInt32(n: number, pool: CpuPool): Int32Array {
  return pool.size > 1 && typeof SharedArrayBuffer !== 'undefined' ? new Int32Array(new SharedArrayBuffer(4 * n)) : new Int32Array(n);
}

/**
 * The CPU reference detector: the integral pyramid (levels spread over the pool), then every window row of
 * every level scanned with OpenCV's rule. Hits come back ordered by level, row, x; `rejected[i]` counts the
 * windows weak classifier i rejected (the last entry: windows accepted).
 */
export async function detectCpu(gray: Uint8Array, W: number, H: number, cc: CompiledClassifier, levels: Level[], pool: CpuPool): Promise<{ hits: RawHit[]; rejected: Uint32Array; pyramidMs: number; scanMs: number }> {
  const t0 = performance.now();
  const { offsets, total } = integralLayout(levels);
  const ii = sharedInt32(total, pool);
  const table = sharedInt32(4 * levels.length, pool);
  levels.forEach((l, i) => table.set([offsets[i], l.width + 1, l.width, l.height], 4 * i));
  const src = shareable(pool, gray);
  // Levels shrink geometrically: contiguous ranges would give the first task most of the work, so task t takes
  // levels t, t + P, t + 2P, …
  const P = Math.min(pool.size, levels.length);
  const pyramid = { src, W, H, ii, levels: table, l1: levels.length };
  if (P <= 1) pool.runLocal(pyramidTask, { ...pyramid, l0: 0, stride: 1 });
  else await Promise.all(Array.from({ length: P }, (_, t) => pool.run(pyramidTask, { ...pyramid, l0: t, stride: P })));
  const t1 = performance.now();
  const scan = sharedInt32(4 * levels.length, pool);
  levels.forEach((l, i) => scan.set([offsets[i], l.width + 1, l.cols, l.step], 4 * i));
  const rowList: number[] = [];
  levels.forEach((l, i) => { for (let y = 0; y < l.rows; y += l.step) rowList.push(i, y); });
  const rows = Int32Array.from(rowList);
  const parts = await forChunks(pool, rows.length / 2, 8, detectRowsTask, {
    ii, levels: scan, rows, features: cc.features, tables: cc.tables, reject: cc.reject, accept: cc.accept, reset: cc.reset,
    count: cc.count, staged: cc.staged, firstStage: cc.firstStage,
  });
  const hits: RawHit[] = [];
  const rejected = new Uint32Array(cc.count + 1);
  for (const p of parts) {
    for (let i = 0; i < p.hits.length; i += 4) hits.push({ level: p.hits[i], x: p.hits[i + 1], y: p.hits[i + 2], score: p.hits[i + 3] });
    p.rejected.forEach((v, i) => (rejected[i] += v));
  }
  return { hits, rejected, pyramidMs: t1 - t0, scanMs: performance.now() - t1 };
}

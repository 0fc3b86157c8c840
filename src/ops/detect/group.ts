import { roundHalfEven } from '../../core/rounding.js';

/** A detection in input pixels: the box, how many raw windows it merges, and its classifier score. */
export interface Detection {
  x: number;
  y: number;
  width: number;
  height: number;
  /** Raw windows merged into this box (1 for raw windows). */
  neighbors: number;
  /** The highest final sum among the merged windows (the last stage's sum for a staged cascade). */
  score: number;
}

const f32 = Math.fround;

/** OpenCV's SimilarRects: every edge within eps·(min widths + min heights)/2. */
function similar(a: Detection, b: Detection, eps: number): boolean {
  const delta = eps * (Math.min(a.width, b.width) + Math.min(a.height, b.height)) * 0.5;
  return Math.abs(a.x - b.x) <= delta && Math.abs(a.y - b.y) <= delta
    && Math.abs(a.x + a.width - b.x - b.width) <= delta && Math.abs(a.y + a.height - b.y - b.height) <= delta;
}

/**
 * Connected components of the similarity graph, labelled in order of first member (cv::partition). Similar boxes
 * have |x1 − x2| ≤ δ ≤ eps·(w + h)/2 of either box, so after sorting by x each box is compared only with the
 * boxes that follow it within that reach — the same components as OpenCV's all-pairs loop, without its n².
 */
function partition(rects: Detection[], eps: number): number[] {
  const n = rects.length;
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => rects[a].x - rects[b].x);
  for (let a = 0; a < n; a++) {
    const i = order[a], ri = rects[i];
    const reach = eps * (ri.width + ri.height) * 0.5;
    for (let b = a + 1; b < n; b++) {
      const j = order[b];
      if (rects[j].x - ri.x > reach) break;
      if (similar(ri, rects[j], eps)) parent[find(i)] = find(j);
    }
  }
  const label = new Map<number, number>();
  return rects.map((_, i) => {
    const r = find(i);
    if (!label.has(r)) label.set(r, label.size);
    return label.get(r)!;
  });
}

/**
 * cv::groupRectangles(rects, minNeighbors, eps = 0.2): clusters of similar boxes averaged (float 1/n, rounded
 * as saturate_cast), clusters of at most minNeighbors boxes dropped, and boxes inside a stronger one removed.
 * minNeighbors ≤ 0 returns the boxes as they are.
 */
export function groupRectangles(rects: Detection[], minNeighbors: number, eps = 0.2): Detection[] {
  if (minNeighbors <= 0 || !rects.length) return rects.map((r) => ({ ...r }));
  const labels = partition(rects, eps);
  const k = Math.max(...labels) + 1;
  const sum = Array.from({ length: k }, () => ({ x: 0, y: 0, width: 0, height: 0, neighbors: 0, score: -Infinity }));
  labels.forEach((c, i) => {
    const s = sum[c], r = rects[i];
    s.x += r.x; s.y += r.y; s.width += r.width; s.height += r.height; s.neighbors++;
    s.score = Math.max(s.score, r.score);
  });
  const avg: Detection[] = sum.map((s) => {
    const inv = f32(1 / s.neighbors);
    return { x: roundHalfEven(f32(s.x * inv)), y: roundHalfEven(f32(s.y * inv)), width: roundHalfEven(f32(s.width * inv)), height: roundHalfEven(f32(s.height * inv)), neighbors: s.neighbors, score: s.score };
  });
  return avg.filter((r1, i) => {
    const n1 = r1.neighbors;
    if (n1 <= minNeighbors) return false;
    // Drop a small box inside a larger one that more windows support (faces inside faces).
    return !avg.some((r2, j) => {
      if (j === i || r2.neighbors <= minNeighbors) return false;
      const dx = roundHalfEven(r2.width * eps), dy = roundHalfEven(r2.height * eps);
      return r1.x >= r2.x - dx && r1.y >= r2.y - dy && r1.x + r1.width <= r2.x + r2.width + dx && r1.y + r1.height <= r2.y + r2.height + dy
        && (r2.neighbors > Math.max(3, n1) || n1 < 3);
    });
  });
}

/** Intersection over union of two boxes. */
export function iou(a: Detection, b: Detection): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

/**
 * Non-maximum suppression: boxes by decreasing score, each kept unless it overlaps a kept one by more than
 * `threshold` IoU. Applied after grouping when asked for (boxes from different clusters that still overlap).
 */
export function nonMaxSuppression(rects: Detection[], threshold: number): Detection[] {
  const order = [...rects].sort((a, b) => b.score - a.score || b.neighbors - a.neighbors);
  const kept: Detection[] = [];
  for (const r of order) if (!kept.some((k) => iou(k, r) > threshold)) kept.push(r);
  return kept;
}

/** OpenCV's clipObjects: boxes cut to the image, empty ones dropped. */
export function clipToImage(rects: Detection[], width: number, height: number): Detection[] {
  const out: Detection[] = [];
  for (const r of rects) {
    const x0 = Math.max(0, r.x), y0 = Math.max(0, r.y);
    const x1 = Math.min(width, r.x + r.width), y1 = Math.min(height, r.y + r.height);
    if (x1 > x0 && y1 > y0) out.push({ ...r, x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
  }
  return out;
}

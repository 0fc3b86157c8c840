import type { RawHit } from './cpu.js';
import { windowGrid, type Level } from './pyramid.js';

/**
 * A frame's accepted windows as one bit per window position of its pyramid, in window order (level, then row, then
 * x: the order of the detector's hits). Negative mining asks a detector for this instead of hits: early stages accept
 * millions of windows and only a few are cut out, so the GPU counts them and marks bits, and the host never makes an
 * object per accepted window.
 */
export interface AcceptedWindows {
  /** How many windows were accepted (on the GPU: the device's count). */
  count: number;
  /** Bit i (word i >> 5, bit i & 31) is set when window i is accepted. */
  bits: Uint32Array;
}

/** The words of a bit per window. */
export function acceptedWords(windows: number): number {
  return Math.ceil(windows / 32);
}

/** The index of each level's first window in window order. */
function levelStarts(levels: readonly Level[]): number[] {
  const starts: number[] = [];
  let n = 0;
  for (const l of levels) {
    starts.push(n);
    const g = windowGrid(l);
    n += g.perRow * g.rows;
  }
  starts.push(n);
  return starts;
}

/** Hits (the CPU detector's, or any in window order or not) as accepted windows. */
export function acceptedOf(hits: readonly RawHit[], levels: readonly Level[]): AcceptedWindows {
  const starts = levelStarts(levels);
  const bits = new Uint32Array(acceptedWords(starts[levels.length]));
  for (const h of hits) {
    const l = levels[h.level];
    const i = starts[h.level] + (h.y / l.step) * windowGrid(l).perRow + h.x / l.step;
    bits[i >>> 5] |= 1 << (i & 31);
  }
  return { count: hits.length, bits };
}

/** The position of window `k` (window order) of a pyramid: [level, y, x] in the level's pixels. */
export function windowAt(levels: readonly Level[], k: number): [number, number, number] {
  for (let l = 0; l < levels.length; l++) {
    const g = windowGrid(levels[l]), n = g.perRow * g.rows;
    if (k < n) return [l, Math.floor(k / g.perRow) * levels[l].step, (k % g.perRow) * levels[l].step];
    k -= n;
  }
  throw new RangeError(`window ${k} past the pyramid`);
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/**
 * The window indices of the accepted windows of ranks `ranks` (ascending: the r-th accepted window in window order),
 * in one pass over the words: whole words are skipped by their population count.
 */
export function selectAccepted(bits: Uint32Array, ranks: readonly number[]): number[] {
  const out: number[] = [];
  let w = 0, before = 0;
  for (const r of ranks) {
    for (;;) {
      if (w >= bits.length) throw new RangeError(`accepted window ${r} of ${before}`);
      const c = popcount(bits[w]);
      if (r < before + c) break;
      before += c;
      w++;
    }
    let word = bits[w];
    for (let skip = r - before; skip > 0; skip--) word &= word - 1; // clear the lowest set bits below the rank
    out.push(32 * w + 31 - Math.clz32(word & -word));
  }
  return out;
}

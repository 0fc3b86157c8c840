// Seeded mutations of real JPEGs for the differential fuzzer (jpeg-differential.ts): the damage disks, transfers and
// hostile uploads make — table contents, header fields, markers, restart intervals, truncation, extra scans — each a
// named, reproducible change (seed and case index say which bytes).

/** mulberry32: a small seeded generator, the same sequence on every machine. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A marker segment of a JPEG: its marker byte, where its payload starts and ends. */
export interface Segment {
  marker: number;
  start: number;
  end: number;
}

/** The marker segments up to and including the first SOS (the header), and where the entropy-coded data begins. */
export function segments(b: Uint8Array): { segs: Segment[]; data: number } {
  const segs: Segment[] = [];
  let p = 2;
  while (p + 4 <= b.length && b[p] === 0xff) {
    const marker = b[p + 1];
    const end = p + 2 + ((b[p + 2] << 8) | b[p + 3]);
    segs.push({ marker, start: p + 4, end: Math.min(end, b.length) });
    p = end;
    if (marker === 0xda) break;
  }
  return { segs, data: p };
}

type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)];
const of = (b: Uint8Array, marker: number) => segments(b).segs.filter((s) => s.marker === marker);
const splice = (b: Uint8Array, at: number, remove: number, insert: number[]) => Uint8Array.from([...b.subarray(0, at), ...insert, ...b.subarray(at + remove)]);

/** One kind of damage: changes `b` (a copy) or returns a new array; undefined where the file has nothing to change. */
export type Mutation = (b: Uint8Array, r: Rand) => Uint8Array | undefined;

/** One byte of a segment (`marker`) set to `value(old)`: a byte in the payload range `from` gives for a segment drawn. */
function setIn(b: Uint8Array, r: Rand, marker: number, from: (s: Segment) => [number, number], value: (r: Rand, old: number) => number): Uint8Array | undefined {
  const segs = of(b, marker);
  if (!segs.length) return undefined;
  const [lo, hi] = from(pick(r, segs));
  if (hi <= lo) return undefined;
  const at = lo + int(r, hi - lo);
  b[at] = value(r, b[at]) & 255;
  return b;
}

/** The range of the symbol values (huffval) of a DHT segment's first table. */
const dhtSymbols = (b: Uint8Array) => (s: Segment): [number, number] => {
  let n = 0;
  for (let i = 1; i <= 16; i++) n += b[s.start + i];
  return [s.start + 17, Math.min(s.start + 17 + n, s.end)];
};

export const MUTATIONS: Record<string, Mutation> = {
  'dht-symbol': (b, r) => setIn(b, r, 0xc4, dhtSymbols(b), (r) => int(r, 256)),
  'dht-symbol-duplicate': (b, r) => {
    const segs = of(b, 0xc4);
    if (!segs.length) return undefined;
    const [lo, hi] = dhtSymbols(b)(pick(r, segs));
    if (hi - lo < 2) return undefined;
    b[lo + int(r, hi - lo)] = b[lo + int(r, hi - lo)];
    return b;
  },
  'dht-count': (b, r) => setIn(b, r, 0xc4, (s) => [s.start + 1, s.start + 17], (r, old) => old + pick(r, [-1, 1, 2, 17])),
  'dqt-entry': (b, r) => setIn(b, r, 0xdb, (s) => [s.start + 1, Math.min(s.start + 65, s.end)], (r) => pick(r, [0, 1, 255, int(r, 256)])),
  'dqt-precision': (b, r) => setIn(b, r, 0xdb, (s) => [s.start, s.start + 1], (r, old) => old ^ 0x10),
  'sof-dimensions': (b, r) => setIn(b, r, 0xc0, (s) => [s.start + 1, s.start + 5], (r) => pick(r, [0, 0xff, 1, int(r, 256)])),
  'sof-sampling': (b, r) => setIn(b, r, 0xc0, (s) => [s.start + 6, s.end], (r) => pick(r, [0x11, 0x12, 0x21, 0x22, 0x41, 0x14, 0x44, 0x00, int(r, 256)])),
  'sof-precision': (b, r) => setIn(b, r, 0xc0, (s) => [s.start, s.start + 1], (r) => pick(r, [12, 16, 0, 9])),
  'sof-components': (b, r) => setIn(b, r, 0xc0, (s) => [s.start + 5, s.start + 6], (r) => pick(r, [0, 1, 2, 4, 255])),
  'sos-fields': (b, r) => setIn(b, r, 0xda, (s) => [s.start, s.end], (r) => int(r, 256)),
  'restart-interval': (b, r) => {
    const { segs } = segments(b);
    const sos = segs.find((s) => s.marker === 0xda);
    if (!sos) return undefined;
    const n = pick(r, [1, 2, 7, 100, 65535]);
    return splice(b, sos.start - 4, 0, [0xff, 0xdd, 0, 4, n >> 8, n & 255]);
  },
  truncate: (b, r) => b.subarray(0, 2 + int(r, b.length - 2)),
  'flip-data': (b, r) => {
    const { data } = segments(b);
    for (let k = 1 + int(r, 4); k > 0; k--) {
      const at = data + int(r, Math.max(1, b.length - 2 - data));
      if (b[at] !== 0xff && b[at - 1] !== 0xff) b[at] = (b[at] ^ (1 << int(r, 8))) === 0xff ? 0xfe : b[at] ^ (1 << int(r, 8));
    }
    return b;
  },
  'stray-marker': (b, r) => {
    const { data } = segments(b);
    const at = data + int(r, Math.max(1, b.length - 2 - data));
    return splice(b, at, 0, [0xff, pick(r, [0xd0, 0xd3, 0xd8, 0xd9, 0xda, 0xc4, 0xdb, 0xe1, 0x01])]);
  },
  'extra-scan': (b) => {
    const { segs, data } = segments(b);
    const sos = segs.find((s) => s.marker === 0xda);
    if (!sos) return undefined;
    // The scan again before EOI: its header and the first part of its data.
    const again = [...b.subarray(sos.start - 4, data), ...b.subarray(data, data + Math.min(64, b.length - data - 2))];
    return splice(b, b.length - 2, 0, again);
  },
  'huge-dimensions': (b) => {
    const sof = of(b, 0xc0)[0] ?? of(b, 0xc2)[0];
    if (!sof) return undefined;
    b.set([0xff, 0xff, 0xff, 0xff], sof.start + 1);
    return b;
  },
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

/** A mutated copy of `file`: 1–3 mutations drawn from `r` among `kinds` (default: JPEG's), and their names. */
export function mutate(file: Uint8Array, r: Rand, kinds: Record<string, Mutation> = MUTATIONS): { bytes: Uint8Array; applied: string[] } {
  const names = Object.keys(kinds);
  let b: Uint8Array = Uint8Array.from(file);
  const applied: string[] = [];
  for (let k = 1 + int(r, 3); k > 0; k--) {
    const name = pick(r, names);
    const out = kinds[name](b, r);
    if (!out) continue;
    b = out;
    applied.push(name);
  }
  return { bytes: b, applied };
}

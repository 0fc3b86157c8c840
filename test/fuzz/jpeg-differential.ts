// The differential JPEG fuzzer (issue 39): seeded mutations of real JPEGs (jpeg-mutate.ts), each decoded by
// cv2.imread (the reference: one /usr/bin/python3 process for the corpus, jpeg_reference.py), by imgpu's CPU path
// (readImage) and by its GPU path (readJpegToGpu, the Huffman decoding on the GPU and on a CPU thread). Every path
// must give the reference's pixels or a typed error (ImgpuError: a one-line CLI message and its exit code) — never
// other pixels, pixels where cv2 decodes nothing, or an untyped error (the CLI's exit 70). With failOn 'none' (the
// paths named so), every file cv2 decodes must give its pixels: a refusal is a violation too.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { ImgpuError } from '../../src/core/errors.js';
import type { GpuContext } from '../../src/core/gpu/context.js';
import type { Image } from '../../src/core/image.js';
import { readImage } from '../../src/io/index.js';
import { decodeNpy } from '../../src/io/npy.js';
import type { JpegEntropyPath } from '../../src/codecs/jpeg/options.js';
import { readJpegToGpu } from '../../src/node/jpeg-gpu.js';
import { PYTHON } from '../helpers/parity.js';
import { mutate, rng } from './jpeg-mutate.js';

const REFERENCE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fuzz', 'jpeg_reference.py');

/** One fuzz case: a mutated file, the mutations that made it, and which output it is decoded to. */
export interface FuzzCase {
  name: string;
  source: string;
  applied: string[];
  gray: boolean;
  bytes: Uint8Array;
}

/**
 * `count` cases from `sources` (real JPEGs), case i drawn from its own generator (seed, i): any one is reproduced
 * alone from the seed and its index.
 */
export function fuzzCases(sources: readonly string[], seed: number, count: number, first = 0): FuzzCase[] {
  const files = sources.map((path) => ({ path, bytes: readFileSync(path) }));
  const cases: FuzzCase[] = [];
  for (let i = first; i < first + count; i++) {
    const r = rng((Math.imul(seed, 0x9e3779b1) + i) >>> 0);
    const src = files[Math.floor(r() * files.length)];
    const { bytes, applied } = mutate(src.bytes, r);
    cases.push({ name: `s${seed}-${i}.jpg`, source: src.path, applied, gray: r() < 0.5, bytes });
  }
  return cases;
}

/** What a path did with a case. */
export type Outcome = 'same' | 'refused' | 'different' | 'decoded-where-cv2-refuses' | 'untyped-error' | 'refused-where-cv2-decodes';
export const VIOLATIONS: readonly Outcome[] = ['different', 'decoded-where-cv2-refuses', 'untyped-error', 'refused-where-cv2-decodes'];

/** The outcomes of a run: counts per path and outcome, and each violation said in a line. */
export interface FuzzReport {
  cases: number;
  counts: Record<string, Partial<Record<string, number>>>;
  /** Cases cv2 decoded (the format fuzzer: cases some reference decoded). */
  cv2Decoded: number;
  violations: string[];
}

/** Adds a run's counts and violations to `total` (the long runs go in chunks: bench/fuzz-jpeg.ts, bench/fuzz-formats.ts). */
export function addReport(total: FuzzReport, r: FuzzReport): void {
  total.cases += r.cases;
  total.cv2Decoded += r.cv2Decoded;
  total.violations.push(...r.violations);
  for (const [path, row] of Object.entries(r.counts)) {
    for (const [o, n] of Object.entries(row)) (total.counts[path] ??= {})[o] = (total.counts[path][o] ?? 0) + (n ?? 0);
  }
}

/** cv2.imread's pixels of each case (undefined where it decodes nothing), from one Python process. */
function references(dir: string, cases: readonly FuzzCase[]): Map<string, Image | undefined> {
  for (const c of cases) writeFileSync(join(dir, c.name), c.bytes);
  const p = spawnSync(PYTHON, [REFERENCE, dir], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
  if (p.status !== 0) throw new Error(`${PYTHON} ${REFERENCE} exited ${p.status}: ${(p.stderr ?? '').trim().split('\n').slice(-2).join(' ')}`);
  const decoded = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Record<string, { rgb: boolean; gray: boolean }>;
  const refs = new Map<string, Image | undefined>();
  for (const c of cases) {
    const kind = c.gray ? 'gray' : 'rgb';
    refs.set(c.name, decoded[c.name][kind] ? readNpy(join(dir, `${c.name}.${kind}.npy`)) : undefined);
  }
  return refs;
}

/** A path's outcome against the reference: `got` pixels or the error it threw. */
function judge(got: Image | Error, ref: Image | undefined, refGray: () => Image | undefined, lenient = false): Outcome {
  if (got instanceof Error) return !(got instanceof ImgpuError) ? 'untyped-error' : lenient && ref ? 'refused-where-cv2-decodes' : 'refused';
  if (!ref) return 'decoded-where-cv2-refuses';
  // A one-component file decodes to one channel where cv2's colour read repeats it three times.
  const want = got.channels === 1 && ref.channels === 3 ? refGray() : ref;
  return want && compareImages(got, want).identical ? 'same' : 'different';
}

/** A decode's pixels, or the error it threw (the error kept, to judge whether it is typed). */
export async function settle(f: () => Promise<Image | undefined>): Promise<Image | Error | undefined> {
  try {
    return await f();
  } catch (e) {
    return e as Error;
  }
}

/** The GPU path's pixels of a file (undefined where it hands the file to readImage: the CPU path's outcome stands). */
async function onGpu(ctx: GpuContext, c: FuzzCase, path: string, entropy: JpegEntropyPath, failOn?: 'none'): Promise<Image | undefined> {
  const r = await readJpegToGpu(ctx, c.bytes, path, c.gray, { jpeg: 'gpu', entropy, failOn });
  if (!r) return undefined;
  try {
    return await r.image.toHost();
  } finally {
    r.image.release();
  }
}

/** Runs the cases through cv2, imgpu's CPU path and (with `ctx`) its GPU path; `progress` hears each case's name first. */
export async function runFuzz(cases: readonly FuzzCase[], ctx?: GpuContext, progress?: (c: FuzzCase) => void): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-fuzz-'));
  const report: FuzzReport = { cases: cases.length, counts: {}, cv2Decoded: 0, violations: [] };
  const count = (path: string, o: Outcome, c: FuzzCase) => {
    const row = (report.counts[path] ??= {});
    row[o] = (row[o] ?? 0) + 1;
    if (VIOLATIONS.includes(o)) report.violations.push(`${c.name} (${c.applied.join('+')} of ${c.source}, ${c.gray ? 'gray' : 'colour'}): ${path} ${o}`);
  };
  try {
    const refs = references(dir, cases);
    for (const c of cases) {
      progress?.(c);
      const path = join(dir, c.name);
      const ref = refs.get(c.name);
      if (ref) report.cv2Decoded++;
      const refGray = () => (c.gray ? ref : tryNpy(join(dir, `${c.name}.gray.npy`)));
      const cpu = (await settle(() => readImage(path, { gray: c.gray })))!;
      count('cpu', judge(cpu, ref, refGray), c);
      const lenientCpu = (await settle(() => readImage(path, { gray: c.gray, failOn: 'none' })))!;
      count('cpu, failOn none', judge(lenientCpu, ref, refGray, true), c);
      if (!ctx) continue;
      for (const entropy of ['gpu', 'cpu'] as const) {
        const gpu = await settle(() => onGpu(ctx, c, path, entropy));
        if (gpu) count(`gpu (Huffman on the ${entropy})`, judge(gpu, ref, refGray), c);
      }
      const lenientGpu = await settle(() => onGpu(ctx, c, path, 'gpu', 'none'));
      if (lenientGpu) count('gpu, failOn none', judge(lenientGpu, ref, refGray, true), c);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

/** A reference array as an image: an H×W×3 array (cv2's colour, in RGB order) is three channels, not a volume. */
function readNpy(path: string): Image {
  const a = decodeNpy(readFileSync(path), path);
  return a.shape.length === 3 ? { ...a, shape: [a.shape[0], a.shape[1]], channels: a.shape[2] as Image["channels"] } : a;
}

function tryNpy(path: string): Image | undefined {
  try {
    return readNpy(path);
  } catch {
    return undefined;
  }
}

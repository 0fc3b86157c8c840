// The differential fuzzer of PNG, TIFF, NIfTI, DICOM and .npy (issue 39 item 2): seeded mutations of real files
// (format-mutate.ts), each decoded by the references (format_reference.py: cv2 and PIL for PNG and TIFF, nibabel,
// pydicom, numpy; one /usr/bin/python3 process for the corpus) and by imgpu's readImage (the CPU path: these formats
// have no GPU decoder). imgpu must give a reference's pixels or a typed error (ImgpuError, not exit 70) — never other
// pixels, pixels where every reference refuses, an untyped error (the CLI's exit 70) or a hang (the caller's timeout).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareImages } from '../../src/core/compare.js';
import { ImgpuError } from '../../src/core/errors.js';
import type { Image } from '../../src/core/image.js';
import { decodeNpy } from '../../src/io/npy.js';
import { readImage } from '../../src/io/index.js';
import { PYTHON } from '../helpers/parity.js';
import { settle, type FuzzReport } from './jpeg-differential.js';
import { rng } from './jpeg-mutate.js';
import { mutateFormat } from './format-mutate.js';

const REFERENCE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fuzz', 'format_reference.py');

/** A source file's format: its extension as the mutations and references know it (.tiff read as .tif). */
export function fuzzFormat(path: string): string {
  const lower = path.toLowerCase();
  if (lower.endsWith('.nii.gz')) return '.nii.gz';
  const ext = lower.slice(lower.lastIndexOf('.'));
  return ext === '.tiff' ? '.tif' : ext;
}

/** One fuzz case: a mutated file, the mutations that made it, and its source. */
export interface FormatCase {
  name: string;
  source: string;
  applied: string[];
  bytes: Uint8Array;
}

/** `count` cases from `sources`, case i drawn from its own generator (seed, i): any one is reproduced from the seed and index. */
export function formatCases(sources: readonly string[], seed: number, count: number, first = 0): FormatCase[] {
  const files = sources.map((path) => ({ path, ext: fuzzFormat(path), bytes: readFileSync(path) }));
  const cases: FormatCase[] = [];
  for (let i = first; i < first + count; i++) {
    const r = rng((Math.imul(seed, 0x85ebca6b) + i) >>> 0);
    const src = files[Math.floor(r() * files.length)];
    const { bytes, applied } = mutateFormat(src.bytes, src.ext, r);
    cases.push({ name: `case-s${seed}-${i}${src.ext}`, source: src.path, applied, bytes });
  }
  return cases;
}

/** What imgpu did with a case, against the references. */
export type FormatOutcome = 'same' | 'refused' | 'both-refused' | 'different' | 'decoded-where-references-refuse' | 'untyped-error';
const VIOLATIONS: readonly FormatOutcome[] = ['different', 'decoded-where-references-refuse', 'untyped-error'];

/** A reference's decoded array: a reader's pixels in imgpu's layout, or undefined where its dtype is none imgpu has. */
interface Reference { reader: string; image?: Image }

/** The references' pixels of each case (an empty list where every reader refused), from one Python process. */
function references(dir: string, cases: readonly FormatCase[]): Map<string, Reference[]> {
  for (const c of cases) writeFileSync(join(dir, c.name), c.bytes);
  const p = spawnSync(PYTHON, [REFERENCE, dir], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
  if (p.status !== 0) throw new Error(`${PYTHON} ${REFERENCE} exited ${p.status}: ${(p.stderr ?? '').trim().split('\n').slice(-2).join(' ')}`);
  const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Record<string, { decoded: string[] }>;
  const refs = new Map<string, Reference[]>();
  for (const c of cases) {
    refs.set(c.name, results[c.name].decoded.map((reader) => ({ reader, image: asImage(join(dir, `ref-${c.name}.${reader}.npy`)) })));
  }
  return refs;
}

/** A reference array as an image: H×W×C (C of 3 or 4) as channels; undefined for a dtype or layout imgpu never gives. */
function asImage(path: string): Image | undefined {
  try {
    const a = decodeNpy(readFileSync(path), path);
    return a.shape.length === 3 && (a.shape[2] === 3 || a.shape[2] === 4) && a.dtype !== 'float32' ? { ...a, shape: [a.shape[0], a.shape[1]], channels: a.shape[2] as Image['channels'] } : a;
  } catch {
    return undefined;
  }
}

/** imgpu's pixels equal a reference's: as they are, or a 3-channel reference of equal channels as imgpu's one (gray). */
function matches(got: Image, ref: Image): boolean {
  if (compareImages(got, ref).identical) return true;
  if (got.channels !== 1 || ref.channels === 1) return false;
  const plane = new (ref.data.constructor as new (n: number) => Image['data'])(ref.data.length / ref.channels);
  for (let i = 0; i < plane.length; i++) plane[i] = ref.data[i * ref.channels];
  return compareImages(got, { ...ref, data: plane, channels: 1 }).identical;
}

function judge(got: Image | Error, refs: readonly Reference[]): FormatOutcome {
  if (got instanceof Error) {
    if (!(got instanceof ImgpuError) || got.exitCode === 70) return 'untyped-error';
    return refs.length ? 'refused' : 'both-refused';
  }
  if (!refs.length) return 'decoded-where-references-refuse';
  return refs.some((r) => r.image && matches(got, r.image)) ? 'same' : 'different';
}

/** Runs the cases through the references and imgpu's readImage; `progress` hears each case's name first. */
export async function runFormatFuzz(cases: readonly FormatCase[], progress?: (c: FormatCase) => void): Promise<FuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), 'imgpu-format-fuzz-'));
  const report: FuzzReport = { cases: cases.length, counts: {}, cv2Decoded: 0, violations: [] };
  try {
    const refs = references(dir, cases);
    for (const c of cases) {
      progress?.(c);
      const ref = refs.get(c.name)!;
      if (ref.length) report.cv2Decoded++;
      const got = (await settle(() => readImage(join(dir, c.name))))!;
      const o = judge(got, ref);
      const row = (report.counts[fuzzFormat(c.name)] ??= {});
      row[o] = (row[o] ?? 0) + 1;
      if (VIOLATIONS.includes(o)) report.violations.push(`${c.name} (${c.applied.join('+')} of ${c.source}): ${o}${got instanceof Error ? `: ${got.message}` : ''}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

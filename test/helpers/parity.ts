import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareArrays, compareWithin } from '../../src/core/compare.js';
import { GpuLimitError, ImgpuError, InvalidArgumentError } from '../../src/core/errors.js';
import type { CpuPool } from '../../src/core/cpu/pool.js';
import { fmtBytes, type GpuContext } from '../../src/core/gpu/context.js';
import type { Image } from '../../src/core/image.js';
import { decodeNpy, encodeNpy } from '../../src/io/npy.js';

/**
 * The machinery of the randomized differential test (test/parity): seeded cases, one Python process computing
 * every reference (test/parity/reference.py), and comparisons that report every failing case with a one-line
 * reproducer instead of stopping at the first.
 */

/** Debian's Python, which has OpenCV 4.6, SciPy 1.10 and scikit-image 0.19 (the pyenv python3 on PATH has not). */
export const PYTHON = '/usr/bin/python3';
const REFERENCE_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'parity', 'reference.py');

/** The default master seed (the issue's number): `IMGPU_PARITY_SEED` explores others. */
export const DEFAULT_SEED = 24;
export const masterSeed = (): number => {
  const s = process.env.IMGPU_PARITY_SEED;
  if (s === undefined || s === '') return DEFAULT_SEED;
  const n = Number(s);
  if (!Number.isInteger(n)) throw new Error(`IMGPU_PARITY_SEED must be an integer, got '${s}'`);
  return n >>> 0;
};
/** `IMGPU_PARITY_CASE`: comma-separated case ids or id prefixes (a family: `morph-cv`); empty: every case. */
export function selected(id: string): boolean {
  const f = process.env.IMGPU_PARITY_CASE;
  if (!f) return true;
  return f.split(',').some((p) => p.trim() !== '' && (id === p.trim() || id.startsWith(`${p.trim()}-`)));
}

/** A small seeded generator (mulberry32): every case draws from its own, so a case reproduces alone. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  float(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** An odd integer in [lo, hi] (lo odd). */
  odd(lo: number, hi: number): number {
    return lo + 2 * this.int(0, Math.floor((hi - lo) / 2));
  }
}

/** The seed of case `index` of `family`: independent of the other cases and families (FNV-1a of the three). */
export function caseSeed(master: number, family: string, index: number): number {
  let h = 0x811c9dc5;
  for (const ch of `${master}/${family}/${index}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/**
 * The known, open differences from the references (docs/parity.md "Known differences (open)"): the ONE place where
 * the test accepts something other than equality. Each is bounded — a difference beyond its bound still fails —
 * and each one met is printed once per test with what differed and how much.
 */
export const KNOWN_DIFFERENCES = {
  'gray-float32-ulp': {
    what: 'float32 colour→gray vs cv2.cvtColor',
    bound: 'at most 2 ulp of 0.299·|R| + 0.587·|G| + 0.114·|B| (of the gray value for non-negative inputs)',
    reason: "cv2 computes fma(b, 0.114, fma(g, 0.587, r·0.299)) in float32; imgpu rounds each product and sum: apart on ~22% of pixels, by 1 ulp mostly, 2 at most in 10^6 random pixels per range (8/16-bit stay exact)",
  },
} as const;
export type KnownDifference = keyof typeof KNOWN_DIFFERENCES;

/** What the known differences met in one test amounted to: cases, elements that differed, the largest difference. */
interface Seen {
  cases: Set<string>;
  differing: number;
  total: number;
  max: number;
}

/** How a library output is compared with the reference output of the same name. */
export type Compare =
  /** A known difference (float32 colour→gray): at most `ulps` units in the last place of the weighted terms' magnitude. */
  | { kind: 'ulp'; ulps: number; known: KnownDifference }
  /** A known difference: integers at most `abs` apart. */
  | { kind: 'within'; abs: number; known: KnownDifference }
  | { kind: 'exact' }
  /** |a − b| ≤ rel · max|ref| (NaN matches NaN, ±Inf the same infinity): docs/convolution.md's float tolerance. */
  | { kind: 'float'; rel: number }
  /**
   * An 8/16-bit result rounded from a float: exact, except ±1 where the reference's float value (output `float`)
   * lies within rel · max|float| of a .5 tie — the float tolerance decides the rounding there.
   */
  | { kind: 'rounded'; rel: number };

export interface ParityCase {
  /** `<family>-<index>`: what IMGPU_PARITY_CASE selects. */
  id: string;
  family: string;
  seed: number;
  /** The operation and its options as the library receives them (printed in the reproducer). */
  op: string;
  params: Record<string, unknown>;
  src: Image;
  /** How the input was made (printed). */
  how: string;
  /** Further inputs written for the reference (e.g. a histogram mask). */
  extra?: Record<string, Image>;
  /** The reference: a function of reference.py, its arguments, and what it stands for (printed). */
  ref: { fn: string; args: Record<string, unknown>; what: string };
  /** Per output name; outputs not listed compare exactly. */
  compare?: Record<string, Compare>;
  /** Run on the GPU too (default true). */
  gpu?: boolean;
  /** Why the case is there when it targets a known defect class (printed with a failure). */
  note?: string;
  /** The library must refuse this case with a typed error, for the reason given (no reference comparison). */
  refuses?: string;
  /** The refusal is a known difference (the reference computes the case): an InvalidArgumentError is required. */
  refusesKnown?: KnownDifference;
}

/** What a path produced: images, scalars, counts or box lists, by the reference's output names. */
export type Outputs = Record<string, Image | number | number[] | number[][] | Uint32Array | undefined>;
export interface Path {
  name: string;
  on: { gpu?: GpuContext; pool?: CpuPool };
  /**
   * A GPU context with an artificially small storage-binding limit (these bytes), so that work splits into ranges
   * and slabs on small images. A GpuLimitError (work that cannot split that fine, refused before it starts) is
   * then allowed only where it is this limit that refuses: its message names this limit, and the case ran on the
   * unlimited GPU path (named `full`).
   */
  limited?: { bytes: number; full: string };
}

interface RefEntry {
  arrays?: string[];
  values?: Record<string, unknown>;
  error?: string;
}

/**
 * All references of a test file, computed by one Python process started at once (it runs while the library's
 * cases do): inputs as .npy in a temporary folder, a JSON manifest, outputs read back per case.
 */
export class References {
  readonly dir = mkdtempSync(join(tmpdir(), 'imgpu-parity-'));
  /** The references, or why there are none: `missing` when Python or its packages are not installed. */
  private readonly done: Promise<{ refs: Record<string, RefEntry> } | { error: Error; missing: boolean }>;
  /** Wall-clock seconds the Python process took (printed once by the first test that waits for it). */
  seconds = 0;
  private told = false;

  constructor(cases: ParityCase[]) {
    mkdirSync(join(this.dir, 'in'));
    const manifest = cases.map((c) => {
      const inputs: Record<string, string> = {};
      for (const [name, img] of Object.entries({ src: c.src, ...c.extra })) {
        inputs[name] = `in/${c.id}.${name}.npy`;
        writeFileSync(join(this.dir, inputs[name]), encodeNpy(img));
      }
      return { id: c.id, fn: c.ref.fn, args: { ...c.ref.args, channels: c.src.channels }, inputs };
    });
    writeFileSync(join(this.dir, 'manifest.json'), JSON.stringify({ cases: manifest }));
    this.done = this.run();
  }

  private run(): Promise<{ refs: Record<string, RefEntry> } | { error: Error; missing: boolean }> {
    if (!existsSync(PYTHON)) return Promise.resolve({ error: new Error(`${PYTHON} not found`), missing: true });
    const t0 = performance.now();
    return new Promise((resolve) => {
      // A bound: the references take seconds; a hung Python must fail the tests, not hold them forever.
      const p = spawn(PYTHON, [REFERENCE_SCRIPT, this.dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
      let stderr = '';
      p.stderr.on('data', (d) => (stderr += d));
      p.on('error', (error) => resolve({ error, missing: false }));
      p.on('close', (code) => {
        this.seconds = (performance.now() - t0) / 1000;
        const missing = /ModuleNotFoundError|ImportError/.test(stderr);
        if (code !== 0) return resolve({ missing, error: new Error(`${PYTHON} test/parity/reference.py exited ${code ?? 'on a signal (300 s limit?)'}: ${stderr.trim().split('\n').slice(-2).join(' ')}`) });
        resolve({ refs: JSON.parse(readFileSync(join(this.dir, 'results.json'), 'utf8')) as Record<string, RefEntry> });
      });
    });
  }

  /**
   * The references, or undefined with the test skipped when Python or its packages are missing — a failure
   * instead under IMGPU_REQUIRE_GPU=1 (CI, where scripts/install-system-deps.sh installs them). A reference script
   * that breaks otherwise always fails.
   */
  async get(t: TestContext): Promise<Record<string, RefEntry> | undefined> {
    const r = await this.done;
    if ('refs' in r) {
      if (!this.told) t.diagnostic(`references: ${Object.keys(r.refs).length} cases in one ${PYTHON} process, ${this.seconds.toFixed(1)} s`);
      this.told = true;
      return r.refs;
    }
    if (!r.missing) throw r.error;
    const reason = `Python references unavailable (${PYTHON} with python3-opencv, python3-scipy, python3-skimage): ${r.error.message}`;
    if (process.env.IMGPU_REQUIRE_GPU === '1') throw new Error(`IMGPU_REQUIRE_GPU=1 but ${reason}`);
    t.skip(reason);
    return undefined;
  }

  array(id: string, name: string): Image {
    return decodeNpy(readFileSync(join(this.dir, 'out', `${id}.${name}.npy`)), `${id}.${name}`);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One path's result of a case: its outputs, or the error it threw. */
type Ran = { outputs: Outputs } | { error: unknown };

async function attempt(c: ParityCase, path: Path, run: (c: ParityCase, on: Path['on']) => Promise<Outputs>): Promise<Ran> {
  try {
    return { outputs: await run(c, path.on) };
  } catch (error) {
    return { error };
  }
}

const fmt = (v: unknown): string => (typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(7) : String(v));
/**
 * The imgpu error a reference's exception corresponds to, by the Python exception's class name (reference.py
 * reports `Name: message`): OpenCV's asserts (cv2.error, named `error`) and NumPy/SciPy/skimage argument checks
 * (ValueError, TypeError, IndexError) refuse bad arguments, so imgpu must refuse them as bad arguments too
 * (InvalidArgumentError and its subclasses). Any other exception (KeyError, AttributeError, MemoryError …) is no
 * refusal of the case's input: undefined.
 */
const REFUSAL_KINDS: Record<string, typeof InvalidArgumentError> = {
  error: InvalidArgumentError, ValueError: InvalidArgumentError, TypeError: InvalidArgumentError, IndexError: InvalidArgumentError,
};

export function refusalKind(referenceError: string): typeof InvalidArgumentError | undefined {
  const name = /^(\w+)(?::|$)/.exec(referenceError)?.[1];
  return name !== undefined && Object.hasOwn(REFUSAL_KINDS, name) ? REFUSAL_KINDS[name] : undefined;
}

/**
 * Why a GpuLimitError on the limited path is not the small binding limit refusing (undefined when it is): the
 * message must name that limit, and the unlimited GPU path must have computed the case.
 */
function limitRefusalProblem(e: GpuLimitError, limited: { bytes: number; full: string }, full: Ran | undefined): string | undefined {
  if (!e.message.includes(fmtBytes(limited.bytes))) return `a GpuLimitError that does not name the ${fmtBytes(limited.bytes)} binding limit: ${errText(e)}`;
  if (full && 'error' in full) return `refused under the ${fmtBytes(limited.bytes)} limit, and on the ${limited.full} path too (${errText(full.error)})`;
  return undefined;
}

const errText = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

function describeInput(img: Image): string {
  return `${[...img.shape].reverse().join('×')}${img.channels > 1 ? `×${img.channels}ch` : ''} ${img.dtype}`;
}

/** Coordinates of flat index i of an image: (z, y, x, c) as far as the image has them. */
function where(img: { shape: readonly number[]; channels: number }, i: number): string {
  const dims = [...img.shape, ...(img.channels > 1 ? [img.channels] : [])];
  const names = img.shape.length === 3 ? ['z', 'y', 'x', 'c'] : ['y', 'x', 'c'];
  const at: string[] = [];
  for (let d = dims.length - 1, r = i; d >= 0; d--) {
    at.unshift(`${names[d]} ${r % dims[d]}`);
    r = Math.floor(r / dims[d]);
  }
  return at.join(', ');
}

/** The difference between an output and its reference, in words, or undefined when they agree. */
function differ(got: Outputs[string], c: ParityCase, name: string, refs: References, entry: RefEntry, seen: Map<KnownDifference, Seen>): string | undefined {
  const rule = c.compare?.[name] ?? { kind: 'exact' };
  if (entry.values && name in entry.values) {
    const want = entry.values[name];
    const g = got instanceof Uint32Array ? Array.from(got) : got;
    if (JSON.stringify(g) === JSON.stringify(want)) return undefined;
    if (Array.isArray(g) && Array.isArray(want) && typeof want[0] === 'number') {
      const cmp = compareArrays(g as number[], want as number[]);
      if (g.length !== want.length) return `${name}: ${g.length} values, reference ${want.length}`;
      return `${name}: ${cmp.mismatches}/${want.length} differ, first [${cmp.firstMismatch}]: imgpu ${g[cmp.firstMismatch]}, reference ${want[cmp.firstMismatch]}`;
    }
    const show = (v: unknown) => { const s = JSON.stringify(v); return s.length > 160 ? `${s.slice(0, 160)}…` : s; };
    return `${name}: imgpu ${show(g)}, reference ${show(want)}`;
  }
  const img = got as Image | undefined;
  if (!img || !('data' in img)) return `${name}: imgpu gave no image`;
  const ref = refs.array(c.id, name);
  const refDims = [...ref.shape];
  const gotDims = [...img.shape, ...(img.channels > 1 ? [img.channels] : [])];
  if (refDims.join() !== gotDims.join()) return `${name}: shape ${gotDims.join('×')}, reference ${refDims.join('×')}`;
  if (ref.dtype !== img.dtype) return `${name}: dtype ${img.dtype}, reference ${ref.dtype}`;
  const want: Image = { ...ref, shape: img.shape, channels: img.channels };
  if (rule.kind === 'ulp' || rule.kind === 'within') return bounded(img, want, c, name, rule, seen);
  const cmp = rule.kind === 'float' ? compareWithin(img, want, rule.rel) : compareArrays(img.data, want.data);
  let bad = cmp.mismatches, first = cmp.firstMismatch;
  if (rule.kind === 'rounded' && bad) ({ bad, first } = roundingTies(img, want, refs.array(c.id, 'float'), rule.rel));
  if (!bad) return undefined;
  const tol = rule.kind === 'float' ? ` beyond ±${fmt(cmp.tolerance)}` : '';
  return `${name}: ${bad}/${want.data.length} differ${tol} (max |diff| ${fmt(cmp.maxAbsDiff)}), first at (${where(img, first)}): imgpu ${fmt(img.data[first])}, reference ${fmt(want.data[first])}`;
}

/**
 * The float32 gray difference in units in the last place of S = 0.299·|R| + 0.587·|G| + 0.114·|B| (the sum of the
 * weighted terms' magnitudes; the gray value itself for non-negative inputs): both sums round two or three times
 * at that scale, so their difference is bounded in those units even where the terms cancel (NaN = NaN).
 */
function grayUlps(src: Image): (got: number, want: number, i: number) => number {
  const [wr, wg, wb] = [0.299, 0.587, 0.114].map(Math.fround);
  const c = src.channels;
  return (got, want, i) => {
    if (Number.isNaN(got) || Number.isNaN(want)) return Number.isNaN(got) && Number.isNaN(want) ? 0 : Infinity;
    const j = i * c;
    F32[0] = wr * Math.abs(src.data[j]) + wg * Math.abs(src.data[j + 1]) + wb * Math.abs(src.data[j + 2]);
    const exp = (I32[0] >>> 23) & 0xff;
    return Math.abs(got - want) / 2 ** (Math.max(exp, 1) - 150);
  };
}
const F32 = new Float32Array(1);
const I32 = new Int32Array(F32.buffer);

/** A known difference: every element within the bound (recorded in `seen`), else the first one beyond it, in words. */
function bounded(img: Image, want: Image, c: ParityCase, name: string, rule: Extract<Compare, { known: KnownDifference }>, seen: Map<KnownDifference, Seen>): string | undefined {
  const dist = rule.kind === 'ulp' ? grayUlps(c.src) : (a: number, b: number) => Math.abs(a - b);
  const bound = rule.kind === 'ulp' ? rule.ulps : rule.abs;
  let differing = 0, max = 0, bad = 0, first = -1;
  for (let i = 0; i < img.data.length; i++) {
    const d = dist(img.data[i], want.data[i], i);
    if (d === 0) continue;
    differing++;
    if (d > max) max = d;
    if (d > bound) {
      if (first < 0) first = i;
      bad++;
    }
  }
  if (bad) {
    const unit = rule.kind === 'ulp' ? ' ulp' : '';
    return `${name}: ${bad}/${want.data.length} differ beyond the known bound of ${bound}${unit} (${rule.known}; max ${max}${unit}), first at (${where(img, first)}): imgpu ${fmt(img.data[first])}, reference ${fmt(want.data[first])}`;
  }
  const s = seen.get(rule.known) ?? { cases: new Set<string>(), differing: 0, total: 0, max: 0 };
  s.cases.add(c.id);
  s.differing += differing;
  s.total += want.data.length;
  s.max = Math.max(s.max, max);
  seen.set(rule.known, s);
  return undefined;
}

/** One line per known difference met: what differs, where and how much. */
function tellKnown(t: TestContext, seen: Map<KnownDifference, Seen>, refused: Map<KnownDifference, Set<string>>): void {
  for (const [k, s] of seen) {
    const kd = KNOWN_DIFFERENCES[k];
    const unit = k === 'gray-float32-ulp' ? ' ulp' : '';
    t.diagnostic(`known difference ${k}: ${kd.what}: ${s.differing}/${s.total} elements differ over the paths (max ${s.max}${unit}, bound ${kd.bound}) in ${s.cases.size} case(s) [${[...s.cases].join(', ')}] — ${kd.reason}`);
  }
  for (const [k, ids] of refused) {
    const kd = KNOWN_DIFFERENCES[k];
    t.diagnostic(`known difference ${k}: ${kd.what}: ${kd.bound} in ${ids.size} case(s) [${[...ids].join(', ')}] where the reference computes — ${kd.reason}`);
  }
}

/** Mismatches of a rounded result not explained by a float value within the tolerance of a .5 tie. */
function roundingTies(img: Image, want: Image, float: Image, rel: number): { bad: number; first: number } {
  let scale = 0;
  for (const v of float.data) if (Number.isFinite(v) && Math.abs(v) > scale) scale = Math.abs(v);
  const tol = rel * scale;
  let bad = 0, first = -1;
  for (let i = 0; i < img.data.length; i++) {
    const d = Math.abs(img.data[i] - want.data[i]);
    if (d === 0) continue;
    const f = float.data[i];
    if (d === 1 && Math.abs(f - Math.floor(f) - 0.5) <= tol) continue;
    if (first < 0) first = i;
    bad++;
  }
  return { bad, first };
}

/** The command that re-runs one case. */
export function rerun(id: string): string {
  const seed = masterSeed() === DEFAULT_SEED ? '' : `IMGPU_PARITY_SEED=${masterSeed()} `;
  return `${seed}IMGPU_PARITY_CASE=${id} node scripts/run-tests.js parity`;
}

function reproducer(c: ParityCase, path: string, what: string): string {
  const note = c.note ? ` [${c.note}]` : '';
  const params = JSON.stringify(c.params);
  return `✗ ${c.id} ${path}: ${c.op} ${params.length > 240 ? `${params.slice(0, 240)}…` : params} on ${describeInput(c.src)} (${c.how}; case seed ${c.seed}) vs ${c.ref.what}: ${what}${note} — rerun: ${rerun(c.id)}`;
}

/**
 * Runs every case on each path, compares with the references, and fails once with a reproducer line per
 * failing case and path. A reference that refuses a case (OpenCV asserts) expects the library to refuse it
 * with a typed error; a library that refuses what the reference computes fails.
 */
export async function checkCases(
  t: TestContext, cases: ParityCase[], refs: References, paths: Path[],
  run: (c: ParityCase, on: Path['on']) => Promise<Outputs>,
): Promise<void> {
  if (!cases.length) {
    t.skip('no case selected (IMGPU_PARITY_CASE)');
    return;
  }
  const ran = new Map<string, Ran>();
  for (const c of cases) {
    for (const p of paths) if (!p.on.gpu || c.gpu !== false) ran.set(`${c.id}/${p.name}`, await attempt(c, p, run));
  }
  const all = await refs.get(t);
  if (!all) return;
  const failures: string[] = [];
  const refusedByLimit: string[] = [];
  const seen = new Map<KnownDifference, Seen>();
  const refused = new Map<KnownDifference, Set<string>>();
  for (const c of cases) {
    const entry = all[c.id];
    for (const p of paths) {
      const r = ran.get(`${c.id}/${p.name}`);
      if (!r) continue;
      const fail = (what: string) => failures.push(reproducer(c, p.name, what));
      if (p.limited && 'error' in r && r.error instanceof GpuLimitError) {
        const why = limitRefusalProblem(r.error, p.limited, ran.get(`${c.id}/${p.limited.full}`));
        if (why) fail(why);
        else refusedByLimit.push(c.id);
        continue;
      }
      if (c.refuses) {
        const typed = c.refusesKnown ? InvalidArgumentError : ImgpuError;
        if (!('error' in r) || !(r.error instanceof typed)) fail(`expected a typed refusal (${c.refuses}), got ${'error' in r ? errText(r.error) : 'a result'}`);
        else if (c.refusesKnown) refused.set(c.refusesKnown, (refused.get(c.refusesKnown) ?? new Set<string>()).add(c.id));
      } else if (!entry) fail('no reference result');
      else if (entry.error) {
        const kind = refusalKind(entry.error);
        if ('outputs' in r) fail(`the reference refuses (${entry.error}) but imgpu returned a result`);
        else if (!kind) fail(`the reference raised ${entry.error}, an exception that is no refusal of bad input (a reference bug?)`);
        else if (!(r.error instanceof kind)) fail(`the reference refuses (${entry.error}); imgpu threw ${errText(r.error)}, not an ${kind.name}`);
      } else if ('error' in r) {
        fail(`imgpu threw ${errText(r.error)} where the reference gives a result`);
      } else {
        for (const name of [...(entry.arrays ?? []), ...Object.keys(entry.values ?? {})]) {
          // A saturating filter's float result is the reference's witness of rounding ties, not a library output.
          if (name === 'float' && !('float' in r.outputs)) continue;
          const d = differ(r.outputs[name], c, name, refs, entry, seen);
          if (d) fail(d);
        }
      }
    }
  }
  tellKnown(t, seen, refused);
  if (refusedByLimit.length) t.diagnostic(`refused by the small binding limit (GpuLimitError, before any work): ${refusedByLimit.join(', ')}`);
  assert.equal(failures.length, 0, `${failures.length} failing case paths of ${ran.size} (seed ${masterSeed()}):\n${failures.join('\n')}`);
}

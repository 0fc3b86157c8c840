import { InvalidArgumentError } from '../core/errors.js';
import type { Operation } from '../core/op.js';
import { defaultMemory, isZarrPath, openOmeZarr, readImage, runChunked, writeImage, type ChunkedReport, type OmeVersion, type ZarrCompressor, type ZarrWriteOptions } from '../io/index.js';
import { parseArgs, rejectUnknown } from './args.js';
import { acquire, type Execution } from '../engine/context.js';
import { slabRunner, volumePlan } from '../engine/volume.js';
import { EXIT_OK } from '../engine/exit.js';

/** The OME-Zarr flags of volume commands (and convert): where a .zarr is written, and the memory a chunked run may take. */
export const ZARR_FLAGS = ['memory', 'ome', 'levels', 'chunks', 'compressor', 'clevel', 'chunk-threads'] as const;

export const ZARR_HELP = `OME-Zarr (a .zarr folder in or out; docs/volumes.md):
  --memory <size>                 memory a chunked .zarr → .zarr run may take, e.g. 512M, 4G (default: a quarter of RAM)
  --ome <0.4|0.5>                 OME-Zarr written: 0.4 on Zarr v2 (default) or 0.5 on Zarr v3
  --levels <n>                    multiscale pyramid levels written (default 1: full resolution only)
  --chunks <N|WxHxD>              chunk shape written (default: the input Zarr's, else 64)
  --compressor <gzip|zstd|blosc|raw>  chunk codec written (default gzip), --clevel <n> its level
  --chunk-threads <n>             threads reading+decoding and encoding+writing chunks (default: the cores; 0: main thread)`;

/** A size in bytes from '123', '512K', '64M', '2G' (binary units). */
export function parseSize(v: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)i?B?$/i.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`--${flag} expects a size such as 512M or 4G, got '${v}'`);
  const n = Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase());
  if (!(n >= 1)) throw new InvalidArgumentError(`--${flag} must be positive, got '${v}'`);
  return Math.floor(n);
}

/** --chunk-threads as a count (checked by io before any work), undefined for the default. */
function chunkThreads(flags: Map<string, string>): number | undefined {
  const v = flags.get('chunk-threads');
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`--chunk-threads expects a whole number, got '${v}'`);
  return Number(v);
}

/** The layout of a written OME-Zarr from the flags (checked by io before any work). */
export function zarrWriteOptions(flags: Map<string, string>): ZarrWriteOptions {
  const o: ZarrWriteOptions = {};
  if (flags.has('ome')) o.ome = flags.get('ome') as OmeVersion;
  if (flags.has('levels')) o.levels = Number(flags.get('levels'));
  if (flags.has('compressor')) o.compressor = flags.get('compressor') as ZarrCompressor;
  if (flags.has('clevel')) o.level = Number(flags.get('clevel'));
  const c = flags.get('chunks');
  if (c !== undefined) {
    const d = c.split(/[x×]/).map(Number);
    if (d.length !== 1 && d.length !== 3) throw new InvalidArgumentError(`--chunks expects N or WxHxD, got '${c}'`);
    o.chunks = (d.length === 1 ? [d[0], d[0], d[0]] : [d[2], d[1], d[0]]) as [number, number, number];
  }
  return o;
}

/** The execution of a chunked run: one path (a Zarr output is made once), --device both refused. */
async function chunkedExecution(flags: Map<string, string>): Promise<Execution> {
  const device = flags.get('device') ?? 'auto';
  if (device === 'both') throw new InvalidArgumentError('--device both compares two results in memory; a chunked .zarr run makes one: use --device cpu or gpu');
  return acquire(device, flags);
}

/** A report of a chunked run, in words or as JSON fields. */
function describe(r: ChunkedReport, memory: number): { json: Record<string, unknown>; text: string } {
  // The process's peak resident memory (getrusage), modules, threads and GPU driver included.
  const peak = process.resourceUsage().maxRSS * 1024;
  const json = { shape: r.shape, dtype: r.outDtype, slabPlanes: r.slabPlanes, slabs: r.slabs, skipped: r.skipped, estimateBytes: r.estimate, memoryBytes: memory, peakRssBytes: peak, levels: r.levels, whole: r.whole, chunkThreads: r.chunkThreads, readAhead: r.readAhead };
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const text = `  chunked: ${r.slabs} slab(s) of ${r.slabPlanes} plane(s)${r.skipped ? `, ${r.skipped} already done` : ''}${r.whole ? ' (the operation needs the whole volume)' : ''}, ~${mib(r.estimate)} each of --memory ${mib(memory)}; ${r.levels} level(s); peak resident ${mib(peak)}`;
  return { json, text };
}

/**
 * `imgpu <op> in.zarr out.zarr …`: the operation chunk range by chunk range with its halo (io/chunked.ts), in the
 * memory budget, resumable; the result equals the operation on the whole volume.
 */
export async function runZarrOp(op: Operation, inPath: string, outPath: string, params: Record<string, unknown>, flags: Map<string, string>): Promise<number> {
  const memory = flags.has('memory') ? parseSize(flags.get('memory')!, 'memory') : defaultMemory();
  const write = zarrWriteOptions(flags);
  const src = await openOmeZarr(inPath);
  const { reach, outDtype } = volumePlan(op, params, src);
  const exec = await chunkedExecution(flags);
  try {
    for (const w of exec.warnings) console.error(w);
    const run = slabRunner(op, params, exec);
    const quiet = flags.has('quiet') || flags.has('json');
    const report = await runChunked(inPath, outPath, run, reach, outDtype, {
      memory, write, chunkThreads: chunkThreads(flags), collect: () => exec.pool.collect?.() ?? Promise.resolve(), recipe: JSON.stringify({ op: op.name, params, input: inPath, device: exec.gpu ? 'gpu' : 'cpu' }),
      progress: quiet ? undefined : (d, t) => process.stderr.write(`\r${op.name}: slab ${d} of ${t}${d === t ? '\n' : ''}`),
    });
    const d = describe(report, memory);
    if (flags.has('json')) console.log(JSON.stringify({ op: op.name, input: inPath, output: outPath, params, device: exec.gpu ? 'gpu' : 'cpu', ...d.json }));
    else console.log(`${op.name} ${inPath} (${report.shape.join('×')} ${src.dtype}) on the ${exec.gpu ? 'GPU' : 'CPU'}\n${d.text}\nwrote ${outPath}`);
    return EXIT_OK;
  } finally {
    await exec.close();
  }
}

/**
 * `imgpu convert <in> <out>`: NIfTI, DICOM, .npy ↔ OME-Zarr (with a pyramid), or an OME-Zarr re-chunked and
 * recompressed (chunk by chunk in the memory budget: the codec-only copy the benchmark compares against).
 */
export async function convertCommand(argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['json', 'quiet', 'help']));
  const usage = `usage: imgpu convert <in> <out> [--levels n] [--ome 0.4|0.5] [--chunks N|WxHxD] [--compressor gzip|zstd|blosc|raw] [--memory size]\n  a volume (.nii, .nii.gz, DICOM, .npy, .zarr) written as another (.zarr, .nii.gz, .nii, .npy)\n${ZARR_HELP}`;
  if (flags.has('help')) {
    console.log(usage);
    return EXIT_OK;
  }
  rejectUnknown(flags, [...ZARR_FLAGS, 'json', 'quiet']);
  if (positional.length !== 2) throw new InvalidArgumentError(usage);
  const [inPath, outPath] = positional;
  const write = zarrWriteOptions(flags);
  if (isZarrPath(inPath) && isZarrPath(outPath)) {
    const memory = flags.has('memory') ? parseSize(flags.get('memory')!, 'memory') : defaultMemory();
    const src = await openOmeZarr(inPath);
    const report = await runChunked(inPath, outPath, async (slab) => slab, { before: 0, after: 0 }, src.dtype, { memory, write, chunkThreads: chunkThreads(flags), recipe: JSON.stringify({ op: 'convert', input: inPath }) });
    const d = describe(report, memory);
    console.log(flags.has('json') ? JSON.stringify({ op: 'convert', input: inPath, output: outPath, ...d.json }) : `convert ${inPath} → ${outPath}\n${d.text}`);
    return EXIT_OK;
  }
  const img = await readImage(inPath);
  await writeImage(outPath, img, { zarr: write });
  console.log(flags.has('json') ? JSON.stringify({ op: 'convert', input: inPath, output: outPath, shape: img.shape, dtype: img.dtype }) : `convert ${inPath} (${img.shape.join('×')} ${img.dtype}) → ${outPath}`);
  return EXIT_OK;
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImgpuError, InvalidArgumentError } from '../core/errors.js';
import { HISTOGRAM_METHODS } from '../ops/histogram/gpu.js';
import type { Dtype, Image } from '../core/image.js';
import { paramHelp, resolveParams } from '../core/params.js';
import type { Operation, RunOptions } from '../core/op.js';
import type { OpResult } from '../core/timings.js';
import { checkWritable, checkWriteOptions, FORMATS, readImage, writableExtensions, writeImage, type RawLayout, type WriteOptions } from '../io/index.js';
import { describeComparison } from '../core/compare.js';
import { assertNodeVersion, endWithParent } from '../node/runtime.js';
import { DEVICE_FLAGS, flagNames, paramFlags, parseArgs, rejectUnknown, RUN_BOOLEANS, RUN_FLAGS } from './args.js';
import { EXIT_DISAGREE, EXIT_OK } from '../engine/exit.js';
import { channelsRead, COMMANDS, imageFlags, lightSteps, paramsAsRun } from '../engine/commands.js';
import { acquire, namedAdapter, runGpuOrCpu, type DeviceChoice, type Execution } from '../engine/context.js';
import { markStartup, startupReport } from '../engine/startup.js';
import { formatTimings } from '../core/timings.js';
import { infoCommand } from './info.js';
import { batchFormat, isBatch } from '../engine/batch/plan.js';
import { runBatchCommand, type BatchFlags } from './batch.js';
import { cliWording } from '../engine/flags.js';
import type { JpegOnGpu } from '../node/jpeg-gpu.js';
import { downloaded, FAIL_ON_HELP, failOnOption, JPEG_HELP, jpegInputOnGpu, jpegOption, jpegPathOf } from '../engine/jpeg.js';
import { isZarrPath } from '../io/zarr.js';
import { ALL_OPERATIONS } from '../ops/registry.js';
import { convertCommand, runZarrOp, ZARR_FLAGS, ZARR_HELP, zarrWriteOptions } from './zarr.js';
import { pipelineCacheFile, pipelineCacheOption, prefetchRemembered, rememberPipelines, type PipelineRunKey } from './pipeline-cache.js';

const COMMON = `Common options:
  --device <auto|cpu|gpu|both>    where to run (default auto: the GPU, or the CPU with a note where there is no GPU
                                  adapter or only a software one, e.g. lavapipe, which is slower than the CPU path;
                                  one image through light steps only — equalize, gamma, Otsu — runs on the CPU,
                                  faster than creating the GPU device)
  --adapter <name>                adapter name substring, e.g. llvmpipe (default env IMGPU_ADAPTER): that adapter,
                                  software or not; exit 4 if none matches
  --backend <vulkan|opengles>     Dawn backend (default env IMGPU_BACKEND, else vulkan)
  --threads <n>                   CPU worker threads (default: cores, at most 16)
  --repeat <n>                    run n times and report the last run (the first includes shader compilation)
  --shape <WxH[xD]> --dtype <uint8|uint16|float32>   layout of a headerless .raw input
  --compression <0-9>             PNG zlib level, as cv2.imwrite's IMWRITE_PNG_COMPRESSION (default: cv2's own,
                                  level 1, Sub filter, RLE: its bytes; 6–9 smaller and several times slower)
  --quality <1-100>               JPEG quality (default 95)
  --json                          print one JSON object on stdout instead of text (with "jpeg": the path that decoded a
                                  JPEG input, gpu or cpu)
  --pipeline-cache <dir|off>      where a single image's GPU run remembers the pipelines it compiled, so that the same
                                  command asks for them all at once next time (default: imgpu-pipelines-<uid> in the
                                  temporary folder)
${JPEG_HELP}
${FAIL_ON_HELP}
  --keep-gray                     a gray JPEG stays one channel under filter, morph, gamma and CLAHE (default: three
                                  equal channels, as cv2.imread gives it, so the output is OpenCV's file)
  --max-volume-bytes <n>          the most bytes of voxel data a .nii.gz may declare, checked from its header before
                                  inflating (default 4294967296: 4 GiB); more is refused, exit 3
${ZARR_HELP}
Batch mode (<in> a folder or several files, <out> a folder): every image in, one output each, atomically written.
  <out> must not be a folder the inputs are in, and no two inputs may give one output name (exit 2 before any work).
  An output is up to date, and skipped, when <out>/.imgpu-batch.json records that it was made from the same input
  (path, size, modification time) by the same operation, parameters and format/codec options, and it is unchanged.
  --recursive                     include sub-folders (their layout is kept under <out>)
  --overwrite                     redo outputs that are up to date too (default: skip them)
  --format <${writableExtensions('node', true).map((e) => e.slice(1)).join('|')}>  output format (default: the input's)
  --quiet                         no progress on stderr
  --jobs <n>                      split the batch over n processes, each with its own GPU device and share of the
                                  cores (default 1; a GPU batch is paced by one process's main thread)
  --cpu-lane <n|auto>             images processed whole on the CPU at once beside the GPU, the smallest first, while
                                  the GPU takes the largest (default auto: none, measured faster); the same bytes
  Exit 9: some inputs failed (each is reported; the others are processed).`;
const COMMON_FLAGS = [...DEVICE_FLAGS, ...RUN_FLAGS, 'pipeline-cache', 'shape', 'dtype', 'recursive', 'overwrite', 'format', 'compression', 'quality', 'jobs', 'jpeg', 'cpu-lane', 'fail-on', 'max-volume-bytes', 'keep-gray', ...ZARR_FLAGS];
const COMMON_BOOLEANS = [...RUN_BOOLEANS, 'recursive', 'overwrite', 'keep-gray'];

/** --cpu-lane: 'auto' (the default) or a whole number of images, 0–256; an InvalidArgumentError (exit 2) otherwise. */
function cpuLaneOption(flags: Map<string, string>): number | 'auto' {
  const v = flags.get('cpu-lane') ?? 'auto';
  if (v === 'auto') return v;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 256) throw new InvalidArgumentError(`--cpu-lane must be auto or an integer 0–256, got '${v}'`);
  return n;
}

/** --max-volume-bytes: the most bytes of voxel data a .nii.gz may declare (ReadOptions.maxVolumeBytes); exit 2 for a value not a positive integer. */
function maxVolumeBytesOption(flags: Map<string, string>): number | undefined {
  const v = flags.get('max-volume-bytes');
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < 1) throw new InvalidArgumentError(`--max-volume-bytes must be a positive integer (bytes), got '${v}'`);
  return Number(v);
}

/** The layout of a .raw input from --shape WxH[xD] (x first, as image sizes are written) and --dtype. */
function rawLayout(flags: Map<string, string>): RawLayout | undefined {
  const shape = flags.get('shape'), dtype = flags.get('dtype');
  if (!shape && !dtype) return undefined;
  if (!shape || !dtype) throw new InvalidArgumentError('a .raw input needs both --shape WxH[xD] and --dtype');
  if (!['uint8', 'uint16', 'float32'].includes(dtype)) throw new InvalidArgumentError(`--dtype must be uint8, uint16 or float32, got ${dtype}`);
  const dims = shape.split(/[x×]/).map(Number);
  if (dims.length < 2 || dims.length > 3 || dims.some((n) => !Number.isInteger(n) || n < 1)) throw new InvalidArgumentError(`--shape expects WxH or WxHxD, got '${shape}'`);
  return { shape: dims.reverse(), dtype: dtype as Dtype };
}

/** The registry's formats, one line each: extensions, what they hold, read or written. */
function formatsHelp(): string {
  return FORMATS.map((f) => `  ${[...f.extensions, ...(f.aliases ?? [])].join(' ').padEnd(16)}${f.title}: ${f.holds}`).join('\n');
}

function usage(): string {
  // At least two spaces between a synopsis and its summary, however long the synopsis.
  const ops = Object.entries(COMMANDS).map(([n, c]) => `  ${synopsis(n, c)}  `.padEnd(44) + c.summary).join('\n');
  return `imgpu — image processing on the GPU (WebGPU) with a CPU path beside every GPU path

Usage:
${ops}
  imgpu gmu <atomic|subhist> <equalize|otsu|segmentation> <image>   CPU and GPU side by side (the GMU tool)
  imgpu classifier convert <opencv.xml> <waldboost.xml>   an OpenCV LBP cascade written as a WaldBoost classifier (exactly)
  imgpu train --positives P --negatives DIR --out DIR   trains an LBP cascade or WaldBoost classifier (docs/training.md)
  imgpu convert <in> <out> [--levels n]     a volume between NIfTI/DICOM/.npy and OME-Zarr (pyramid, --ome 0.4|0.5)
  imgpu info [--adapter name] [--json]      the GPU adapter, its limits and features
  imgpu adapters [--json]                   the GPU adapters available (names for --adapter)
  imgpu submit <inputs…|folder> <out> "<pipeline>" --redis URL   a batch queued on Redis for workers (docs/scale-out.md)
  imgpu worker --redis URL [--device gpu|cpu] [--concurrency n]  runs queued jobs until SIGTERM
  imgpu status <batch> --redis URL [--watch] [--json]  a queued batch's jobs, images, rate, failures; imgpu retry <batch>

Formats (docs/formats.md; a file's content decides where the extension does not):
${formatsHelp()}
Colour is converted to gray (OpenCV's RGB→gray), except by clahe, which equalizes the Y of OpenCV's YCrCb and keeps
the chroma. NIfTI/DICOM/.npy ↔ OME-Zarr: imgpu convert; .zarr → .zarr runs in chunks within --memory.
${COMMON}`;
}

function synopsis(name: string, cmd: Operation): string {
  return `imgpu ${name} ${cmd.args.map((p) => `<${p}>`).join(' ')} [options]`;
}

/** A single image's input and the images its flags name (histogram's --mask), read and decoded; warnings said. */
async function readInputs(inPath: string, cmd: Operation, flags: Map<string, string>, read: Parameters<typeof readImage>[1]) {
  const img = await readImage(inPath, read);
  for (const w of img.warnings ?? []) console.error(`warning: ${inPath}: ${w}`);
  const images: Record<string, Image | undefined> = {};
  // An image flag (--mask) is read under the input's --fail-on and --max-volume-bytes.
  for (const f of imageFlags(cmd)) if (flags.has(f)) images[f] = await readImage(flags.get(f)!, { gray: true, failOn: read?.failOn, maxVolumeBytes: read?.maxVolumeBytes });
  markStartup('read');
  return { img, images };
}

/**
 * The execution (engine/context.ts acquire), created while `reading` runs. Where the read fails its error is the
 * one reported, as when reading came first, and a device made meanwhile is closed.
 */
async function acquireBeside(reading: Promise<unknown>, flags: Map<string, string>, device: string, onDevice: (exec: Execution) => void): Promise<Execution> {
  const acquiring = acquire(device, flags).then((exec) => {
    markStartup('device');
    onDevice(exec);
    return exec;
  });
  // Its refusal (a bad --device, no adapter) is awaited below, after the read: handled now, not an unhandled rejection.
  acquiring.catch(() => undefined);
  try {
    await reading;
  } catch (e) {
    await acquiring.then((x) => x.close(), () => undefined);
    throw e;
  }
  return acquiring;
}

/**
 * --device for one image: as given; left to auto, the CPU where every step is light (lightSteps) and no adapter is
 * named — creating the GPU device alone costs more than such a run (H200, one JPEG, whole process, equalize: 0.25 MP
 * 165 ms on the CPU against 475–524 with --device gpu, 12 MP 397–420 against 631–667), and the two paths give the same
 * bytes. Heavier steps keep the GPU (Gaussian σ 2 at 12 MP: 1.8–1.9 s on the CPU, 0.7–0.9 s on the GPU).
 */
function singleImageDevice(cmd: Operation, params: Record<string, unknown>, flags: Map<string, string>): string {
  const asked = flags.get('device');
  if (asked !== undefined) return asked;
  return !namedAdapter(flags) && lightSteps(cmd, params) ? 'cpu' : 'auto';
}

async function runOp(name: string, cmd: Operation, argv: string[], quietOutput = false): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set([...COMMON_BOOLEANS, ...flagNames(cmd.params.filter((p) => p.kind === 'bool'))]));
  if (flags.has('help')) {
    console.log(`${synopsis(name, cmd)}\n  ${cmd.summary}\n${paramHelp(cmd.params.filter((p) => !cmd.args.includes(p.name)))}\n${COMMON}`);
    return EXIT_OK;
  }
  rejectUnknown(flags, [...COMMON_FLAGS, ...flagNames(cmd.params.filter((p) => !cmd.args.includes(p.name)))]);
  // <in> may take several paths (batch mode): the positionals before and after it take one each.
  const at = cmd.args.indexOf('in');
  const after = cmd.args.length - at - 1;
  if (positional.length < cmd.args.length || (positional.length > cmd.args.length && !cmd.args.includes('out'))) {
    throw new InvalidArgumentError(`imgpu ${name} needs ${cmd.args.map((p) => `<${p}>`).join(' and ')} (got ${positional.length} arguments)`);
  }
  const inputs = positional.slice(at, positional.length - after);
  const rest = [...positional.slice(0, at), inputs[0], ...positional.slice(positional.length - after)];
  // Positionals other than <in> and <out> are declared parameters (e.g. morph's <op>).
  const named = new Map(cmd.args.map((p, i) => [p, rest[i]]));
  for (const [p, v] of named) if (p !== 'in' && p !== 'out') flags.set(p, v);
  const inPath = named.get('in')!, outPath = named.get('out');
  // Image parameters (e.g. histogram's --mask) are paths, read below with the input.
  const params = resolveParams(name, cmd.params, paramFlags(cmd.params.filter((p) => p.kind !== 'image'), flags));
  const repeat = Number(flags.get('repeat') ?? 1);
  if (!Number.isInteger(repeat) || repeat < 1) throw new InvalidArgumentError('--repeat must be a positive integer');
  const json = flags.has('json');
  const jpeg = jpegOption(flags);
  const failOn = failOnOption(flags);
  const maxVolumeBytes = maxVolumeBytesOption(flags);
  // The defaults add nothing to the read options (nor to a batch's recipe: outputs made before stay up to date).
  const lenient = { ...(failOn === 'warning' ? {} : { failOn }), ...(maxVolumeBytes === undefined ? {} : { maxVolumeBytes }) };
  const prepared = await paramsAsRun(cmd, params); // a chain checked, files the parameters name read once
  // --gray on a per-channel command (filter, morph): the input is read gray, as cv2.imread(IMREAD_GRAYSCALE) reads it;
  // a pipeline reads colour where its first step takes it.
  const colour = cmd.readsColour(prepared);
  const num = (f: string) => (flags.has(f) ? Number(flags.get(f)) : undefined);
  const write: WriteOptions = { compression: num('compression'), quality: num('quality'), zarr: zarrWriteOptions(flags) };
  checkWriteOptions(write);
  const jobs = Number(flags.get('jobs') ?? 1);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new InvalidArgumentError(`--jobs must be an integer 1–64, got ${flags.get('jobs')}`);
  const cpuLane = cpuLaneOption(flags);
  // OME-Zarr to OME-Zarr: chunk range by chunk range within --memory (a .zarr on one side only is read or written whole).
  if (outPath && inputs.length === 1 && isZarrPath(inPath) && isZarrPath(outPath) && ALL_OPERATIONS[name]) return runZarrOp(ALL_OPERATIONS[name], inPath, outPath, prepared, flags);
  if (outPath && cmd.writes && !isZarrPath(inPath) && (await isBatch(inputs, outPath))) {
    batchFormat(flags.get('format')); // a bad --format is exit 2 before the device is acquired
    // imgpu/batch's steps: the pipeline's text (its records name the chain), or this operation with its parameters.
    const steps = name === 'pipeline' ? (params.chain as string) : [{ op: name, params }];
    const batchFlags: BatchFlags = {
      inputs, out: outPath, recursive: flags.has('recursive'), overwrite: flags.has('overwrite'), quiet: flags.has('quiet'), json, format: flags.get('format'), raw: rawLayout(flags),
      failOn, compression: write.compression, quality: write.quality, jpeg, cpuLane, ...(flags.has('keep-gray') ? { keepGray: true } : {}),
    };
    // --jobs N: N processes acquire their devices as the flags say; this one acquires none.
    if (jobs > 1) return await runBatchCommand(steps, { device: (flags.get('device') ?? 'auto') as DeviceChoice, adapter: flags.get('adapter'), backend: flags.get('backend'), threads: num('threads') }, { ...batchFlags, processes: jobs });
    const exec = await acquire(flags.get('device') ?? 'auto', flags);
    markStartup('device');
    try {
      for (const w of exec.warnings) console.error(w);
      return await runBatchCommand(steps, exec, batchFlags);
    } finally {
      await exec.close();
    }
  }
  if (outPath && cmd.writes) await checkWritable(outPath); // known before reading or computing anything
  const layout = rawLayout(flags);
  // The input is read and decoded (off the main thread: file reads, sharp, the JPEG codec) while the device is created.
  const channels = channelsRead(colour, flags.has('keep-gray'));
  const reading = readInputs(inPath, cmd, flags, { ...channels, raw: layout, ...lenient });
  // The pipelines the same command used last time, asked for at once as soon as the device exists (pipeline-cache.ts).
  const cacheDir = pipelineCacheOption(flags);
  const runKey: PipelineRunKey = { command: name, params, input: inPath, output: outPath, options: { ...channels, jpeg, raw: layout } };
  const cache: { file?: string; prefetched: number | null } = { prefetched: null };
  const exec = await acquireBeside(reading, flags, singleImageDevice(cmd, params, flags), (x) => {
    if (!x.gpu || !cacheDir) return;
    cache.file = pipelineCacheFile(cacheDir, x.gpu, runKey);
    cache.prefetched = prefetchRemembered(x.gpu, cacheDir, cache.file);
  });
  const { img, images } = await reading;
  let onGpu: JpegOnGpu | undefined;
  try {
    for (const w of exec.warnings) console.error(w);
    // --jpeg gpu: a JPEG input decoded on the GPU, resident, for the GPU run (the CPU run reads `img`).
    onGpu = exec.gpu ? await jpegInputOnGpu(exec.gpu, inPath, channels, jpeg, undefined, lenient.failOn) : undefined;
    const results: Record<string, OpResult<unknown>> = {};
    const gpuInput = (onGpu?.image ?? img) as Image;
    for (let r = 0; r < repeat; r++) {
      const run = (x: Image, on: RunOptions) => cmd.run(x, { ...prepared, ...images }, on);
      if (exec.cpu) results.cpu = await run(img, { pool: exec.pool });
      if (exec.gpu) {
        const { on, result } = await runGpuOrCpu(exec, async () => downloaded(await run(gpuInput, { gpu: exec.gpu, pool: exec.pool, profile: true })), () => run(img, { pool: exec.pool }));
        results[on] = result;
      }
      markStartup('op');
    }
    const jpegPath = jpegPathOf(inPath, results.gpu ? onGpu : undefined);
    const cmp = results.cpu && results.gpu ? cmd.compare(results.cpu.output, results.gpu.output) : undefined;
    const output = (results.gpu ?? results.cpu).output;
    if (outPath && cmd.writes) await writeImage(outPath, output as Image, write);
    markStartup('written');
    if (exec.gpu && cacheDir && cache.file) rememberPipelines(exec.gpu, cacheDir, cache.file);
    const extra = cmd.report(results.gpu ?? results.cpu, params);
    const adapter = exec.gpu?.adapter;
    if (json) {
      console.log(JSON.stringify({
        op: name, input: { path: inPath, shape: img.shape, dtype: img.dtype }, output: outPath ?? null, params, ...extra.json,
        adapter: adapter ? `${adapter.vendor} ${adapter.architecture} ${adapter.description}`.trim() : null, jpeg: jpegPath ?? null, ...(img.warnings ? { warnings: img.warnings } : {}),
        cpu: results.cpu?.timings ?? null, gpu: results.gpu?.timings ?? null,
        identical: cmp ? cmp.identical : null, ...(cmp && (!cmp.identical || cmp.tolerance !== undefined) ? { mismatches: cmp.mismatches, maxAbsDiff: cmp.maxAbsDiff, tolerance: cmp.tolerance } : {}),
        ...startupReport(), pipelines_prefetched: cache.prefetched,
      }));
    } else {
      console.log(`${name} ${inPath} (${img.shape.join('×')} ${img.dtype})${repeat > 1 ? `, run ${repeat} of ${repeat}` : ''}`);
      if (results.cpu) console.log(formatTimings('cpu', results.cpu.timings) + ` [${exec.pool.size} threads]`);
      if (results.gpu) console.log(formatTimings('gpu', results.gpu.timings) + ` [${adapter?.description || adapter?.vendor}]`);
      if (jpegPath && onGpu) console.log(`  jpeg: decoded on the ${jpegPath}${onGpu.fallback ? ` (${onGpu.fallback})` : ''}`);
      for (const line of extra.text) console.log(line);
      if (cmp) console.log(`  ${describeComparison(cmp)}`);
      if (outPath && !quietOutput) console.log(`wrote ${outPath}`);
    }
    return cmp && !cmp.identical ? EXIT_DISAGREE : EXIT_OK;
  } finally {
    onGpu?.image.release();
    await exec.close();
  }
}

const GMU_METHODS: Record<string, { command: string; flags: string[] }> = {
  equalize: { command: 'equalize', flags: [] },
  otsu: { command: 'threshold', flags: ['--method', 'otsu'] },
  segmentation: { command: 'threshold', flags: ['--method', 'adaptive'] },
};

/**
 * The classic form of the GMU project's tool: `imgpu gmu <atomic|subhist> <equalize|otsu|segmentation> <image>`
 * runs the method on the CPU and on the GPU with the chosen histogram algorithm and prints both times (and
 * whether they agree). Other options pass through (e.g. --window, --json, --out PATH to keep the result).
 */
async function gmuCommand(argv: string[]): Promise<number> {
  const [hist, method, image, ...rest] = argv;
  if (!(HISTOGRAM_METHODS as readonly string[]).includes(hist) || !GMU_METHODS[method] || !image) {
    throw new InvalidArgumentError(`usage: imgpu gmu <${HISTOGRAM_METHODS.join('|')}> <${Object.keys(GMU_METHODS).join('|')}> <image> [options]`);
  }
  const o = rest.indexOf('--out');
  const keep = o >= 0 ? rest.splice(o, 2)[1] : undefined;
  const dir = keep ? undefined : mkdtempSync(join(tmpdir(), 'imgpu-gmu-'));
  const out = keep ?? join(dir!, 'result.png');
  const { command, flags } = GMU_METHODS[method];
  try {
    return await runOp(command, COMMANDS[command], [image, out, '--device', 'both', '--hist', hist, ...flags, ...rest], !keep);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** The scale-out commands (src/cli/scale.ts over src/engine/scale, imported when one is run). */
const SCALE = ['submit', 'worker', 'status', 'retry'];

export async function main(argv: string[]): Promise<number> {
  markStartup('modules');
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help' || command === '-h') {
    console.log(usage());
    return command ? 0 : 2;
  }
  assertNodeVersion();
  if (command === 'info') return infoCommand(rest);
  if (command === 'gmu') return gmuCommand(rest);
  // Detection and training (their XML parser and cascades) are loaded only for their own commands.
  if (command === 'detect') return (await import('./detect.js')).detectCommand(rest);
  if (command === 'classifier') return (await import('./detect.js')).classifierCommand(rest);
  if (command === 'train') return (await import('./train.js')).trainCommand(rest);
  if (command === 'adapters') return (await import('./detect.js')).adaptersCommand(rest);
  if (command === 'convert') return convertCommand(rest);
  // Scale-out (Redis, BullMQ) is loaded only for its own commands.
  if (SCALE.includes(command)) return (await import('./scale.js')).SCALE_COMMANDS[command](rest);
  const op = COMMANDS[command];
  if (!op) throw new InvalidArgumentError(`unknown command '${command}' (see imgpu --help)`);
  return runOp(command, op, rest);
}

/**
 * Ends the process as soon as the command is done, once stdout and stderr are flushed, instead of when the event loop
 * drains: that teardown ran the native finalizers (Dawn's instance, the Vulkan driver unloading), ~100 ms a GPU
 * command on lavapipe (issue 40 item 5). Every file was awaited before main returned.
 */
async function exitNow(): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise((done) => s.write('', done))));
  process.exit();
}

endWithParent();
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof ImgpuError) {
    console.error(`imgpu: error: ${cliWording(e.message)}`);
    process.exitCode = e.exitCode;
  } else {
    console.error(`imgpu: internal error: ${(e as Error)?.message ?? e}${process.env.IMGPU_DEBUG ? `\n${(e as Error)?.stack}` : ' (set IMGPU_DEBUG=1 for a stack trace)'}`);
    process.exitCode = 70;
  }
}
await exitNow();

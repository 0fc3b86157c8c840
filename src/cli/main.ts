import { compareImages } from '../core/compare.js';
import { ImgpuError, InvalidArgumentError } from '../core/errors.js';
import type { Image } from '../core/image.js';
import { paramHelp, resolveParams, type ParamSpec } from '../core/params.js';
import type { OpResult } from '../core/timings.js';
import { readImage, writeImage } from '../io/index.js';
import { assertNodeVersion } from '../node/runtime.js';
import { equalize, equalizeParams } from '../ops/equalize/index.js';
import { paramFlags, parseArgs, rejectUnknown } from './args.js';
import { acquire, type Execution } from './context.js';
import { formatTimings } from './format.js';
import { infoCommand } from './info.js';

/** An image → image operation as the CLI sees it: declared parameters and a runner for either path. */
interface ImageOpCommand {
  summary: string;
  params: readonly ParamSpec[];
  run(img: Image, params: Record<string, unknown>, on: { gpu?: Execution['gpu']; pool: Execution['pool'] }): Promise<OpResult<Image>>;
}

const OPS: Record<string, ImageOpCommand> = {
  equalize: {
    summary: 'global histogram equalization (bit-identical to cv2.equalizeHist on 8-bit)',
    params: equalizeParams,
    run: (img, _p, on) => equalize(img, { gpu: on.gpu, pool: on.pool }),
  },
};

const COMMON = `Common options:
  --device <auto|cpu|gpu|both>    where to run (default auto: GPU if an adapter exists, else CPU with a warning)
  --adapter <name>                adapter name substring, e.g. llvmpipe (default env IMGPU_ADAPTER)
  --backend <vulkan|opengles>     Dawn backend (default env IMGPU_BACKEND, else vulkan)
  --threads <n>                   CPU worker threads (default: cores, at most 16)
  --repeat <n>                    run n times and report the last run (the first includes shader compilation)
  --json                          print one JSON object on stdout instead of text`;
const COMMON_FLAGS = ['device', 'adapter', 'backend', 'threads', 'repeat', 'json', 'help'];

function usage(): string {
  const ops = Object.entries(OPS).map(([n, c]) => `  imgpu ${n} <in> <out> [options]`.padEnd(44) + c.summary).join('\n');
  return `imgpu — image processing on the GPU (WebGPU) with a CPU path beside every GPU path

Usage:
${ops}
  imgpu info [--adapter name] [--json]      the GPU adapter, its limits and features

Formats: .png .jpg .tif (8/16-bit), .npy (uint8/uint16/float32, 2D/3D). Colour is converted to gray (OpenCV's RGB→gray).
${COMMON}`;
}

async function runImageOp(name: string, cmd: ImageOpCommand, argv: string[]): Promise<number> {
  const { positional, flags } = parseArgs(argv, new Set(['json', 'help']));
  if (flags.has('help')) {
    console.log(`imgpu ${name} <in> <out> [options]\n  ${cmd.summary}\n${paramHelp(cmd.params)}\n${COMMON}`);
    return 0;
  }
  rejectUnknown(flags, [...COMMON_FLAGS, ...cmd.params.map((p) => p.name)]);
  if (positional.length !== 2) throw new InvalidArgumentError(`imgpu ${name} needs <in> and <out> (got ${positional.length} paths)`);
  const [inPath, outPath] = positional;
  const params = resolveParams(name, cmd.params, paramFlags(cmd.params, flags));
  const repeat = Number(flags.get('repeat') ?? 1);
  if (!Number.isInteger(repeat) || repeat < 1) throw new InvalidArgumentError('--repeat must be a positive integer');
  const json = flags.has('json');
  const img = await readImage(inPath, { gray: true });
  const exec = await acquire(flags.get('device') ?? 'auto', flags);
  try {
    for (const w of exec.warnings) console.error(w);
    const results: Record<string, OpResult<Image>> = {};
    for (let r = 0; r < repeat; r++) {
      if (exec.cpu) results.cpu = await cmd.run(img, params, { pool: exec.pool });
      if (exec.gpu) results.gpu = await cmd.run(img, params, { gpu: exec.gpu, pool: exec.pool });
    }
    const cmp = results.cpu && results.gpu ? compareImages(results.cpu.output, results.gpu.output) : undefined;
    const output = (results.gpu ?? results.cpu).output;
    await writeImage(outPath, output);
    const adapter = exec.gpu?.adapter;
    if (json) {
      console.log(JSON.stringify({
        op: name, input: { path: inPath, shape: img.shape, dtype: img.dtype }, output: outPath, params,
        adapter: adapter ? `${adapter.vendor} ${adapter.architecture} ${adapter.description}`.trim() : null,
        cpu: results.cpu?.timings ?? null, gpu: results.gpu?.timings ?? null,
        identical: cmp ? cmp.identical : null, ...(cmp && !cmp.identical ? { mismatches: cmp.mismatches, maxAbsDiff: cmp.maxAbsDiff } : {}),
      }));
    } else {
      console.log(`${name} ${inPath} (${img.shape.join('×')} ${img.dtype})${repeat > 1 ? `, run ${repeat} of ${repeat}` : ''}`);
      if (results.cpu) console.log(formatTimings('cpu', results.cpu.timings) + ` [${exec.pool.size} threads]`);
      if (results.gpu) console.log(formatTimings('gpu', results.gpu.timings) + ` [${adapter?.description || adapter?.vendor}]`);
      if (cmp) console.log(cmp.identical ? '  CPU and GPU outputs are identical' : `  CPU and GPU outputs DIFFER: ${cmp.mismatches} elements, max |diff| ${cmp.maxAbsDiff}`);
      console.log(`wrote ${outPath}`);
    }
    return cmp && !cmp.identical ? 8 : 0;
  } finally {
    await exec.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help' || command === '-h') {
    console.log(usage());
    return command ? 0 : 2;
  }
  assertNodeVersion();
  if (command === 'info') return infoCommand(rest);
  const op = OPS[command];
  if (!op) throw new InvalidArgumentError(`unknown command '${command}' (see imgpu --help)`);
  return runImageOp(command, op, rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof ImgpuError) {
    console.error(`imgpu: error: ${e.message}`);
    process.exitCode = e.exitCode;
  } else {
    console.error(`imgpu: internal error: ${(e as Error)?.message ?? e}${process.env.IMGPU_DEBUG ? `\n${(e as Error)?.stack}` : ' (set IMGPU_DEBUG=1 for a stack trace)'}`);
    process.exitCode = 70;
  }
}

import { compareImages, compareWithin, type Comparison } from '../core/compare.js';
import type { CpuPool } from '../core/cpu/pool.js';
import type { GpuContext } from '../core/gpu/context.js';
import type { Image } from '../core/image.js';
import type { Operation } from '../core/op.js';
import type { ParamSpec } from '../core/params.js';
import type { Recording } from '../core/gpu/recording.js';
import type { OpResult } from '../core/timings.js';
import { writeImage, type WriteOptions } from '../io/index.js';
import { loadFileParams } from '../io/params.js';
import { parsePipeline, runPipeline, type PipelineStep } from '../ops/pipeline.js';
import { ALL_OPERATIONS, FILTER_TOLERANCE, OPERATIONS } from '../ops/registry.js';
import { InvalidArgumentError } from '../core/errors.js';
import { resolveParams } from '../core/params.js';

export interface RunOn {
  gpu?: GpuContext;
  pool: CpuPool;
  /** GPU: time each phase separately (the default) or let them overlap (batch mode). */
  profile?: boolean;
  /** GPU: return the output as a view of mapped readback memory, with a release() (batch mode). */
  view?: boolean;
  /** GPU, a resident input: submit the kernels and return without waiting for them (the output stays resident). */
  wait?: boolean;
  /** GPU, a resident input with wait false: record into this recording, left for the caller to submit (GpuRunOptions.recording). */
  recording?: Recording;
  /** GPU, a resident input the caller gives up: the output may be written over it (RunOptions.inPlace). */
  inPlace?: boolean;
  /** false: only the output image is wanted; results the GPU would read back besides it (Otsu's threshold) are not (RunOptions.extras). */
  extras?: boolean;
}

/**
 * One CLI operation: its positional arguments, its declared parameters (flags, help and validation come from
 * them), extra image inputs given as paths (e.g. --mask), how to run it on either path, how to compare the
 * two results, how to write the output, and what to report besides timings.
 */
export interface OpCommand<T> {
  summary: string;
  positional: readonly string[];
  params: readonly ParamSpec[];
  imageFlags?: readonly string[];
  /** The operation takes colour input as it is (e.g. CLAHE of the lightness); others get OpenCV's gray. */
  colour?: boolean;
  /** Where it depends on the parameters as run (a pipeline: its first step's rule), whether colour is taken (readsColour). */
  colourFor?(params: Record<string, unknown>): boolean;
  run(img: Image, params: Record<string, unknown>, on: RunOn, images: Record<string, Image | undefined>): Promise<OpResult<T>>;
  compare(a: T, b: T): Comparison;
  write?(path: string, out: T, opts?: WriteOptions): Promise<void>;
  /** Checks the parameters as a whole before any input is read (e.g. a pipeline's chain). */
  validate?(params: Record<string, unknown>): void;
  /** The parameters as run: files they name read (once, before any image), e.g. mask:FILE. */
  prepare?(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** What to print besides timings, from the result of the path that produced the output. */
  report(result: OpResult<T>, params: Record<string, unknown>): { json: Record<string, unknown>; text: string[] };
  /** 'image': the output is an image that io writes (batch mode hands it to its codec workers); absent: reported only. */
  output?: 'image';
  /**
   * The command as pipeline steps (the parameters as run): what a batch's CPU lane hands to a codec worker, which
   * runs an image whole — decode, the steps on the CPU, encode — off the main thread (batch/lane.ts).
   */
  steps?(params: Record<string, unknown>): PipelineStep[];
}

/**
 * Whether a command reads its input in colour, given its parameters as run: a per-channel or luma operation does
 * unless asked for gray (`gray: true`, CLI --gray: read as cv2.imread(IMREAD_GRAYSCALE) reads it); a pipeline as
 * its first step does — the later steps convert on their own by their rules, as the operations run one by one do.
 */
export function readsColour(cmd: Pick<OpCommand<unknown>, 'colour' | 'colourFor'>, params: Record<string, unknown>): boolean {
  return cmd.colourFor ? cmd.colourFor(params) : cmd.colour === true && params.gray !== true;
}

/** Whether pipeline steps read their input in colour: by the first step's operation's rule (readsColour). */
export function stepsReadColour(steps: readonly PipelineStep[]): boolean {
  const first = steps[0];
  return first !== undefined && OPERATIONS[first.op].colour && first.params.gray !== true;
}

/** A command whose output is an image: what batch mode runs. */
export type ImageCommand = OpCommand<Image> & { output: 'image' };

/** Whether a command's output is an image (its declared `output`, not the identity of its writer). */
export function isImageCommand(cmd: OpCommand<unknown>): cmd is ImageCommand {
  return cmd.output === 'image';
}

/**
 * An operation of the registry as a CLI command: <positional params…> <in> [<out>], its declared parameters as
 * flags (image parameters as paths), file parameters (`mask:FILE`, `kernel:FILE`) read once by io, its output
 * written where it is an image, and its report printed.
 */
function opCommand(op: Operation): OpCommand<unknown> {
  return {
    summary: op.summary, params: op.params, colour: op.colour,
    positional: [...op.positional, 'in', ...(op.writes ? ['out'] : [])],
    imageFlags: op.params.filter((p) => p.kind === 'image').map((p) => p.name),
    prepare: (p) => loadFileParams(op.params, p),
    run: (img, p, on, images) => op.run(img, { ...p, ...images }, on),
    compare: (a, b) => op.compare(a, b),
    ...(op.writes ? { write: writeImage as OpCommand<unknown>['write'], output: 'image' as const, steps: (p: Record<string, unknown>) => [{ op: op.name, params: p }] } : {}),
    report: (r, p) => op.report(r, p),
  };
}

/** The pipeline's steps with their file parameters read (once, before any image). */
async function pipelineSteps(chain: string): Promise<PipelineStep[]> {
  return Promise.all(parsePipeline(chain).map(async (s) => ({ ...s, params: await loadFileParams(OPERATIONS[s.op].params, s.params) })));
}

export const COMMANDS: Record<string, OpCommand<any>> = {
  ...Object.fromEntries(Object.values(ALL_OPERATIONS).map((op) => [op.name, opCommand(op)])),
  pipeline: {
    summary: 'operations chained on the GPU-resident image: "clahe --clip 2 | threshold --method otsu" (one upload, one download)',
    positional: ['in', 'out', 'chain'],
    params: [{ name: 'chain', kind: 'string', doc: 'operations separated by |, each with its options' }],
    validate: (p) => void parsePipeline(p.chain as string),
    prepare: async (p) => ({ ...p, steps: await pipelineSteps(p.chain as string) }),
    colourFor: (p) => stepsReadColour(p.steps as PipelineStep[]),
    run: (img, p, on) => runPipeline(img, p.steps as PipelineStep[], on),
    compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareImages(a, b)),
    write: writeImage,
    output: 'image',
    steps: (p) => p.steps as PipelineStep[],
    report: (_r, p) => ({ json: { steps: parsePipeline(p.chain as string) }, text: [] }),
  } satisfies ImageCommand,
};

/** A batch's operations as code gives them: a pipeline's text, or steps (operation names of the registry with their parameters). */
export type StepsSpec = string | readonly { op: string; params?: Record<string, unknown> }[];

/** What a batch runs, from its steps: the command, its name and parameters (as the CLI's records name them), and the parameters as run. */
export interface CommandOfSteps {
  name: string;
  cmd: ImageCommand;
  /** the parameters as resolved, defaults included (what the batch's records compare: batchRecipe) */
  params: Record<string, unknown>;
  /** the parameters as run (file parameters read: OpCommand.prepare) */
  prepared: Record<string, unknown>;
}

/**
 * The command of a batch's steps, checked (typed errors, before any image): pipeline text runs as `imgpu pipeline`
 * does; one step as that operation's command (`imgpu <op>`: the same records, so the CLI and code share an output
 * folder's); several as a pipeline of them. Parameters are resolved against the operations' declarations.
 */
export async function commandOfSteps(steps: StepsSpec): Promise<CommandOfSteps> {
  const pipeline = COMMANDS.pipeline as ImageCommand;
  if (typeof steps === 'string') {
    const params = { chain: steps };
    pipeline.validate!(params);
    return { name: 'pipeline', cmd: pipeline, params, prepared: await pipeline.prepare!(params) };
  }
  if (!Array.isArray(steps) || steps.length === 0) throw new InvalidArgumentError('batch: steps must be pipeline text or a non-empty list of { op, params }');
  const list = steps as readonly { op: string; params?: Record<string, unknown> }[];
  const resolved = list.map((s, i) => {
    const op = OPERATIONS[s?.op];
    if (!op) throw new InvalidArgumentError(`batch step ${i + 1}: unknown operation '${s?.op}' (${Object.keys(OPERATIONS).join(', ')})`);
    return { op: op.name, params: resolveParams<Record<string, unknown>>(op.name, op.params, s.params ?? {}) };
  });
  if (resolved.length === 1) {
    const [{ op, params }] = resolved;
    const cmd = COMMANDS[op] as OpCommand<unknown>;
    if (!isImageCommand(cmd)) throw new InvalidArgumentError(`batch: ${op} writes no image; a batch runs operations whose output is an image`);
    return { name: op, cmd, params, prepared: (await cmd.prepare?.(params)) ?? params };
  }
  const prepared = await Promise.all(resolved.map(async (s) => ({ ...s, params: await loadFileParams(OPERATIONS[s.op].params, s.params) })));
  return { name: 'pipeline', cmd: pipeline, params: { steps: resolved }, prepared: { steps: prepared } };
}

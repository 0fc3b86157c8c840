import { InvalidArgumentError } from '../core/errors.js';
import type { ImageOperation, Operation, OperationStep } from '../core/op.js';
import { resolveParams } from '../core/params.js';
import type { ReadOptions } from '../io/index.js';
import { loadFileParams } from '../io/params.js';
import { PIPELINE } from '../ops/pipeline.js';
import { ALL_OPERATIONS, OPERATIONS } from '../ops/registry.js';

/**
 * The CLI's commands: every operation of the registry (`imgpu <op> <positional…> <in> [<out>]`: flags, help and
 * validation from its declared parameters, `Operation.args`), and the pipeline, an operation made of them. The CLI and
 * batch run them as they are (`runOperation`); what a command needs beyond the declaration is derived below.
 */
export const COMMANDS: Readonly<Record<string, Operation>> = { ...ALL_OPERATIONS, pipeline: PIPELINE };

/** The parameters of a command that are images given as paths on the command line (histogram's --mask). */
export function imageFlags(op: Operation): string[] {
  return op.params.filter((p) => p.kind === 'image').map((p) => p.name);
}

/**
 * The parameters as run, checked before any image is read: a pipeline's chain parsed into steps (a typed error for a
 * bad one), and the files any step's parameters name (`mask:FILE`, `kernel:FILE`) read once, by io. An operation that
 * is its own one step takes its parameters so; a chain takes its steps (`steps`).
 */
export async function paramsAsRun(op: Operation, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const steps = op.steps(params);
  const loaded = await Promise.all(steps.map(async (s) => ({ ...s, params: await loadFileParams(ALL_OPERATIONS[s.op].params, s.params) })));
  return steps.length === 1 && steps[0].op === op.name ? loaded[0].params : { ...params, steps: loaded };
}

/** A batch's operations as code gives them: a pipeline's text, or steps (operation names of the registry with their parameters). */
export type StepsSpec = string | readonly { op: string; params?: Record<string, unknown> }[];

/** What a batch runs, from its steps: the command (an operation), its name and parameters (as the CLI's records name them), and the parameters as run. */
export interface CommandOfSteps {
  name: string;
  /** the operation (a pipeline for text or several steps) */
  cmd: ImageOperation;
  /** the parameters as resolved, defaults included (what the batch's records compare: batchRecipe) */
  params: Record<string, unknown>;
  /** the parameters as run (paramsAsRun) */
  prepared: Record<string, unknown>;
}

/**
 * The operation of a batch's steps, checked (typed errors, before any image): pipeline text runs as `imgpu pipeline`
 * does; one step as that operation (`imgpu <op>`: the same records, so the CLI and code share an output folder's);
 * several as a pipeline of them. Parameters are resolved against the operations' declarations.
 */
export async function commandOfSteps(steps: StepsSpec): Promise<CommandOfSteps> {
  if (typeof steps === 'string') {
    const params = { chain: steps };
    return { name: 'pipeline', cmd: PIPELINE, params, prepared: await paramsAsRun(PIPELINE, params) };
  }
  if (!Array.isArray(steps) || steps.length === 0) throw new InvalidArgumentError('batch: steps must be pipeline text or a non-empty list of { op, params }');
  const list = steps as readonly { op: string; params?: Record<string, unknown> }[];
  const resolved: OperationStep[] = list.map((s, i) => {
    const op = OPERATIONS[s?.op]; // image → image operations only
    if (!op) throw new InvalidArgumentError(`batch step ${i + 1}: unknown operation '${s?.op}' (${Object.keys(OPERATIONS).join(', ')})`);
    return { op: op.name, params: resolveParams<Record<string, unknown>>(op.name, op.params, s.params ?? {}) };
  });
  if (resolved.length === 1) {
    const [{ op, params }] = resolved;
    return { name: op, cmd: OPERATIONS[op], params, prepared: await paramsAsRun(OPERATIONS[op], params) };
  }
  const params = { steps: resolved };
  return { name: 'pipeline', cmd: PIPELINE, params, prepared: await paramsAsRun(PIPELINE, params) };
}

/**
 * How a command reads its input's channels: gray where it works on gray; colour where it takes colour, a gray JPEG
 * then as three equal channels as cv2.imread gives it (ReadOptions.colour) unless the caller keeps it gray
 * (--keep-gray, keepGray).
 */
export function channelsRead(colour: boolean, keepGray: boolean): Pick<ReadOptions, 'gray' | 'colour'> {
  return { gray: !colour, colour: colour && !keepGray };
}

/**
 * Whether `op` with `params` is made only of steps whose CPU path is light (OpDeclaration.light: equalize, gamma, the
 * Otsu and isodata thresholds): what a single image runs on the CPU under --device auto. An operation of no image
 * steps (detection, histogram) is not.
 */
export function lightSteps(op: Pick<Operation, 'steps'>, params: Record<string, unknown>): boolean {
  const steps = op.steps(params);
  return steps.length > 0 && steps.every((s) => OPERATIONS[s.op]?.light(s.params) === true);
}

import type { CpuPool } from '../core/cpu/pool.js';
import { compareImages, compareWithin } from '../core/compare.js';
import { engineEntry, runOperation, type ImageOperation, type RunOptions } from '../core/op.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Recording } from '../core/gpu/recording.js';
import type { GpuContext } from '../core/gpu/context.js';
import { GpuImage } from '../core/gpu/gpu-image.js';
import type { Image } from '../core/image.js';
import { findParam, parseParamValue, resolveParams, type ParamSpec } from '../core/params.js';
import { closeTimings, makeTimings, now, type KernelTime, type OpResult, type Timings } from '../core/timings.js';
import { FILTER_TOLERANCE, OPERATIONS } from './registry.js';

/** One operation of a pipeline with its resolved parameters. */
export interface PipelineStep {
  op: string;
  params: Record<string, unknown>;
}

/**
 * Parses `"clahe --tiles 8x8 --clip 2 | threshold --method otsu"`: operations of the registry separated by `|`,
 * each with its positional parameters (e.g. `morph erode`) and `--flag value` pairs, checked against the
 * declared parameters — so every error is known before any pixel is touched.
 */
export function parsePipeline(text: string): PipelineStep[] {
  const parts = text.split('|').map((p) => p.trim());
  if (!parts.length || parts.some((p) => !p)) throw new InvalidArgumentError(`pipeline: an empty step in '${text}' (steps are separated by |)`);
  return parts.map((part, i) => {
    const [name, ...tokens] = part.split(/\s+/);
    const op = OPERATIONS[name];
    if (!op) throw new InvalidArgumentError(`pipeline step ${i + 1}: unknown operation '${name}' (${Object.keys(OPERATIONS).join(', ')})`);
    const at = `pipeline step ${i + 1} (${name})`;
    try {
      return { op: name, params: parseStep(op, tokens, at) };
    } catch (e) {
      // A parameter's own message (e.g. "method must be one of …") gets the step it is in, its type kept.
      if (!(e instanceof InvalidArgumentError) || e.message.startsWith(at)) throw e;
      throw new (e.constructor as typeof InvalidArgumentError)(`${at}: ${e.message}`, { cause: e });
    }
  });
}

/** One step's tokens: positional parameters (e.g. `morph erode`) and `--flag value` pairs, resolved. */
function parseStep(op: ImageOperation, tokens: string[], at: string): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const positional = [...op.positional];
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t];
    if (!tok.startsWith('--')) {
      const pname = positional.shift();
      if (!pname) throw new InvalidArgumentError(`${at}: unexpected '${tok}'`);
      values[pname] = parseParamValue(findParam(op.params, pname)!, tok);
      continue;
    }
    const [flag, inline] = tok.slice(2).split('=', 2) as [string, string | undefined];
    const spec = findParam(op.params, flag);
    if (!spec) throw new InvalidArgumentError(`${at}: unknown option --${flag}`);
    const value = inline ?? (spec.kind === 'bool' && (t + 1 >= tokens.length || tokens[t + 1].startsWith('--')) ? 'true' : tokens[++t]);
    if (value === undefined) throw new InvalidArgumentError(`${at}: --${flag} needs a value`);
    values[flag] = parseParamValue(spec, value);
  }
  return resolveParams(op.name, op.params, values);
}

/**
 * Sees each step's output as the chain runs (the playground shows every stage), with the step's own timings (on
 * the GPU: recorded and submitted, not awaited). A resident output may be copied (`toHost()`) but not released.
 * The time it takes counts in the pipeline's.
 */
export type StageObserver = (step: number, output: Image | GpuImage, timings: Timings) => Promise<void> | void;

/**
 * The steps on the GPU, each recorded and submitted without waiting (`wait: false`) — or, with `rec`, recorded into
 * it for the caller to submit; an input this function made goes back to the pool once the next step is recorded
 * (with `rec`, once it is submitted), the caller's `start` never. The first upload (of a host
 * `start`) is added to `moved`.
 */
async function gpuSteps(
  start: Image | GpuImage, steps: PipelineStep[], gpu: GpuContext, pool: CpuPool | undefined, moved: { upload: number; download: number }, stage?: StageObserver,
  rec?: Recording, giveUpStart = false,
): Promise<Image | GpuImage> {
  let cur = start;
  for (const [i, s] of steps.entries()) {
    const op = OPERATIONS[s.op];
    // A colour image stays resident: each step converts it on the device by its colour rule (core/op.ts).
    let input = cur;
    if (!(input instanceof GpuImage)) {
      const tu = now();
      input = await GpuImage.upload(gpu, input);
      moved.upload += now() - tu;
    }
    // Only the image goes on: a step's scalar results (Otsu's threshold) are not read back, so no step waits.
    // An intermediate this function made (or the caller's start, given up) may be written over: an operation that
    // applies a look-up table then returns it as its output.
    const inPlace = input !== start || giveUpStart;
    const r = await runOperation(op, input, s.params, { pool, wait: false, profile: false, extras: false, recording: rec, inPlace });
    if (input !== start && r.output !== input) releaseAfter(input, rec);
    cur = r.output;
    await stage?.(i, cur, r.timings);
  }
  return cur;
}

/** Gives a resident image back to the pool: now, or once `rec` (which still reads it) is submitted. */
function releaseAfter(img: GpuImage, rec?: Recording): void {
  if (rec) rec.afterSubmit(() => img.release());
  else img.release();
}

/**
 * Runs the steps one after another. GPU: one upload, every step on the resident image with `wait: false` (each
 * submits and returns; intermediate buffers go back to the pool as soon as the next step has been recorded —
 * the queue runs in order, so reuse is safe), one download: the chain waits once. Scalars a step would read back
 * (Otsu's threshold) are not read (RunOptions.extras false); a colour image stays on the device, converted there by each
 * step's colour rule (OpenCV's gray, or YCrCb's Y and back for CLAHE: core/gpu/colour.ts).
 * CPU: the same steps on the pool. Either way the output equals running the operations one by one.
 */
export async function runPipeline(src: Image, steps: PipelineStep[], on: PipelineOptions): Promise<OpResult<Image>>;
export async function runPipeline(src: GpuImage, steps: PipelineStep[], on?: Pick<PipelineOptions, 'pool'>): Promise<OpResult<GpuImage>>;
export async function runPipeline(src: Image | GpuImage, steps: PipelineStep[], on: PipelineOptions = {}): Promise<OpResult<Image | GpuImage>> {
  // The engine's controls (a shared recording, in place, views) are runChain's, not the public function's.
  return runChain(src, steps, { gpu: on.gpu, pool: on.pool, stage: on.stage });
}

/** The options of runPipeline: where it runs, and an observer of each step's output. */
export interface PipelineOptions {
  gpu?: GpuContext;
  pool?: CpuPool;
  stage?: StageObserver;
}

/**
 * runPipeline with the engine's controls (not exported by the package): `view` (a host input's result as a view of
 * mapped readback memory), and for a resident input `recording` (the steps recorded there for the caller to submit)
 * and `inPlace` (the caller's input given up: it may come back as the output, written over).
 */
export async function runChain(src: Image, steps: PipelineStep[], on: PipelineOptions & { view?: boolean }): Promise<OpResult<Image>>;
export async function runChain(src: GpuImage, steps: PipelineStep[], on?: Pick<PipelineOptions, 'pool'> & { recording?: Recording; inPlace?: boolean }): Promise<OpResult<GpuImage>>;
export async function runChain(src: Image | GpuImage, steps: PipelineStep[], on: PipelineOptions & { view?: boolean; recording?: Recording; inPlace?: boolean }): Promise<OpResult<Image | GpuImage>>;
export async function runChain(
  src: Image | GpuImage, steps: PipelineStep[], on: PipelineOptions & { view?: boolean; recording?: Recording; inPlace?: boolean } = {},
): Promise<OpResult<Image | GpuImage>> {
  if (src instanceof GpuImage) {
    // Resident in, resident out: nothing is downloaded; the caller's input is not released (with `inPlace`, given up:
    // it may come back as the output, written over). With `recording`, the steps are recorded there for the caller
    // to submit (GpuRunOptions.recording).
    const t0 = now();
    const output = (await gpuSteps(src, steps, src.ctx, on.pool, { upload: 0, download: 0 }, undefined, on.recording, on.inPlace)) as GpuImage;
    return { output, timings: makeTimings({ backend: 'gpu', upload: 0, download: 0, kernels: [{ name: 'pipeline (queued, not awaited)', ms: 0 }], kernelSource: 'wallclock', total: now() - t0 }) };
  }
  const t0 = now();
  const kernels: KernelTime[] = [];
  if (!on.gpu) {
    let cur: Image = src;
    for (const [i, s] of steps.entries()) {
      const op = OPERATIONS[s.op];
      const r = await op.run(cur, s.params, { pool: on.pool }); // its input rule converts colour to gray where it must
      kernels.push(...r.timings.kernels.map((k) => ({ ...k, name: `${s.op}: ${k.name}` })));
      cur = r.output;
      await on.stage?.(i, cur, r.timings);
    }
    return { output: cur, timings: makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels, kernelSource: 'cpu', total: now() - t0 }) };
  }
  const moved = { upload: 0, download: 0 };
  const tk = now();
  const cur = await gpuSteps(src, steps, on.gpu, on.pool, moved, on.stage);
  const upload = moved.upload;
  let download = moved.download;
  const td = now();
  let output: Image;
  let release: (() => void) | undefined;
  if (cur instanceof GpuImage && on.view) {
    // The result as a view of mapped readback memory (valid until release()): no copy out.
    const v = await cur.toHostView();
    cur.release();
    output = v.image;
    release = v.release;
  } else if (cur instanceof GpuImage) {
    output = await cur.toHost();
    cur.release();
  } else {
    output = cur;
  }
  // The kernels ran while the host recorded the later steps; they are known to be done only at the download.
  download += now() - td;
  kernels.push({ name: `pipeline (${steps.map((s) => s.op).join(' | ')}): recorded and submitted (host time; the GPU finishes inside download)`, ms: td - tk });
  const timings = closeTimings(makeTimings({ backend: 'gpu', upload, download, kernels, kernelSource: 'wallclock', total: 0 }), t0);
  return release ? { output, timings, release } : { output, timings };
}

/** A pipeline's steps from its parameters: the steps given (a batch's list, files read), or its chain parsed. */
function stepsOfPipeline(params: Record<string, unknown>): PipelineStep[] {
  return (params.steps as PipelineStep[] | undefined) ?? parsePipeline(params.chain as string);
}

const pipelineParams = [{ name: 'chain', kind: 'string', doc: 'operations separated by |, each with its options' }] as const satisfies readonly ParamSpec[];

/**
 * The pipeline as an operation made of operations: `imgpu pipeline <in> <out> "<chain>"`, a batch of several steps.
 * Its input rule is its first step's (each later step converts by its own); its parameters are the chain's text, or
 * the steps themselves (`steps`, their files read: what a batch runs).
 */
export const PIPELINE: ImageOperation = {
  name: 'pipeline',
  summary: 'operations chained on the GPU-resident image: "clahe --clip 2 | threshold --method otsu" (one upload, one download)',
  params: pipelineParams,
  positional: ['chain'],
  args: ['in', 'out', 'chain'],
  input: { dtypes: ['uint8', 'uint16', 'float32'], colour: 'channels' },
  colour: true,
  writes: true,
  readsColour: (params) => {
    const [first] = stepsOfPipeline(params);
    return first !== undefined && OPERATIONS[first.op].readsColour(first.params);
  },
  steps: stepsOfPipeline,
  light: (params) => stepsOfPipeline(params).every((s) => OPERATIONS[s.op].light(s.params)),
  outputOf: (params, input) => stepsOfPipeline(params).reduce((img, s) => ({ ...img, ...OPERATIONS[s.op].outputOf(s.params, img) }), input),
  reach: () => undefined,
  run: ((src: Image | GpuImage, params: Record<string, unknown>, on: RunOptions = {}) => runChain(src, stepsOfPipeline(params), { gpu: on.gpu, pool: on.pool })) as ImageOperation['run'],
  compare: (a, b) => (a.dtype === 'float32' ? compareWithin(a, b, FILTER_TOLERANCE) : compareImages(a, b)),
  report: (_r, p) => ({ json: { steps: stepsOfPipeline(p) }, text: [] }),
};
engineEntry(PIPELINE, (src, params, on = {}) => runChain(src, stepsOfPipeline(params), on));

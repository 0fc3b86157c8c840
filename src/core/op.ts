import { grayCpu, lumaCpu, withLumaCpu } from './colour.js';
import { compareImages, type Comparison } from './compare.js';
import { channelGpu, fromLumaGpu, grayGpu, lumaGpu, mergeChannelsGpu } from './gpu/colour.js';
import { inlinePool, type CpuPool } from './cpu/pool.js';
import { InvalidArgumentError, optionRef, UnsupportedDtypeError } from './errors.js';
import type { GpuContext } from './gpu/context.js';
import { GpuImage } from './gpu/gpu-image.js';
import type { Recording } from './gpu/recording.js';
import { PROFILE_BY_DEFAULT, runGpu, type DeviceResult, type GpuRunOptions } from './gpu/run.js';
import { channelPlanes, checkOut, interleavePlanes, intoOut, plane2D, requireDtype, toGray, validateImage, type Dtype, type Image, type Shape } from './image.js';
import { resolveParams, type OptionsOf, type ParamSpec, type ResolvedOf } from './params.js';
import { closeTimings, makeTimings, now, sumTimings, type KernelTime, type OpResult, type Timings } from './timings.js';

/**
 * One operation, declared once. From a declaration come the public function (host image or GpuImage in), the
 * validation, the timings, the registry entry, and through the registry the CLI command and its flags, the
 * pipeline stage, the batch job and the playground form. A family's `index.ts` is its declaration.
 */

/**
 * How colour input is taken: 'gray' converts a colour host image to OpenCV's gray first (a GpuImage must be
 * gray); 'luma' runs on the Y of OpenCV's YCrCb and puts the chroma back (CLAHE); 'channels' processes every
 * channel alike (point operations); 'planes' runs the operation on each channel of a colour host image alone and
 * interleaves the results, as OpenCV's filters and morphology do (cv2.GaussianBlur, cv2.blur, cv2.Sobel, cv2.erode
 * of the image cv2.imread returns) — unless the declared parameter `gray` (GRAY_PARAM) asks for gray first.
 */
export type ColourRule = 'gray' | 'luma' | 'channels' | 'planes';

/** The parameter of 'planes' operations that converts colour to gray first instead (CLI `--gray`). */
export const GRAY_PARAM = { name: 'gray', kind: 'bool', default: false, doc: 'colour input: convert to gray first (OpenCV\'s weights) instead of processing each channel' } as const;

export interface InputRule {
  dtypes: readonly Dtype[];
  colour: ColourRule;
  /**
   * 3D volumes ([d, h, w]) are taken as well as 2D images (some parameters may still need 2D): the volume page offers
   * these. Absent, an operation that writes an image refuses a volume (InvalidArgumentError) before any work.
   */
  volumes?: boolean;
}

/**
 * Where an operation runs and how: what a user of the package sets besides the declared parameters. The engine's
 * own controls (EngineRunOptions) are not among them: a public call drops them.
 */
export interface RunOptions {
  /** Run on this GPU context (host images are uploaded and the result downloaded). Omit for the CPU path. */
  gpu?: GpuContext;
  /** Worker pool for the CPU path. @default single-threaded */
  pool?: CpuPool;
  /** Host image to write the result into (checked against the output's shape and type; reused across calls). */
  out?: Image;
  /**
   * GPU: wait between phases so upload, kernels and download are timed apart, each kernel in its own pass
   * (GpuRunOptions.profile says what it costs). @default false
   */
  profile?: boolean;
}

/**
 * The engine's controls of a run (batch, pipelines, scale-out, benchmarks), besides the public options: reached
 * through `runOperation` and handed to the GPU plans, never through an operation's public function (nor exported
 * by the package). `wait`, `view` and `recording` are runGpu's (GpuRunOptions).
 */
export interface EngineRunOptions extends RunOptions, GpuRunOptions {
  /**
   * false: results besides the output image that the GPU path would read back to the host (Otsu's threshold) are
   * neither read nor returned, so a resident run waits for nothing — for callers that keep only the image (batch
   * mode, a pipeline's steps). The CPU path computes them anyway. @default true
   */
  extras?: boolean;
  /**
   * For a resident (GpuImage) input the caller gives up: an operation that can (those that apply a look-up table:
   * equalize, Otsu) writes its output over the input and returns the input itself, no new image — a batch's decoded
   * photo, a pipeline's intermediate. The caller then uses the input only as the output. Ignored for host inputs.
   * @default false
   */
  inPlace?: boolean;
}

/** The engine's keys (EngineRunOptions beyond RunOptions): what a public call drops from its options. */
const ENGINE_KEYS = ['extras', 'inPlace', 'wait', 'view', 'recording'] as const satisfies readonly Exclude<keyof EngineRunOptions, keyof RunOptions>[];

/** `opts` without the engine's keys: a public call cannot reach them, whatever a caller passes untyped. */
function publicOptions<T extends object>(opts: T): T {
  if (!ENGINE_KEYS.some((k) => k in opts)) return opts;
  const kept = { ...opts } as Record<string, unknown>;
  for (const k of ENGINE_KEYS) delete kept[k];
  return kept as T;
}

/** The public options of an operation with parameters `S`: derived, never written by hand. */
export type OpOptions<S extends readonly ParamSpec[]> = OptionsOf<S> & RunOptions;

/** What a CPU implementation or a GPU plan produced besides its output: the kernels it timed, extra results. */
export interface Produced<T, X> {
  output: T;
  /** CPU: the kernels timed inside (default: one kernel named after the operation, timed around the call). */
  kernels?: KernelTime[];
  /** Extra results reported beside the output (e.g. Otsu's threshold). */
  extra?: X;
  /** GPU: values to read back once the recording has run (timed as download), e.g. a threshold on the device. */
  read?: () => Promise<X>;
  /** GPU: called instead of `read` when the caller wants the output only (RunOptions.extras false): frees what `read` would read. */
  drop?: () => void;
}

/** The CPU implementation: a host image in, the output (or a Produced) out. `out` is the caller's buffer. */
export type CpuImpl<R, H, X> = (img: Image, p: R, env: { pool: CpuPool; out?: Image }) => Promise<H | Produced<H, X>>;

/**
 * The GPU plan: records the work for a resident input into `rec` and returns the (pooled) device output. `opts`
 * are the caller's options as given (an operation may read tuning it documents besides its parameters).
 */
export type GpuPlan<R, D, X> = (input: GpuImage, rec: Recording, p: R, extra: GpuImage[], opts: EngineRunOptions) => Promise<D | Produced<D, X>>;

/**
 * A host input on the GPU, run by the operation itself instead of upload → GpuPlan → download (e.g. in host slabs
 * when it exceeds the device's buffers). The skeleton closes its timings.
 */
export type GpuHostRun<R, H, X> = (img: Image, p: R, gpu: GpuContext, opts: EngineRunOptions) => Promise<OpResult<H> & Partial<X>>;

/**
 * A GPU path made of several recordings with host decisions in between (e.g. a threshold taken on the host from
 * a device histogram): runs on the resident input and returns the output and each step's timings. The skeleton
 * uploads once before and downloads once after.
 */
/** `inPlace`: the steps may write their output over `input`, the caller's resident image it gives up (RunOptions.inPlace). */
export type GpuSteps<R, X, O = GpuImage> = (input: GpuImage, p: R, opts: { profile: boolean; wait?: boolean; inPlace?: boolean }) => Promise<{ output: O; steps: Timings[]; extra?: X }>;

export interface OpDeclaration<S extends readonly ParamSpec[], X extends object, H, D extends DeviceResult<H>, Q = ResolvedOf<S>> {
  name: string;
  /** One line for the CLI's usage, the playground and the docs. */
  summary: string;
  params: S;
  /** Parameters given as positional arguments before <in> <out> on the command line (e.g. morph's <op>). */
  positional?: readonly S[number]['name'][];
  input: InputRule;
  /**
   * The CPU path is a few operations a pixel (look-up tables, global thresholds, histograms): less than a JPEG
   * codec's own work on the image, so a GPU batch's CPU lane takes such images by default (engine/batch/lane.ts;
   * measured on these) — for every parameter set, or for those where the function says so (threshold's global
   * methods, not its windowed ones). Absent: neighbourhood work, which may cost the CPU far more than the codec
   * (large kernels).
   */
  light?: boolean | ((p: ResolvedOf<S>) => boolean);
  /**
   * How far along z (a volume's first axis) an output plane reads, for these parameters and this input: a chunked
   * run (io/chunked.ts) reads that many planes as halo around each slab. Absent, or undefined for some parameters:
   * the output depends on the whole volume (a global histogram, a running sum across NaNs) and it runs whole.
   */
  reach?(p: ResolvedOf<S>, input: Pick<Image, 'shape' | 'dtype' | 'geometry'>): Reach | undefined;
  /** Checks the parameters as a whole against the input (and the device), before any work. */
  check?(p: ResolvedOf<S>, input: Image | GpuImage, gpu?: GpuContext): void;
  /**
   * What both paths take, derived once per call from the checked parameters and the input, before any work (e.g.
   * morph's structuring element, parsed once); it may refuse like `check`. Without it both paths take the parameters.
   */
  prepare?(p: ResolvedOf<S>, input: Image | GpuImage, gpu?: GpuContext): Q;
  cpu: CpuImpl<Q, H, X>;
  /** The GPU path as one recording; an operation whose every run takes host decisions declares `gpuSteps` only. */
  gpu?: GpuPlan<Q, D, X>;
  /** The GPU run's name where it depends on the parameters (fused-pass and wall-clock kernel names, errors). */
  gpuName?(p: ResolvedOf<S>): string;
  /** Host input on the GPU (default: uploaded whole, `gpu` recorded, downloaded). */
  gpuHost?: GpuHostRun<Q, H, X>;
  /** The output's shape and type where they differ from the (gray) input's: a caller's `out` is checked against them. */
  outputOf?(p: ResolvedOf<S>, input: Image): { shape: Shape; dtype: Dtype };
  /**
   * For the parameters where it returns true, the GPU path is `gpuSteps` instead of one recording; `gpu` is the
   * context, `extras` whether the caller reads the result's extras (RunOptions.extras, false in batches and pipelines).
   */
  stepsWhen?(p: ResolvedOf<S>, input: Image | GpuImage, gpu: GpuContext, extras: boolean): boolean;
  /** Steps that read their result back themselves (an `alwaysDownload` operation) return the host result. */
  gpuSteps?: GpuSteps<ResolvedOf<S>, X, GpuImage | H>;
  /**
   * Image parameters (kind 'image') read by the GPU plan, or images made from them for this input (e.g. a mask
   * and a rectangle combined): uploaded with the input and passed as `extra`.
   */
  gpuImages?(p: ResolvedOf<S>, input: Image | GpuImage): (Image | GpuImage | undefined)[];
  /** The output comes back to the host even for a resident input (small results such as histograms). */
  alwaysDownload?: boolean;
  /** How CPU and GPU results are compared (default: bit for bit). */
  compare?(cpu: H, gpu: H): Comparison;
  /** What the CLI prints besides timings, from the result of the path that produced the output. */
  report?(r: OpResult<H> & Partial<X>, p: ResolvedOf<S>): { json: Record<string, unknown>; text: string[] };
  /** The output is not an image (e.g. counts): the CLI has nothing to write. */
  writes?: boolean;
}

/** How far an output plane z reads: input planes [z − before, z + after]. */
export interface Reach {
  before: number;
  after: number;
  /**
   * Which plane of a volume of `depth` planes a position beyond its ends reads (the border rule): a slab's halo is
   * gathered so. Absent: the slab's input is clipped to the volume, and the operation's own border applies at the
   * true ends, which the slabs there share (a border that pads each pass, as 'constant' does).
   */
  gather?: (z: number, depth: number) => number;
}

/** One operation of the registry with its parameters: a step of a chain (a pipeline's, a batch's). */
export interface OperationStep {
  op: string;
  params: Record<string, unknown>;
}

/**
 * A declared operation as data: what generic front ends (CLI, pipeline, batch, playground) use — the CLI's command,
 * its help and flags, a batch's job, a pipeline's stage all come from these fields, with no code of their own per
 * operation. defineOp makes one from a declaration; a pipeline (ops/pipeline.ts) is one made of operations.
 */
export interface Operation<S extends readonly ParamSpec[] = readonly ParamSpec[], X extends object = object, H = unknown, D = unknown> {
  readonly name: string;
  readonly summary: string;
  readonly params: S;
  readonly positional: readonly string[];
  /** The command line's positional arguments in order: the positional parameters, then <in> and, where it writes, <out>. */
  readonly args: readonly string[];
  readonly input: InputRule;
  /** Colour input is processed as colour (luma or channels), not converted to gray first. */
  readonly colour: boolean;
  /** Writes an image output (false for counts). */
  readonly writes: boolean;
  /** Whether a colour input is read and taken as colour with these parameters (not asked for gray: GRAY_PARAM). */
  readsColour(params: Record<string, unknown>): boolean;
  /** It as a chain of registry operations with these parameters: itself alone, or a pipeline's steps. */
  steps(params: Record<string, unknown>): OperationStep[];
  /** Whether its CPU path is light with these parameters (checked and defaulted as a run would: OpDeclaration.light). */
  light(params: Record<string, unknown>): boolean;
  /** The shape and type of its output for this input (OpDeclaration.outputOf; the input's by default). */
  outputOf(params: Record<string, unknown>, input: Image): { shape: Shape; dtype: Dtype };
  /** Its reach along z with these parameters on this input (OpDeclaration.reach); undefined: it needs the whole volume. */
  reach(params: Record<string, unknown>, input: Pick<Image, 'shape' | 'dtype' | 'geometry'>): Reach | undefined;
  /** Runs on either path with untyped parameters (checked against the declaration): the front ends' entry. */
  run(src: Image, params: Record<string, unknown>, on?: RunOptions): Promise<OpResult<H> & Partial<X>>;
  run(src: GpuImage, params: Record<string, unknown>, on?: RunOptions): Promise<OpResult<D> & Partial<X>>;
  run(src: Image | GpuImage, params: Record<string, unknown>, on?: RunOptions): Promise<OpResult<H | D> & Partial<X>>;
  compare(cpu: H, gpu: H): Comparison;
  report(r: OpResult<H> & Partial<X>, p: Record<string, unknown>): { json: Record<string, unknown>; text: string[] };
}

/** An image → image operation (what pipelines chain and the playground offers). */
export type ImageOperation = Operation<readonly ParamSpec[], object, Image, GpuImage>;

/** The public function of an image operation: host image in → host image out; GpuImage in → GpuImage out. */
export interface ImageOpFunction<S extends readonly ParamSpec[], X extends object> {
  (src: Image, opts?: OpOptions<S>): Promise<OpResult<Image> & X>;
  (src: GpuImage, opts?: OpOptions<S>): Promise<OpResult<GpuImage> & X>;
  (src: Image | GpuImage, opts?: OpOptions<S>): Promise<OpResult<Image | GpuImage> & X>;
  readonly op: Operation<S, X, Image, GpuImage>;
}

/** The public function of an operation whose output always comes back to the host (e.g. histogram counts). */
export interface HostOpFunction<S extends readonly ParamSpec[], X extends object, H> {
  (src: Image | GpuImage, opts?: OpOptions<S>): Promise<OpResult<H> & X>;
  readonly op: Operation<S, X, H, unknown>;
}

function isProduced<T, X>(r: T | Produced<T, X>): r is Produced<T, X> {
  return typeof r === 'object' && r !== null && 'output' in r && !ArrayBuffer.isView(r);
}

/**
 * The declared parameters of `opts` (the run options and unknown keys left out), checked and defaulted; also for a
 * family that prepares its work outside a call (e.g. the filters' prepareFilter for back-to-back benchmarks).
 */
export function paramsOf<S extends readonly ParamSpec[]>(name: string, specs: S, opts: object): ResolvedOf<S> {
  return resolveParams<ResolvedOf<S>>(name, specs, opts);
}

/**
 * The host image the operation works on, by its colour rule: gray, the Y of YCrCb (luma: the colour image is kept
 * to put the chroma back), or the colour image itself ('channels'; 'planes', split by the caller — unless its `gray`
 * parameter asks for gray). 8/16-bit conversions run on the pool (native threads where it has them); float32 gray on
 * the calling thread.
 */
async function hostInput(src: Image, name: string, rule: InputRule, pool: CpuPool, gray: boolean): Promise<{ img: Image; luma: boolean }> {
  validateImage(src);
  requireDtype(src, rule.dtypes, name);
  if (src.channels === 1 || rule.colour === 'channels' || (rule.colour === 'planes' && !gray)) return { img: src, luma: false };
  if (rule.colour === 'luma') return { img: await lumaCpu(src, pool), luma: true };
  return { img: src.dtype === 'float32' ? toGray(src) : await grayCpu(src, pool), luma: false };
}

/**
 * Checks a resident input against the rule. A colour GpuImage (8/16-bit) is converted on the device where the rule
 * asks (gpuConversion); float32 colour has no GPU conversion (its gray is float arithmetic cv2 fuses in its own way).
 */
function residentInput(src: GpuImage, name: string, rule: InputRule): void {
  src.assertLive();
  if (rule.colour !== 'channels' && src.channels !== 1 && src.dtype === 'float32') {
    throw new UnsupportedDtypeError(`${name} of a float32 colour GpuImage: convert it with toGray() before upload`);
  }
  requireDtype(src, rule.dtypes, name);
}

/** The conversion a resident colour input takes on the device before (and, for luma, after) the operation. */
function gpuConversion(input: Image | GpuImage, rule: InputRule, gray: boolean): 'gray' | 'luma' | undefined {
  if (!(input instanceof GpuImage) || input.channels === 1 || rule.colour === 'channels') return undefined;
  if (rule.colour === 'planes') return gray ? 'gray' : undefined;
  return rule.colour;
}

/** Whether the parameters of a 'planes' operation ask for gray first (GRAY_PARAM). */
function grayAsked(p: object): boolean {
  return (p as { gray?: boolean }).gray === true;
}

/**
 * The result with the input's voxel geometry where the output is an image of the input's shape that has none of its
 * own (an operation that changes the grid, e.g. a 'valid' filter, sets its own): a volume read from NIfTI/DICOM and
 * processed is written back with its affine, not an identity one. A resident output (GpuImage) gets it in place, a
 * host one in a copy of the result.
 */
function keepGeometry<R extends { output: unknown }>(input: Image | GpuImage, r: R): R {
  const out = r.output as Partial<Image> | GpuImage | undefined;
  if (!input.geometry || !out || typeof out !== 'object' || out.geometry || out.shape?.join() !== input.shape.join()) return r;
  if (out instanceof GpuImage) {
    out.geometry = input.geometry;
    return r;
  }
  return 'data' in out ? { ...r, output: { ...out, geometry: input.geometry } } : r;
}

/**
 * Declares an operation: returns its public function (with the declaration as `.op`). The function validates
 * the parameters and the input, then runs the GPU plan (host input: upload, record, download, each timed;
 * resident input: record only, the output stays on the device) or the CPU implementation on `pool`.
 */
export function defineOp<S extends readonly ParamSpec[], X extends object = object, Q = ResolvedOf<S>>(
  decl: OpDeclaration<S, X, Image, GpuImage, Q>,
): ImageOpFunction<S, X>;
export function defineOp<S extends readonly ParamSpec[], X extends object, H, D extends DeviceResult<H>, Q = ResolvedOf<S>>(
  decl: OpDeclaration<S, X, H, D, Q> & { alwaysDownload: true },
): HostOpFunction<S, X, H>;
export function defineOp<S extends readonly ParamSpec[], X extends object, H, D extends DeviceResult<H>, Q>(
  decl: OpDeclaration<S, X, H, D, Q>,
): unknown {
  const name = decl.name;
  // Q is ResolvedOf<S> where no `prepare` is declared (its default): the paths take the parameters themselves.
  const prepare = (p: ResolvedOf<S>, input: Image | GpuImage, gpu?: GpuContext): Q => (decl.prepare ? decl.prepare(p, input, gpu) : (p as Q));
  const imageOut = decl.writes ?? !decl.alwaysDownload;
  if (!decl.gpu && !decl.gpuSteps) throw new Error(`${name}: declare a GPU plan (gpu) or GPU steps (gpuSteps)`);
  // Every path below takes the engine's options too; the public function and Operation.run drop them (publicOptions).
  type EngineOpts = OptionsOf<S> & EngineRunOptions;
  async function run(src: Image | GpuImage, opts: EngineOpts = {} as EngineOpts): Promise<OpResult<H | D> & Partial<X>> {
    const t0 = now();
    const p = paramsOf(name, decl.params, opts);
    // An image operation that does not declare volumes takes 2D images (a depth of 1 too): a typed error here, so that
    // no operation needs a check of its own for it (a malformed input is validateImage's to refuse, below).
    if (imageOut && !decl.input.volumes && Array.isArray(src?.shape)) plane2D(src.shape, name);
    // `out` is an image to write into: an operation whose output is not an image (counts) ignores it.
    const out = imageOut ? opts.out : undefined;
    if (src instanceof GpuImage) {
      // A resident input runs on its own context: a `gpu` option naming another one is a mistake, not a choice.
      if (opts.gpu && opts.gpu !== src.ctx) throw new InvalidArgumentError(`${name}: the GpuImage belongs to another GPU context than ${optionRef('gpu')}`);
      if (decl.input.colour === 'planes' && src.channels > 1 && !grayAsked(p)) return planesOfResident(src, opts, t0);
      residentInput(src, name, decl.input);
      decl.check?.(p, src, src.ctx);
      return keepGeometry(src, await onGpu(src.ctx, src, p, prepare(p, src, src.ctx), { ...opts, out }, t0, false));
    }
    const pool = opts.pool ?? inlinePool;
    const { img, luma } = await hostInput(src, name, decl.input, pool, grayAsked(p));
    if (decl.input.colour === 'planes' && img.channels > 1) return onPlanes(img, opts, out, t0);
    decl.check?.(p, img, opts.gpu);
    const q = prepare(p, img, opts.gpu);
    if (out) checkOut(out, luma ? src : { ...img, ...decl.outputOf?.(p, img) });
    const inner = { ...opts, out: luma ? undefined : out };
    const r = keepGeometry(img, !opts.gpu ? await onCpu(img, q, inner, t0)
      : decl.gpuHost ? await onGpuHost(opts.gpu, img, q, inner, t0, decl.gpuHost) : await onGpu(opts.gpu, img, p, q, inner, t0, true));
    if (!luma) return r;
    const output = intoOut(await withLumaCpu(src, r.output as Image, pool), out) as H;
    return { ...r, output, timings: closeTimings(r.timings, t0) }; // colour conversion counts as host time
  }

  /**
   * A colour host image under the 'planes' rule: the operation on each channel alone (CPU or GPU as asked),
   * interleaved back; the timings summed (the split and the interleave count as host time).
   */
  async function onPlanes(img: Image, opts: EngineOpts, out: Image | undefined, t0: number): Promise<OpResult<H> & Partial<X>> {
    const results: (OpResult<H | D> & Partial<X>)[] = [];
    for (const plane of channelPlanes(img)) results.push(await run(plane, { ...opts, out: undefined, view: false }));
    const planes = results.map((r) => r.output as Image);
    if (out) checkOut(out, { ...planes[0], channels: img.channels });
    const output = intoOut(interleavePlanes(planes), out) as H;
    return { ...results[0], output, timings: closeTimings(sumTimings(results.map((r) => r.timings)), t0) };
  }

  /**
   * A colour GpuImage under the 'planes' rule, on the device: each channel taken out as a plane (channelGpu), the
   * operation run on it, the planes merged back (mergeChannelsGpu) — the host path's pixels, recorded into the
   * caller's recording where there is one. A result of another type than the input's (a float filter of 8-bit
   * channels) is interleaved on the host and uploaded again.
   */
  async function planesOfResident(src: GpuImage, opts: EngineOpts, t0: number): Promise<OpResult<H | D> & Partial<X>> {
    src.assertLive();
    requireDtype(src, decl.input.dtypes, name);
    if (opts.out) throw new InvalidArgumentError(`${name} of a colour GpuImage (each channel alone) takes no ${optionRef('out')}`);
    const gpu = src.ctx, rec = opts.recording;
    if (src.dtype === 'float32') {
      // No float kernels split channels: the host path's planes, uploaded again.
      rec?.flush();
      const r = await run(await src.toHost(), { ...opts, gpu, recording: undefined, inPlace: false });
      return { ...r, output: (await GpuImage.upload(gpu, r.output as Image)) as unknown as D, timings: closeTimings(r.timings, t0) };
    }
    const queued = { wait: false, recording: rec, profile: opts.profile };
    // A plane or per-channel result goes back to the pool once the recorded work reading it is submitted.
    const done = (g: GpuImage): void => (rec ? rec.retain(g.buffer) : g.release());
    const results: (OpResult<H | D> & Partial<X>)[] = [];
    for (let k = 0; k < src.channels; k++) {
      const plane = (await runGpu<Image, GpuImage>(gpu, src, `${name}: channel ${k}`, queued, (x, r) => channelGpu(x, k, r))).output as GpuImage;
      results.push(await run(plane, { ...opts, out: undefined, inPlace: false }));
      done(plane);
    }
    const outs = results.map((r) => r.output as unknown as GpuImage);
    let output: GpuImage;
    if (outs[0].dtype === src.dtype) {
      output = (await runGpu<Image, GpuImage>(gpu, outs[0], `${name}: channels`, queued, (_x, r) => mergeChannelsGpu(src, outs, r))).output as GpuImage;
    } else {
      rec?.flush();
      output = await GpuImage.upload(gpu, interleavePlanes(await Promise.all(outs.map((o) => o.toHost()))));
    }
    outs.forEach(done);
    return { ...results[0], output: output as unknown as D, timings: closeTimings(sumTimings(results.map((r) => r.timings)), t0) };
  }

  async function onCpu(img: Image, q: Q, opts: EngineOpts, t0: number): Promise<OpResult<H> & Partial<X>> {
    const tk = now();
    const r = await decl.cpu(img, q, { pool: opts.pool ?? inlinePool, out: opts.out });
    const ms = now() - tk;
    const { output, kernels, extra } = isProduced(r) ? r : { output: r, kernels: undefined, extra: undefined };
    const timings = makeTimings({ backend: 'cpu', upload: 0, download: 0, kernels: kernels ?? [{ name, ms }], kernelSource: 'cpu', total: now() - t0 });
    return { output, timings, ...(extra ?? {}) } as OpResult<H> & Partial<X>;
  }

  async function onGpu(gpu: GpuContext, input: Image | GpuImage, p: ResolvedOf<S>, q: Q, opts: EngineOpts, t0: number, host: boolean): Promise<OpResult<H | D> & Partial<X>> {
    const plan = decl.gpu;
    const convert = gpuConversion(input, decl.input, grayAsked(p));
    if (decl.gpuSteps && (!plan || decl.stepsWhen?.(p, input, gpu, opts.extras !== false))) {
      return convert ? stepsOnColour(gpu, input as GpuImage, convert, p, opts, t0, decl.gpuSteps) : runSteps(gpu, input, p, opts, t0, decl.gpuSteps);
    }
    if (!plan) throw new Error(`${name}: no GPU path`); // unreachable: checked when declared
    let produced: Produced<D, X> | undefined;
    const extraImages = (decl.gpuImages?.(p, input) ?? []).filter((x): x is Image | GpuImage => x !== undefined);
    // In place only on a resident input: a host input's uploaded copy is released by runGpu after the download. A
    // plane converted here is this call's own: the operation may write over it.
    const planOpts = input instanceof GpuImage ? { ...opts, inPlace: opts.inPlace || !!convert } : { ...opts, inPlace: false };
    const r = await runGpu<H, D>(gpu, input, decl.gpuName?.(p) ?? name, opts as GpuRunOptions & { out?: H }, async (x, rec, extra) => {
      const work = convert ? await (convert === 'gray' ? grayGpu : lumaGpu)(x, rec) : x;
      let out = await plan(work, rec, q, extra, planOpts);
      if (isProduced(out)) {
        produced = out;
        out = out.output;
      }
      if (convert === 'luma') {
        const y = out as unknown as GpuImage;
        out = (await fromLumaGpu(x, y, rec)) as unknown as D;
        if (y !== work) rec.retain(y.buffer); // back to the pool once the recorded work is submitted
      }
      if (work !== x && (out as unknown) !== work) rec.retain(work.buffer);
      return out;
    }, { extra: extraImages, alwaysDownload: decl.alwaysDownload });
    let extra: Partial<X> = produced?.extra ?? {};
    const read = opts.extras === false ? undefined : produced?.read;
    if (read) {
      opts.recording?.flush(); // what `read` reads back was recorded there
      const td = now();
      extra = { ...extra, ...(await read()) };
      r.timings.download += now() - td;
    } else if (produced?.drop) {
      // Not before the work that writes what it frees is submitted: a buffer taken from the pool and filled by
      // queue.writeBuffer in the meantime would be filled ahead of that work, which would then overwrite it.
      if (opts.recording) opts.recording.afterSubmit(produced.drop);
      else produced.drop();
    }
    const timings = host || decl.alwaysDownload || read ? closeTimings(r.timings, t0) : r.timings;
    return { ...r, timings, ...extra };
  }

  /**
   * GPU steps (several recordings, host decisions between them) on a resident colour input taken as gray: the
   * conversion is queued first, the steps run on the gray image. (No operation on lightness declares steps.)
   */
  async function stepsOnColour(gpu: GpuContext, input: GpuImage, convert: 'gray' | 'luma', p: ResolvedOf<S>, opts: EngineOpts, t0: number, steps: GpuSteps<ResolvedOf<S>, X, GpuImage | H>): Promise<OpResult<H | D> & Partial<X>> {
    if (convert === 'luma') throw new Error(`${name}: GPU steps on the lightness of a colour image are not implemented`);
    const queued = { wait: false, recording: opts.recording, profile: opts.profile };
    const gray = (await runGpu<Image, GpuImage>(gpu, input, `${name}: gray`, queued, (x, rec) => grayGpu(x, rec))).output as GpuImage;
    try {
      // runSteps submits the caller's recording first, where the conversion may have been queued.
      // Not in place: `gray` is released below, which an output written over it would be too.
      return await runSteps<ResolvedOf<S>, X, H, D>(gpu, gray, p, { ...opts, inPlace: false }, t0, steps);
    } finally {
      gray.release(); // the steps have submitted their work: the queue reads it before any later reuse
    }
  }

  async function onGpuHost(gpu: GpuContext, img: Image, q: Q, opts: EngineOpts, t0: number, host: GpuHostRun<Q, H, X>): Promise<OpResult<H> & Partial<X>> {
    opts.recording?.flush(); // this path submits its own work: what the caller recorded goes first
    const r = await host(img, q, gpu, opts);
    return { ...r, timings: closeTimings(r.timings, t0) };
  }

  const operation: Operation<S, X, H, D> = {
    name, summary: decl.summary, params: decl.params, positional: decl.positional ?? [], input: decl.input, colour: decl.input.colour !== 'gray',
    writes: imageOut, args: [...(decl.positional ?? []), 'in', ...(imageOut ? ['out'] : [])],
    readsColour: (params) => decl.input.colour !== 'gray' && !grayAsked(params),
    steps: (params) => [{ op: name, params }],
    light: (params) => (typeof decl.light === 'function' ? decl.light(paramsOf(name, decl.params, params)) : decl.light === true),
    outputOf: (params, input) => decl.outputOf?.(paramsOf(name, decl.params, params), input) ?? { shape: input.shape, dtype: input.dtype },
    reach: (params, input) => decl.reach?.(paramsOf(name, decl.params, params), input),
    run: ((src: Image | GpuImage, params: Record<string, unknown>, on: RunOptions = {}) => run(src, publicOptions({ ...params, ...on }) as EngineOpts)) as Operation<S, X, H, D>['run'],
    compare: (a, b) => (decl.compare ? decl.compare(a, b) : compareImages(a as Image, b as Image)),
    report: (r, p) => decl.report?.(r, p as ResolvedOf<S>) ?? { json: {}, text: [] },
  };
  ENGINE_RUNS.set(operation as Operation, ((src, params, on = {}) => run(src, { ...params, ...on } as EngineOpts)) as EngineRun);
  const fn = (src: Image | GpuImage, opts: OpOptions<S> = {} as OpOptions<S>) => run(src, publicOptions(opts) as EngineOpts);
  return Object.assign(fn, { op: operation });
}

type EngineRun = (src: Image | GpuImage, params: Record<string, unknown>, on?: EngineRunOptions) => Promise<OpResult<unknown>>;

/** Each operation's run with the engine's options (EngineRunOptions), by operation: reached through runOperation only. */
const ENGINE_RUNS = new WeakMap<Operation, EngineRun>();

/**
 * An operation made of operations (a pipeline) that is not a defineOp declaration: its run with the engine's options,
 * reached through runOperation as a declared operation's is.
 */
export function engineEntry(op: Operation, run: EngineRun): void {
  ENGINE_RUNS.set(op, run);
}

/**
 * Runs an operation with the engine's options besides the public ones (EngineRunOptions: a batch's shared recording,
 * in place, no extras, queued, views): the entry of the engine (batch, pipelines, scale-out) and of benchmarks and
 * tests that measure those paths. Not exported by the package: users call the operation's function or `.op.run`.
 */
export function runOperation<X extends object, H, D>(op: Operation<readonly ParamSpec[], X, H, D>, src: Image, params: Record<string, unknown>, on?: EngineRunOptions): Promise<OpResult<H> & Partial<X>>;
export function runOperation<X extends object, H, D>(op: Operation<readonly ParamSpec[], X, H, D>, src: GpuImage, params: Record<string, unknown>, on?: EngineRunOptions): Promise<OpResult<D> & Partial<X>>;
export function runOperation<X extends object, H, D>(op: Operation<readonly ParamSpec[], X, H, D>, src: Image | GpuImage, params: Record<string, unknown>, on?: EngineRunOptions): Promise<OpResult<H | D> & Partial<X>>;
export function runOperation(op: Operation, src: Image | GpuImage, params: Record<string, unknown>, on: EngineRunOptions = {}): Promise<OpResult<unknown>> {
  const run = ENGINE_RUNS.get(op);
  if (!run) throw new Error(`${op.name}: not an operation declared with defineOp or given an engine entry`);
  return run(src, params, on);
}

/**
 * The GPU path of several recordings: a host input is uploaded once, the steps run on the resident copy, and
 * the result comes back once (into `opts.out` or a new image; a host result as it is); the steps' timings add up.
 * Exported for objects that keep GPU plans across calls (detection's Detector) and run the same path.
 */
export async function runSteps<R, X, H, D>(gpu: GpuContext, img: Image | GpuImage, p: R, opts: EngineRunOptions, t0: number, steps: GpuSteps<R, X, GpuImage | H>): Promise<OpResult<H | D> & Partial<X>> {
  let upload = 0, download = 0;
  const profile = opts.profile ?? PROFILE_BY_DEFAULT;
  opts.recording?.flush(); // the steps record and submit their own: what the caller recorded goes first
  let dev: GpuImage;
  if (img instanceof GpuImage) {
    dev = img;
  } else {
    const tu = now();
    dev = await GpuImage.upload(gpu, img);
    if (profile) await gpu.finish();
    upload = now() - tu;
  }
  try {
    // In place only over the caller's resident input: an upload made here is released below.
    const r = await steps(dev, p, { profile, wait: opts.wait, inPlace: dev === img && opts.inPlace === true });
    let output: Image | GpuImage | H = r.output;
    if (!(img instanceof GpuImage) && r.output instanceof GpuImage) {
      const td = now();
      output = await r.output.toHost(opts.out);
      r.output.release();
      download = now() - td;
    }
    const timings = r.steps.reduce(addTimings, { backend: 'gpu', host: 0, upload, download, kernels: [], kernelSource: r.steps[0]?.kernelSource ?? 'wallclock', total: 0 } as Timings);
    return { output: output as H | D, timings: closeTimings(timings, t0), ...(r.extra ?? {}) } as OpResult<H | D> & Partial<X>;
  } finally {
    if (!(img instanceof GpuImage)) dev.release();
  }
}

/** Adds one step's timings to another's (operations composed of operations). */
export function addTimings(a: Timings, b: Timings): Timings {
  return {
    ...a, host: a.host + b.host, upload: a.upload + b.upload, download: a.download + b.download,
    kernels: [...a.kernels, ...b.kernels], total: a.total + b.total,
    ...(a.slabs || b.slabs ? { slabs: Math.max(a.slabs ?? 1, b.slabs ?? 1) } : {}),
  };
}

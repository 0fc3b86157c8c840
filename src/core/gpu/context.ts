import {
  CPU_PATH, GpuDeviceLostError, GpuOutOfMemoryError, GpuValidationError, ImgpuError, NoGpuAdapterError, optionRef, ShaderCompileError,
} from '../errors.js';
import { nameBindings, parseBindings, type ModuleBindings } from './bindings.js';
import { BufferPool } from './buffer-pool.js';
import { probeFusedFma } from './fma-probe.js';

/** What the adapter is, for `imgpu info` and benchmark records. */
export interface AdapterDescription {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for CPU (software) adapters such as lavapipe, llvmpipe or SwiftShader. */
  software: boolean;
}

export interface GpuContextOptions {
  /** Ask for timestamp queries when the adapter has them. @default true */
  timestamps?: boolean;
  /** Feature level passed to requestAdapter ('compatibility' for OpenGL ES). @default 'core' */
  featureLevel?: 'core' | 'compatibility';
  /** Optional features not to request even where the adapter has them (to test fallback kernels). @default [] */
  withoutFeatures?: readonly string[];
  /** Upload/download strategy. 'staging': reused mapped staging buffers; 'writeBuffer': queue.writeBuffer. @default 'staging' */
  transfer?: 'staging' | 'writeBuffer';
  /**
   * Copies host bytes into or out of mapped staging memory (same lengths). Node passes native threads
   * (src/node/host-copy.ts); the default is TypedArray.set.
   */
  hostCopy?: HostCopy;
  /**
   * Lower limits to work within than the device's own (never higher): to emulate a smaller device, or to test the
   * splitting of work beyond maxStorageBufferBindingSize on small images. @default the device's limits
   */
  limits?: Partial<Record<LimitName, number>>;
  /**
   * How kernels that need an exactly rounded fused multiply-add get it (the Gaussian threshold): 'probe' tests
   * once (fusedFma()) whether WGSL `fma()` fuses on this adapter and uses it where it does, else the software
   * fma; 'native' uses `fma()` regardless (to test that variant on an adapter that does not fuse: results may
   * then differ from OpenCV's); 'software' always emulates it. @default 'probe'
   */
  fma?: 'probe' | 'native' | 'software';
  /**
   * Kernel variants by name: measurement knobs for benchmarks and the roofline (every variant gives the same
   * bytes). Each family checks its own value when it first runs (a typed error lists the choices). @default {}
   */
  variants?: KernelVariants;
}

/** Kernel variants a context runs (GpuContextOptions.variants); the Node entry maps IMGPU_CLAHE_TILED / IMGPU_MORPH_SCHEDULE onto them. */
export interface KernelVariants {
  /** 8-bit tiled CLAHE's kernels, by name (ops/clahe/gpu.ts CLAHE_TILED_VARIANTS). @default CLAHE_TILED_DEFAULT */
  claheTiled?: string;
  /** Morphology's schedule: a JSON object of MorphSchedule fields over the default (ops/morph/gpu.ts). @default the default schedule */
  morphSchedule?: string;
}

/**
 * A byte copy between two equal-length views, one of them possibly mapped GPU memory; `parallel` when it uses
 * several threads (uploads then go in one piece instead of overlapped chunks); `async`, where there is one, the same
 * copy off the JavaScript thread (neither view may be touched, nor a mapped one unmapped, until it resolves).
 */
export type HostCopy = ((dst: Uint8Array, src: Uint8Array) => void) & { parallel?: boolean; async?: (dst: Uint8Array, src: Uint8Array) => Promise<void> };

const typedArraySet: HostCopy = (dst, src) => dst.set(src);

const LIMIT_NAMES = [
  'maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ', 'maxComputeWorkgroupsPerDimension', 'maxStorageBuffersPerShaderStage',
  'minStorageBufferOffsetAlignment', 'minUniformBufferOffsetAlignment', 'maxUniformBufferBindingSize',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Adapter names of software rasterizers (CPU emulation of a GPU; Microsoft's WARP is the "Basic Render Driver"). */
export const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|swiftshader|software|softpipe|basic render driver/i;

/** What an epoch of error scopes caught (openScope): each a message, or none. */
interface EpochErrors {
  validation?: string;
  oom?: string;
  uncaptured: string[];
}

/** An operation open in the error scopes: the answers of every epoch it was open in. */
interface ScopeMember {
  epochs: Promise<EpochErrors>[];
}

/** One pair of error scopes on the device's stack, and the operations open in it. */
interface Epoch {
  members: Set<ScopeMember>;
}

/** One compute pipeline as GpuContext.pipeline() is asked for it: what prefetchPipelines() takes. */
export interface PipelineRequest {
  label: string;
  code: string;
  entryPoint: string;
  constants: Record<string, number>;
}

/** A pipeline's cache key: its source, entry point and constants (the label only names it). */
function pipelineKey(code: string, entryPoint: string, constants: Record<string, number>): string {
  return `${entryPoint}\u0000${JSON.stringify(constants)}\u0000${code}`;
}

/**
 * One WebGPU device and everything that belongs to it: its limits and features, the pipeline cache, the
 * buffer pool, device-loss state and error scopes. It is a value handed to operations, never a global.
 */
export class GpuContext {
  readonly limits: Record<LimitName, number>;
  readonly features: ReadonlySet<string>;
  readonly timestamps: boolean;
  readonly buffers: BufferPool;
  readonly transfer: 'staging' | 'writeBuffer';
  /** The kernel variants asked for (GpuContextOptions.variants); a benchmark may change them between runs. */
  readonly variants: KernelVariants;
  readonly hostCopy: HostCopy;
  private readonly fma: 'probe' | 'native' | 'software';
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  /** The pipelines asked for through pipeline(), by key, in the order first asked (not those only prefetched). */
  private readonly asked = new Map<string, PipelineRequest>();
  private readonly modules = new Map<string, GPUShaderModule>();
  /** The binding names of each module source, read once (dispatches bind by name: bindings.ts). */
  private readonly bindingNames = new Map<string, ModuleBindings>();
  private readonly plans = new Map<string, Promise<unknown>>();
  private lostReason: string | undefined;
  private readonly cleanups: (() => void)[] = [];
  private readonly uncaptured: string[] = [];
  /** The error scopes pushed for the operations open now (openScope), if any. */
  private epoch: Epoch | undefined;

  private constructor(
    // The GPU (instance) and adapter objects are held for the device's whole life: in Dawn's Node binding a
    // garbage-collected GPU object destroys the native instance under a live device, and the next event
    // poll crashes (segfault / futex abort). This was the root cause of the "Dawn crashes when the main
    // thread is busy" reports: busy JavaScript allocates, which lets the GC run. See docs/device.md.
    private readonly instance: GPU,
    private readonly adapterObject: GPUAdapter,
    readonly device: GPUDevice,
    readonly adapter: AdapterDescription,
    opts: GpuContextOptions,
  ) {
    const limits = {} as Record<LimitName, number>;
    for (const name of LIMIT_NAMES) {
      const own = Number((device.limits as unknown as Record<string, number>)[name]);
      const lower = opts.limits?.[name];
      limits[name] = lower === undefined ? own : name.startsWith('min') ? Math.max(own, lower) : Math.min(own, lower);
    }
    this.limits = limits;
    this.features = new Set(device.features as unknown as Iterable<string>);
    this.timestamps = (opts.timestamps ?? true) && this.features.has('timestamp-query');
    this.transfer = opts.transfer ?? 'staging';
    this.hostCopy = opts.hostCopy ?? typedArraySet;
    this.fma = opts.fma ?? 'probe';
    this.variants = { ...opts.variants };
    this.buffers = new BufferPool();
    // device.lost resolves once (never rejects): on loss or destroy().
    void device.lost.then((info) => {
      this.lostReason = info.reason === 'destroyed' ? 'the device was destroyed' : info.message || String(info.reason);
    });
    device.addEventListener('uncapturederror', (ev) => {
      this.uncaptured.push((ev as GPUUncapturedErrorEvent).error.message);
    });
  }

  /**
   * Acquires an adapter and a device from a `GPU` object (Node: the `webgpu` package's `create()`;
   * browser: `navigator.gpu`), asking for the adapter's own limits rather than the spec defaults.
   */
  static async create(gpu: GPU | undefined, opts: GpuContextOptions = {}): Promise<GpuContext> {
    if (!gpu) throw new NoGpuAdapterError(`WebGPU is not available in this environment (no navigator.gpu / Dawn). Use ${CPU_PATH}.`);
    let adapter: GPUAdapter | null;
    try {
      adapter = await gpu.requestAdapter({ powerPreference: 'high-performance', featureLevel: opts.featureLevel ?? 'core' } as GPURequestAdapterOptions);
    } catch (e) {
      // Dawn's message lists the adapters on lines of their own; CLI errors are one line.
      const why = (e as Error).message.split('\n').map((l) => l.replace(/^\s*\*\s*/, '').trim()).filter(Boolean).join('; ').replace(/:; /g, ': ');
      throw new NoGpuAdapterError(`no WebGPU adapter: ${why}. Use ${CPU_PATH}, or name another adapter (${optionRef('adapter')}, or IMGPU_ADAPTER).`, { cause: e });
    }
    if (!adapter) throw new NoGpuAdapterError(`no WebGPU adapter was found (no GPU or no driver). Use ${CPU_PATH}, or install a software adapter (Mesa lavapipe).`);
    const requiredLimits: Record<string, number> = {};
    for (const name of LIMIT_NAMES) {
      const v = (adapter.limits as unknown as Record<string, number>)[name];
      if (typeof v === 'number' && !name.startsWith('min')) requiredLimits[name] = v;
    }
    const optional = opts.timestamps === false ? ['subgroups', 'shader-f16'] : ['timestamp-query', 'subgroups', 'shader-f16'];
    const wanted = optional.filter((f) => adapter!.features.has(f) && !opts.withoutFeatures?.includes(f)) as GPUFeatureName[];
    let device: GPUDevice;
    try {
      device = await adapter.requestDevice({ requiredFeatures: wanted, requiredLimits });
    } catch (e) {
      throw new NoGpuAdapterError(`the adapter refused to create a device: ${(e as Error).message}`, { cause: e });
    }
    const info = adapter.info ?? ({} as GPUAdapterInfo);
    const desc: AdapterDescription = {
      vendor: info.vendor ?? '', architecture: info.architecture ?? '', device: info.device ?? '', description: info.description ?? '',
      software: SOFTWARE_ADAPTER.test(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`) || (info as { isFallbackAdapter?: boolean }).isFallbackAdapter === true,
    };
    return new GpuContext(gpu, adapter, device, desc, opts);
  }

  get lost(): boolean {
    return this.lostReason !== undefined;
  }

  /** Throws GpuDeviceLostError if the device is gone; ops call this before any GPU work. */
  assertAlive(): void {
    if (this.lostReason !== undefined) {
      throw new GpuDeviceLostError(`the GPU device was lost (${this.lostReason}); create a new context, or use ${CPU_PATH}`);
    }
  }

  /** An operation's plan (pipelines, constants), made once per context and key by `make`. */
  plan<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.plans.get(key) as Promise<T> | undefined;
    if (!p) {
      p = make();
      p.catch(() => this.plans.delete(key));
      this.plans.set(key, p);
    }
    return p;
  }

  /**
   * Whether kernels may use WGSL `fma()` as the exact fused multiply-add: the `fma` option, or (by default) a tiny
   * kernel run once per context on the first call (fma-probe.ts), its answer cached.
   */
  fusedFma(): Promise<boolean> {
    if (this.fma !== 'probe') return Promise.resolve(this.fma === 'native');
    return this.plan('fma probe', () => probeFusedFma(this));
  }

  /** Shader module cache keyed by source text. */
  private module(code: string, label: string): GPUShaderModule {
    let m = this.modules.get(code);
    if (!m) {
      // Its own scope, so a compile error surfaces through createComputePipelineAsync's rejection (as a
      // ShaderCompileError) instead of leaking into the next operation's error scope.
      this.device.pushErrorScope('validation');
      m = this.device.createShaderModule({ code, label });
      void this.device.popErrorScope().catch(() => undefined);
      this.modules.set(code, m);
    }
    return m;
  }

  /** The @group(0) binding names of a module source, parsed on its first pipeline. */
  private bindingsOf(code: string): ModuleBindings {
    let b = this.bindingNames.get(code);
    if (!b) {
      b = parseBindings(code);
      this.bindingNames.set(code, b);
    }
    return b;
  }

  /**
   * A compute pipeline, compiled once per (source, entry point, constants) and cached, its bindings known by
   * their WGSL names (Recording.dispatch). A compile failure is a ShaderCompileError that quotes the offending
   * WGSL line.
   */
  pipeline(label: string, code: string, entryPoint: string, constants: Record<string, number> = {}): Promise<GPUComputePipeline> {
    const key = pipelineKey(code, entryPoint, constants);
    if (!this.asked.has(key)) this.asked.set(key, { label, code, entryPoint, constants });
    return this.compiled(key, label, code, entryPoint, constants);
  }

  /**
   * The pipelines this context was asked for so far (pipeline()), in order: what a later run of the same work can
   * prefetch. Prefetched pipelines that were never asked for are not among them.
   */
  pipelineRequests(): PipelineRequest[] {
    return [...this.asked.values()];
  }

  /**
   * Starts compiling `requests` at once, each as pipeline() would, without waiting: Dawn compiles pipelines asked for
   * together side by side, where plans ask one family after another as each is first used (issue 40 item 5;
   * docs/throughput.md, start-up). pipeline() with the same arguments later gets the same compilation. A request
   * that fails to compile is dropped here; asking for it again through pipeline() reports the error.
   */
  prefetchPipelines(requests: readonly PipelineRequest[]): void {
    if (this.lost) return;
    for (const r of requests) {
      this.compiled(pipelineKey(r.code, r.entryPoint, r.constants), r.label, r.code, r.entryPoint, r.constants).catch(() => undefined);
    }
  }

  /** The pipeline of `key`, compiled once and cached (pipeline()). */
  private compiled(key: string, label: string, code: string, entryPoint: string, constants: Record<string, number>): Promise<GPUComputePipeline> {
    this.assertAlive();
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.module(code, label);
      p = this.device
        .createComputePipelineAsync({ label: `${label}:${entryPoint}`, layout: 'auto', compute: { module, entryPoint, constants } })
        .then((pipeline) => {
          nameBindings(pipeline, `${label}:${entryPoint}`, this.bindingsOf(code), entryPoint);
          return pipeline;
        })
        .catch(async (e: unknown) => {
          this.pipelines.delete(key);
          this.modules.delete(code);
          this.assertAlive();
          throw new ShaderCompileError(`${label}: ${await describeCompileError(module, code, e)}`, { cause: e });
        });
      this.pipelines.set(key, p);
    }
    return p;
  }

  /**
   * Creates a buffer after checking it against the device limits, so an image too large for the device is a
   * GpuOutOfMemoryError with sizes in it, not a validation error and zeros.
   */
  createBuffer(size: number, usage: GPUBufferUsageFlags, label: string, mappedAtCreation = false): GPUBuffer {
    this.assertAlive();
    const padded = alignUp(Math.max(size, 16), 16);
    if (padded > this.limits.maxBufferSize) {
      throw new GpuOutOfMemoryError(`${label} needs ${fmtBytes(padded)} but this adapter allows at most ${fmtBytes(this.limits.maxBufferSize)} per buffer`);
    }
    try {
      return this.device.createBuffer({ size: padded, usage, label, mappedAtCreation });
    } catch (e) {
      throw new GpuOutOfMemoryError(`could not allocate ${fmtBytes(padded)} for ${label}: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * Runs `body` inside validation and out-of-memory error scopes and turns anything WebGPU reports into a
   * typed error (Dawn does not throw on validation errors: results would silently be zeros).
   */
  async scoped<T>(what: string, body: () => Promise<T>): Promise<T> {
    const scope = this.openScope(what);
    let result: T | undefined;
    let thrown: unknown;
    try {
      result = await body();
    } catch (e) {
      thrown = e;
    }
    await scope.close(thrown);
    return result as T;
  }

  /**
   * Opens the validation and out-of-memory error capture of scoped() around the work recorded from now on.
   * `close(thrown)` ends it at once (before anything else is recorded) and resolves once Dawn has answered, throwing
   * the typed error there is (or `thrown`, what the work threw). A frame pipeline closes the scope of a frame when it
   * has submitted it and awaits the answer with the frame's readback, instead of a polling round before the next
   * frame can be submitted.
   *
   * WebGPU's error scopes are one stack per device, and operations that await run interleaved on the JavaScript
   * thread (a batch decodes photos ahead and encodes behind while one is processed): with a pair of scopes pushed
   * and popped per operation, the first to close popped the scopes of one opened after it, and an error of its own
   * made before that one opened was reported by the other while it returned its output as good. So the scopes are
   * shared: while any operation is open one pair is pushed (an epoch); an operation that closes pops it, every
   * operation open during it gets its errors, and the others go on in a new pair. An operation fails on an error
   * of any epoch it was open in: never an error missed, at worst another's error failing an operation that was
   * open with it (errors are out-of-memory or imgpu's bugs).
   */
  openScope(what: string): { close(thrown?: unknown): Promise<void> } {
    this.assertAlive();
    if (!this.epoch) {
      this.uncaptured.length = 0; // errors raised before this operation, outside every scope, are not its errors
      this.epoch = this.beginEpoch(new Set());
    }
    const member: ScopeMember = { epochs: [] };
    this.epoch.members.add(member);
    return {
      close: async (thrown?: unknown) => {
        this.endEpoch(member);
        const errors = await Promise.all(member.epochs);
        if (thrown instanceof ImgpuError) throw thrown;
        this.assertAlive();
        const oom = errors.find((e) => e.oom)?.oom;
        if (oom) throw new GpuOutOfMemoryError(`${what}: the GPU ran out of memory (${oom}). Use a smaller image or ${CPU_PATH}.`);
        const validation = errors.find((e) => e.validation)?.validation;
        if (validation) throw new GpuValidationError(`${what}: WebGPU validation failed — this is a bug in imgpu, please report it: ${validation}`);
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the work threw, unchanged
        if (thrown) throw thrown;
        const uncaptured = errors.flatMap((e) => e.uncaptured);
        if (uncaptured.length) throw new GpuValidationError(`${what}: ${uncaptured.join('; ')}`);
      },
    };
  }

  /** Pushes the error scopes of a new epoch for `members`. */
  private beginEpoch(members: Set<ScopeMember>): Epoch {
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    return { members };
  }

  /**
   * Pops the current epoch's scopes as `closing` leaves it: its errors go to every member, and the members still
   * open go on in a new epoch. Both pops are issued before either is awaited: one wait for the device instead of two
   * (each resolves only when Dawn next processes events — a polling round that cost ~1 ms of a host→host call on the
   * H100).
   */
  private endEpoch(closing: ScopeMember): void {
    const epoch = this.epoch!;
    this.epoch = undefined;
    const popped = Promise.all([this.device.popErrorScope().catch(() => null), this.device.popErrorScope().catch(() => null)]);
    // Errors Dawn raised outside the scopes (uncapturederror events): those so far, and those it reports with the pops.
    const early = this.uncaptured.splice(0);
    const errors = popped.then(([validation, oom]) => ({ validation: validation?.message, oom: oom?.message, uncaptured: [...early, ...this.uncaptured.splice(0)] }));
    for (const m of epoch.members) m.epochs.push(errors);
    epoch.members.delete(closing);
    if (epoch.members.size) this.epoch = this.beginEpoch(epoch.members);
  }

  /** Waits until all submitted work has finished (and surfaces device loss). */
  async finish(): Promise<void> {
    await this.device.queue.onSubmittedWorkDone();
    this.assertAlive();
  }

  /** Releases the device; the context is unusable afterwards. */
  /** Registers work to do when the context is destroyed (e.g. releasing staging buffers). */
  onDestroy(fn: () => void): void {
    this.cleanups.push(fn);
  }

  destroy(): void {
    for (const fn of this.cleanups.splice(0)) fn();
    this.buffers.clear();
    this.device.destroy();
  }

}

async function describeCompileError(module: GPUShaderModule, code: string, e: unknown): Promise<string> {
  const lines = code.split('\n');
  try {
    const info = await module.getCompilationInfo();
    const errs = info.messages.filter((m) => m.type === 'error');
    if (errs.length) {
      return errs.map((m) => `WGSL line ${m.lineNum}: ${m.message}\n  ${lines[m.lineNum - 1]?.trim() ?? ''}`).join('\n');
    }
  } catch {
    /* fall through to the pipeline error's own text */
  }
  return (e as Error)?.message ?? String(e);
}

export function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

export function fmtBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

import { CPU_PATH, NoGpuAdapterError } from '../core/errors.js';
import { GpuContext, SOFTWARE_ADAPTER, type GpuContextOptions, type KernelVariants } from '../core/gpu/context.js';
import { nativeHostCopy } from './host-copy.js';
import { loadNativeModule } from '../io/native-module.js';
import { assertNodeVersion } from './runtime.js';

export interface NodeGpuOptions extends GpuContextOptions {
  /** Substring of the adapter's name (Dawn's `adapter=` toggle), e.g. 'llvmpipe'. @default env IMGPU_ADAPTER */
  adapter?: string;
  /** Dawn backend: vulkan (Linux default), opengles, opengl, null. @default env IMGPU_BACKEND */
  backend?: string;
}

interface Dawn {
  create: (flags: string[]) => GPU;
  globals: object;
}
let dawn: Dawn | undefined;
const instances = new Map<string, GPU>();

async function loadDawn(): Promise<Dawn> {
  if (dawn) return dawn;
  try {
    const mod = (await import('webgpu')) as unknown as Dawn;
    Object.assign(globalThis, mod.globals);
    dawn = mod;
    return mod;
  } catch (e) {
    throw new NoGpuAdapterError(`could not load Dawn (npm package 'webgpu'): ${(e as Error).message}. Use ${CPU_PATH}.`, { cause: e });
  }
}

/** Dawn toggles for the options: real (unquantized) timestamps, adapter and backend choice. */
export function dawnFlags(opts: NodeGpuOptions): string[] {
  const flags = ['disable-dawn-features=timestamp_quantization'];
  const adapter = opts.adapter ?? process.env.IMGPU_ADAPTER;
  const backend = opts.backend ?? process.env.IMGPU_BACKEND;
  if (adapter) flags.push(`adapter=${adapter}`);
  if (backend) flags.push(`backend=${backend}`);
  return flags;
}

/**
 * Kernel variants from the environment, for the benchmarks and the roofline that set them per process
 * (IMGPU_CLAHE_TILED, IMGPU_MORPH_SCHEDULE): read here, at the edge, never inside an operation.
 */
function variantsFromEnv(): KernelVariants {
  const v: KernelVariants = {};
  if (process.env.IMGPU_CLAHE_TILED) v.claheTiled = process.env.IMGPU_CLAHE_TILED;
  if (process.env.IMGPU_MORPH_SCHEDULE) v.morphSchedule = process.env.IMGPU_MORPH_SCHEDULE;
  return v;
}

/**
 * A GPU context in Node through Dawn. The OpenGL ES backend (llvmpipe without Vulkan) needs the
 * 'compatibility' feature level and a surfaceless EGL platform; both are set here when it is chosen.
 */
export async function createNodeGpuContext(opts: NodeGpuOptions = {}): Promise<GpuContext> {
  assertNodeVersion();
  const { create } = await loadDawn();
  const flags = dawnFlags(opts);
  const gles = flags.some((f) => f === 'backend=opengles' || f === 'backend=opengl');
  if (gles) process.env.EGL_PLATFORM ??= 'surfaceless';
  let gpu: GPU;
  try {
    gpu = dawnInstance(create, flags);
  } catch (e) {
    throw new NoGpuAdapterError(`Dawn could not start: ${(e as Error).message}`, { cause: e });
  }
  return GpuContext.create(quietAdapters(gpu), { featureLevel: gles ? 'compatibility' : 'core', hostCopy: nativeHostCopy(), ...opts, variants: { ...variantsFromEnv(), ...opts.variants } });
}

interface StderrCapture {
  stderrCaptureBegin(): boolean;
  stderrCaptureEnd(): string;
}
let stderrCapture: StderrCapture | null | undefined;

/**
 * Dawn's notice each time it reads a Vulkan adapter's limits (NormalizeLimits, inside requestAdapter, before any
 * limit can be asked for): it caps the dynamic-offset bindings, which imgpu never uses, and was printed on every
 * GPU command.
 */
const DAWN_LIMIT_NOTICE = /^Warning: maxDynamic(?:Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.$/;

/**
 * Runs `call` (a synchronous Dawn call) with native stderr captured (native/stderr.c) and writes back what Dawn
 * printed but its limit notices. Without the native module the notices stay.
 */
function withoutDawnNotices<T>(call: () => T): T {
  stderrCapture ??= loadNativeModule<StderrCapture>('imgpu-native.node', 'IMGPU_NO_NATIVE_STDERR') ?? null;
  if (!stderrCapture?.stderrCaptureBegin()) return call();
  try {
    return call();
  } finally {
    const kept = stderrCapture.stderrCaptureEnd().split('\n').filter((l) => !DAWN_LIMIT_NOTICE.test(l)).join('\n');
    if (kept.trim()) process.stderr.write(kept.endsWith('\n') ? kept : `${kept}\n`);
  }
}

/** `gpu` whose requestAdapter keeps Dawn's limit notices off stderr (the rest of GPU is not used by GpuContext). */
function quietAdapters(gpu: GPU): GPU {
  return {
    requestAdapter: (options?: GPURequestAdapterOptions) => withoutDawnNotices(() => gpu.requestAdapter(options)),
    getPreferredCanvasFormat: () => gpu.getPreferredCanvasFormat(),
    get wgslLanguageFeatures() {
      return gpu.wgslLanguageFeatures;
    },
  } as GPU;
}

/** One Dawn instance per set of flags for the life of the process: it must outlive every device made from it. */
function dawnInstance(create: Dawn['create'], flags: string[]): GPU {
  const key = flags.join(' ');
  const gpu = instances.get(key) ?? create(flags);
  instances.set(key, gpu);
  return gpu;
}

/** One adapter Dawn offers, as `imgpu adapters` lists it. */
export interface AdapterListing {
  backend: string;
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  software: boolean;
  fallback: boolean;
}

/**
 * The adapters Dawn offers on each backend (WebGPU has no enumeration: each backend is asked for its
 * high-performance, low-power and fallback adapter, and duplicates are merged).
 */
export async function listNodeAdapters(backends: readonly string[] = ['vulkan', 'opengles']): Promise<AdapterListing[]> {
  assertNodeVersion();
  const { create } = await loadDawn();
  const out: AdapterListing[] = [];
  for (const backend of backends) {
    if (backend === 'opengles') process.env.EGL_PLATFORM ??= 'surfaceless';
    const flags = dawnFlags({ backend });
    let gpu: GPU;
    try {
      gpu = dawnInstance(create, flags);
    } catch {
      continue; // this backend cannot start here
    }
    const asks: GPURequestAdapterOptions[] = [
      { powerPreference: 'high-performance' }, { powerPreference: 'low-power' }, { forceFallbackAdapter: true },
      ...(backend === 'opengles' ? [{ featureLevel: 'compatibility' } as GPURequestAdapterOptions] : []),
    ];
    for (const ask of asks) {
      const a = await withoutDawnNotices(() => gpu.requestAdapter(ask)).catch(() => null);
      if (!a) continue;
      const i = a.info;
      const entry: AdapterListing = {
        backend, vendor: i.vendor ?? '', architecture: i.architecture ?? '', device: i.device ?? '', description: i.description ?? '',
        software: SOFTWARE_ADAPTER.test(`${i.vendor} ${i.architecture} ${i.device} ${i.description}`),
        fallback: (i as { isFallbackAdapter?: boolean }).isFallbackAdapter === true,
      };
      if (!out.some((o) => o.backend === backend && o.description === entry.description && o.vendor === entry.vendor && o.device === entry.device)) out.push(entry);
    }
  }
  return out;
}

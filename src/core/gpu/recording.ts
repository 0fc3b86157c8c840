import { bindGroupEntries, type Bindings } from './bindings.js';
import type { GpuContext } from './context.js';
import type { UniformStruct, UniformType, UniformValues } from './uniforms.js';
import type { KernelTimer } from './timer.js';
import { acquireStorage } from './transfer.js';

export type { Binding, Bindings } from './bindings.js';

/**
 * One command encoder's worth of GPU work: the encoder, its timer, and the scratch and parameter buffers the
 * recorded passes use. Scratch buffers go back to the pool only after the work is submitted, so no concurrent
 * operation can take one while it is still needed; parameters get their own buffer per recording, so two
 * operations sharing a plan never see each other's parameters.
 */
export class Recording {
  readonly encoder: GPUCommandEncoder;
  private readonly scratch: GPUBuffer[] = [];
  /** What runs once the work is submitted (afterSubmit). */
  private readonly submitted: (() => void)[] = [];
  private open?: GPUComputePassEncoder;
  /** Pieces the largest split operation of this recording ran in (ranges or slabs; 1 = whole), for Timings.slabs. */
  pieces = 1;

  /**
   * @param fuse record consecutive dispatches into one compute pass (one timestamp pair named `label`):
   *   each pass costs a few microseconds of barriers and timestamps on real GPUs, which dominates small
   *   kernels. Off, every dispatch is its own pass and gets its own time (profiling).
   */
  constructor(readonly ctx: GpuContext, readonly timer: KernelTimer, private readonly label: string, private readonly fuse = false) {
    this.encoder = ctx.device.createCommandEncoder({ label });
  }

  /** Zeroes a buffer (outside any compute pass). */
  clear(buffer: GPUBuffer, size?: number): void {
    this.closePass();
    this.encoder.clearBuffer(buffer, 0, size);
  }

  /** Copies `bytes` (a multiple of 4) from one buffer to another, between passes. */
  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.closePass();
    this.encoder.copyBufferToBuffer(src, 0, dst, 0, bytes);
  }

  /** Copies `bytes` (a multiple of 4) between buffers at offsets (multiples of 4), between passes. */
  copyRange(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    this.closePass();
    this.encoder.copyBufferToBuffer(src, srcOffset, dst, dstOffset, bytes);
  }

  private closePass(): void {
    this.open?.end();
    this.open = undefined;
  }

  /** A pooled storage buffer that lives until this recording is submitted. */
  storage(bytes: number, label: string): GPUBuffer {
    const b = acquireStorage(this.ctx, bytes, label);
    this.scratch.push(b);
    return b;
  }

  /** Gives `buffer` (pooled) back only once this recording is submitted: the recorded work still uses it. */
  retain(buffer: GPUBuffer): void {
    this.scratch.push(buffer);
  }

  /** Notes that an operation ran in `n` pieces (binding ranges or slabs), reported in the timings. */
  split(n: number): void {
    this.pieces = Math.max(this.pieces, n);
  }

  /** A pooled storage buffer holding a copy of `data` (small per-call tables), alive until submission. */
  storageFrom(data: Uint32Array | Float32Array, label: string): GPUBuffer {
    const b = this.storage(data.byteLength, label);
    this.ctx.device.queue.writeBuffer(b, 0, data as Uint32Array<ArrayBuffer>);
    return b;
  }

  /** A uniform buffer holding `values` packed as `struct` (its WGSL text is the kernel's declaration of them). */
  uniform<F extends Record<string, UniformType>>(struct: UniformStruct<F>, values: UniformValues<F>, label: string = struct.name): GPUBuffer {
    const packed = struct.pack(values);
    const words = Math.max(4, packed.length);
    const usage = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    const b = this.ctx.buffers.acquire(words * 4, usage, (s) => this.ctx.createBuffer(s, usage, label));
    const data = new Uint32Array(words);
    data.set(packed);
    this.ctx.device.queue.writeBuffer(b, 0, data);
    this.scratch.push(b);
    return b;
  }

  /**
   * Records one dispatch (its own timed pass unless fused), binding `buffers` to @group(0) by the WGSL names of
   * the pipeline's variables (`{ src, dst, P }`), or a bind group made by bindGroup().
   */
  dispatch(name: string, pipeline: GPUComputePipeline, buffers: Bindings | GPUBindGroup, x: number, y = 1, z = 1): void {
    this.pass(name, pipeline, buffers).dispatchWorkgroups(x, y, z);
  }

  /**
   * Records a dispatch whose workgroup counts the GPU itself wrote (three u32 at `offset` of `args`, a buffer
   * with INDIRECT usage): work sized by an earlier kernel's result, with no round trip to the host.
   */
  dispatchIndirect(name: string, pipeline: GPUComputePipeline, buffers: Bindings | GPUBindGroup, args: GPUBuffer, offset: number): void {
    this.pass(name, pipeline, buffers).dispatchWorkgroupsIndirect(args, offset);
  }

  /** The bind group of `buffers` for @group(0) of `pipeline` (callers that dispatch the same one each frame keep it). */
  bindGroup(name: string, pipeline: GPUComputePipeline, buffers: Bindings): GPUBindGroup {
    return createBindGroup(this.ctx, name, pipeline, buffers);
  }

  private pass(name: string, pipeline: GPUComputePipeline, buffers: Bindings | GPUBindGroup): GPUComputePassEncoder {
    const group = isBindGroup(buffers) ? buffers : this.bindGroup(name, pipeline, buffers);
    if (!this.fuse) this.closePass();
    const pass = (this.open ??= this.encoder.beginComputePass(this.timer.pass(this.fuse ? `${this.label} (fused)` : name)));
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    return pass;
  }

  /**
   * Runs `fn` once the work is submitted: what must wait for it — re-mapping the upload memory a recorded copy reads,
   * mapping the readback memory one writes (transfer.ts: copies recorded here rather than submitted apart, one
   * submission fewer each).
   */
  afterSubmit(fn: () => void): void {
    this.submitted.push(fn);
  }

  /** Submits the recorded work, recycles its scratch buffers, then runs what waited for the submission. */
  submit(): void {
    this.closePass();
    this.timer.resolve(this.encoder);
    this.ctx.device.queue.submit([this.encoder.finish()]);
    for (const b of this.scratch.splice(0)) this.ctx.buffers.release(b);
    for (const fn of this.submitted.splice(0)) fn();
  }
}

/** The bind group of `buffers` for @group(0) of `pipeline`, outside any recording (plans that keep theirs). */
export function createBindGroup(ctx: GpuContext, name: string, pipeline: GPUComputePipeline, buffers: Bindings): GPUBindGroup {
  return ctx.device.createBindGroup({
    label: name,
    layout: pipeline.getBindGroupLayout(0),
    entries: bindGroupEntries(pipeline, name, buffers),
  });
}

/** A made bind group rather than the buffers to make one of (a name → buffer record, whose values are objects). */
function isBindGroup(x: Bindings | GPUBindGroup): x is GPUBindGroup {
  return typeof (x as GPUBindGroup).label === 'string';
}

/** The bits of an f32, for uniform words. */
export function f32ToBits(x: number): number {
  return new Uint32Array(new Float32Array([x]).buffer)[0];
}

import { bindGroupEntries, type Bindings } from './bindings.js';
import type { GpuContext } from './context.js';
import type { UniformStruct, UniformType, UniformValues } from './uniforms.js';
import type { KernelTimer } from './timer.js';
import { acquireStorage } from './transfer.js';

export type { Bindings } from './bindings.js';

/** Bytes of one uniform block of a recording (Recording.uniform): 64 slots at the usual 256-byte offset alignment. */
const UNIFORM_BLOCK = 16 << 10;

/**
 * One command encoder's worth of GPU work: the encoder, its timer, and the scratch and parameter buffers the
 * recorded passes use. Scratch buffers go back to the pool only after the work is submitted, so no concurrent
 * operation can take one while it is still needed; parameters get their own buffer per recording, so two
 * operations sharing a plan never see each other's parameters.
 */
export class Recording {
  private encoder: GPUCommandEncoder;
  /** Whether the encoder holds any command yet, and whether it was submitted (flush). */
  private recorded = false;
  private ended = false;
  private readonly scratch: GPUBuffer[] = [];
  /** What runs once the work is submitted (afterSubmit). */
  private readonly submitted: (() => void)[] = [];
  private open?: GPUComputePassEncoder;
  /** The uniform block being filled (uniform()): its buffer, its words on the host, the bytes used. */
  private block?: { buffer: GPUBuffer; words: Uint32Array<ArrayBuffer>; used: number };
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
    this.recorded = true;
    this.encoder.clearBuffer(buffer, 0, size);
  }

  /** Copies `bytes` (a multiple of 4) from one buffer to another, between passes. */
  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.closePass();
    this.recorded = true;
    this.encoder.copyBufferToBuffer(src, 0, dst, 0, bytes);
  }

  /** Copies `bytes` (a multiple of 4) between buffers at offsets (multiples of 4), between passes. */
  copyRange(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    this.closePass();
    this.recorded = true;
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

  /**
   * A uniform binding holding `values` packed as `struct` (its WGSL text is the kernel's declaration of them): a
   * slot of the recording's uniform block, a pooled buffer written once, at submission, for all its slots. A buffer
   * and a writeBuffer per uniform were about 12 µs of the JavaScript thread each, ~26 a photo in a JPEG batch.
   */
  uniform<F extends Record<string, UniformType>>(struct: UniformStruct<F>, values: UniformValues<F>): GPUBufferBinding {
    const packed = struct.pack(values);
    const size = Math.max(16, packed.length * 4);
    const align = this.ctx.limits.minUniformBufferOffsetAlignment;
    let block = this.block;
    if (!block || block.used + size > UNIFORM_BLOCK) {
      this.flushUniforms();
      const usage = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
      const bytes = Math.max(UNIFORM_BLOCK, size);
      const buffer = this.ctx.buffers.acquire(bytes, usage, (s) => this.ctx.createBuffer(s, usage, 'uniforms'));
      this.scratch.push(buffer);
      block = this.block = { buffer, words: new Uint32Array(bytes / 4), used: 0 };
    }
    const offset = block.used;
    block.words.set(packed, offset / 4);
    block.used = Math.ceil((offset + size) / align) * align;
    return { buffer: block.buffer, offset, size };
  }

  /** Writes the current uniform block's slots to its buffer (queued ahead of the submission that reads them). */
  private flushUniforms(): void {
    const block = this.block;
    if (!block) return;
    this.block = undefined;
    this.ctx.device.queue.writeBuffer(block.buffer, 0, block.words, 0, Math.min(block.words.length, Math.ceil(block.used / 4)));
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
    this.recorded = true;
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
    this.ended = true;
    this.ctx.device.queue.submit([this.finish()]);
    for (const b of this.scratch.splice(0)) this.ctx.buffers.release(b);
    for (const fn of this.submitted.splice(0)) fn();
  }

  /**
   * Ends the encoder and gives its command buffer, uniforms written and timestamps resolved, without submitting it:
   * for a caller timing the submission apart (bench/detect-video.ts), whose scratch then stays lent. submit() does
   * this and the rest.
   */
  finish(): GPUCommandBuffer {
    this.closePass();
    this.flushUniforms();
    this.timer.resolve(this.encoder);
    return this.encoder.finish();
  }

  /**
   * Drops what is recorded, unsubmitted: nothing of it will run, so its scratch goes back to the pool now, and what
   * waited for the submission is dropped (a readback recorded here never resolves). For work that failed midway
   * whose partial effects must not happen — an operation writing over its input (RunOptions.inPlace) whose input a
   * fallback then reads.
   */
  discard(): void {
    this.closePass();
    this.ended = true;
    this.block = undefined;
    for (const b of this.scratch.splice(0)) this.ctx.buffers.release(b);
    this.submitted.length = 0;
  }

  /**
   * Submits what is recorded so far (submit()) and goes on recording into a new encoder: for work that must run
   * before something submitted apart (an operation that records into a recording of its own), in a recording its
   * caller shares between operations (GpuRunOptions.recording). Nothing recorded since: nothing is submitted, but
   * what waited for a submission runs now (it has nothing left to wait for: a batch's input given back to the pool
   * on an error path whose operation recorded nothing would otherwise never be). Submitted for good (or
   * discarded): nothing happens. Safe in a `finally`.
   */
  flush(): void {
    if (this.ended) return;
    if (!this.recorded) {
      for (const fn of this.submitted.splice(0)) fn();
      return;
    }
    this.submit();
    this.encoder = this.ctx.device.createCommandEncoder({ label: this.label });
    this.recorded = this.ended = false;
  }
}

/** The bind group of `buffers` for @group(0) of `pipeline`, outside any recording (plans that keep theirs). */
export function createBindGroup(ctx: GpuContext, name: string, pipeline: GPUComputePipeline, buffers: Bindings): GPUBindGroup {
  return ctx.device.createBindGroup({
    label: name,
    layout: groupLayout(pipeline),
    entries: bindGroupEntries(pipeline, name, buffers),
  });
}

/**
 * Group 0's layout of a pipeline, asked of Dawn once: each getBindGroupLayout() call makes a new layout object
 * (a native call and a JavaScript wrapper) for every bind group otherwise.
 */
const layouts = new WeakMap<GPUComputePipeline, GPUBindGroupLayout>();
function groupLayout(pipeline: GPUComputePipeline): GPUBindGroupLayout {
  let layout = layouts.get(pipeline);
  if (!layout) layouts.set(pipeline, (layout = pipeline.getBindGroupLayout(0)));
  return layout;
}

/** A made bind group rather than the buffers to make one of (a name → buffer record, whose values are objects). */
function isBindGroup(x: Bindings | GPUBindGroup): x is GPUBindGroup {
  return typeof (x as GPUBindGroup).label === 'string';
}

/** The bits of an f32, for uniform words. */
export function f32ToBits(x: number): number {
  return new Uint32Array(new Float32Array([x]).buffer)[0];
}

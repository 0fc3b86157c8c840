import type { GpuContext } from '../../../core/gpu/context.js';
import { grid1d } from '../../../core/gpu/dispatch.js';
import { createBindGroup } from '../../../core/gpu/recording.js';
import type { HistogramBackend } from './stage.js';

import { CODES_WG, CodeParams, codesWgsl, HistParams, histogramsWgsl } from './train.wgsl.js';

/**
 * The GPU side of a stage: the samples' integral images and the feature pool uploaded once, every feature's codes
 * computed into a resident buffer (one dispatch), then per weak learner one dispatch of the per-feature histograms
 * from the quantised weights and their readback. The host does the rest (stage.ts), exactly as on the CPU.
 */
export class GpuStageSamples implements HistogramBackend {
  private constructor(
    private readonly ctx: GpuContext,
    private readonly histPipeline: GPUComputePipeline,
    private readonly codes: GPUBuffer,
    private readonly weights: GPUBuffer,
    private readonly hist: GPUBuffer,
    private readonly readback: GPUBuffer,
    private readonly params: GPUBuffer,
    /** Bit 31 for each negative sample, or'ed into its weight. */
    private readonly negative: Uint32Array,
    private readonly features: number,
  ) {}

  /** Uploads the samples (integral images, (W+1)·(H+1) words each) and the features, and computes all codes. */
  static async create(ctx: GpuContext, integrals: Int32Array, n: number, W: number, features: Int32Array, positive: Uint8Array): Promise<GpuStageSamples> {
    return ctx.scoped('train: sample codes', () => GpuStageSamples.make(ctx, integrals, n, W, features, positive));
  }

  private static async make(ctx: GpuContext, integrals: Int32Array, n: number, W: number, features: Int32Array, positive: Uint8Array): Promise<GpuStageSamples> {
    const [codesPipeline, histPipeline] = await Promise.all([ctx.pipeline('train.codes', codesWgsl, 'main'), ctx.pipeline('train.histograms', histogramsWgsl, 'main')]);
    const F = features.length / 4, words = Math.ceil(n / 4);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const UNIFORM = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
    const upload = (data: Int32Array | Uint32Array, label: string, usage = storage) => {
      const b = ctx.createBuffer(Math.max(16, data.byteLength), usage, label);
      ctx.device.queue.writeBuffer(b, 0, data.buffer, data.byteOffset, data.byteLength);
      return b;
    };
    const ii = upload(integrals, 'train integrals'), feats = upload(features, 'train features');
    const codes = ctx.createBuffer(4 * words * F, GPUBufferUsage.STORAGE, 'train codes');
    const codeParams = upload(CodeParams.pack({ n, words, features: F, stride: W + 1, size: integrals.length / Math.max(n, 1) }), 'train code params', UNIFORM);
    const enc = ctx.device.createCommandEncoder({ label: 'train codes' });
    const pass = enc.beginComputePass();
    pass.setPipeline(codesPipeline);
    pass.setBindGroup(0, createBindGroup(ctx, 'train.codes', codesPipeline, { P: codeParams, ii, feats, codes }));
    const [x, y] = grid1d(ctx, Math.ceil((words * F) / CODES_WG));
    pass.dispatchWorkgroups(x, y);
    pass.end();
    ctx.device.queue.submit([enc.finish()]);
    await ctx.device.queue.onSubmittedWorkDone();
    for (const b of [ii, feats, codeParams]) b.destroy();
    const hist = ctx.createBuffer(F * 512 * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, 'train histograms');
    const readback = ctx.createBuffer(F * 512 * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, 'train histograms readback');
    const weights = ctx.createBuffer(Math.max(16, 4 * n), storage, 'train weights');
    const params = upload(HistParams.pack({ n, words, features: F }), 'train histogram params', UNIFORM);
    return new GpuStageSamples(ctx, histPipeline, codes, weights, hist, readback, params, Uint32Array.from(positive, (p) => (p ? 0 : 0x80000000)), F);
  }

  /** The per-feature histograms of the quantised weights `q` (F·512 words: positives' bins, then negatives'). */
  histograms(q: Uint32Array): Promise<Uint32Array> {
    return this.ctx.scoped('train: histograms', () => this.count(q));
  }

  private async count(q: Uint32Array): Promise<Uint32Array> {
    const flagged = q.map((v, i) => (v | this.negative[i]) >>> 0);
    this.ctx.device.queue.writeBuffer(this.weights, 0, flagged.buffer, flagged.byteOffset, flagged.byteLength);
    const enc = this.ctx.device.createCommandEncoder({ label: 'train histograms' });
    const pass = enc.beginComputePass();
    pass.setPipeline(this.histPipeline);
    pass.setBindGroup(0, createBindGroup(this.ctx, 'train.histograms', this.histPipeline, { P: this.params, codes: this.codes, weights: this.weights, hist: this.hist }));
    const [x, y] = grid1d(this.ctx, this.features);
    pass.dispatchWorkgroups(x, y);
    pass.end();
    enc.copyBufferToBuffer(this.hist, 0, this.readback, 0, this.features * 512 * 4);
    this.ctx.device.queue.submit([enc.finish()]);
    await this.readback.mapAsync(GPUMapMode.READ);
    const out = new Uint32Array(this.readback.getMappedRange().slice(0));
    this.readback.unmap();
    return out;
  }

  destroy(): void {
    for (const b of [this.codes, this.weights, this.hist, this.readback, this.params]) b.destroy();
  }
}

// imgpu public API (platform-neutral: nothing here imports Node-only modules; see src/node/ and src/io/).
// The declarations name WebGPU's types (GPUDevice, GPUBuffer, …): this directive stays in the emitted index.d.ts, so
// a user's compile loads them from the package's dependency @webgpu/types without configuring anything.
/// <reference types="@webgpu/types" preserve="true" />
export * from './core/errors.js';
export * from './core/image.js';
export * from './core/timings.js';
export type { ParamSpec } from './core/params.js';
export { GpuContext, type AdapterDescription, type GpuContextOptions } from './core/gpu/context.js';
export { GpuImage, type StagedImage } from './core/gpu/gpu-image.js';
export { InlinePool, type CpuPool } from './core/cpu/pool.js';
export { compareImages, compareWithin, type Comparison } from './core/compare.js';
export * from './ops/index.js';
export { defineOp, type OpOptions, type Operation, type ImageOperation, type RunOptions } from './core/op.js';
export type { OptionsOf, ResolvedOf } from './core/params.js';
export { equalizeLut } from './ops/equalize/lut.js';
export { applyLut, type ApplyLutOptions } from './ops/lut/index.js';
export { otsuThreshold, isodataThreshold } from './ops/threshold/global.js';
export type { Size } from './core/params.js';
export { runPipeline, parsePipeline, type PipelineOptions, type PipelineStep } from './ops/pipeline.js';
export { parseClassifierXml, waldBoostXml } from './ops/detect/classifier-xml.js';
export { trainDetector, trainParams, TRAIN_TYPES, type StageProgress, type StopReason, type TrainedStage, type TrainOptions, type TrainResult, type TrainType } from './ops/detect/train/index.js';
export { decodeImage, encodeImage, FORMATS, formatNamed, type DecodeImageOptions, type DecodeOptions, type EncodeOptions, type ImageFormat } from './io/formats/index.js';
// OME-Zarr over HTTP (fetch), read region by region: zarrita is imported with the first URL opened, not by 'imgpu'.
export { openZarrUrl, type OpenZarrUrlOptions, type RemoteOmeZarr, type RemoteZarrLevel, type RemoteZarrReadOptions, type ZarrRegion } from './io/zarr-http.js';

// The package's 'imgpu/batch' entry: the batch engine from code (docs/batch.md) — one operation or a pipeline over
// folders of images or images as bytes, into a folder or a sink, with per-image events and a summary. Node only.

export { batch, type BatchEvent, type BatchInput, type BatchOptions, type BatchResult, type BatchRun, type BatchSink, type BatchSummary, type BatchTuning, type ImagePath, type SinkMeta, type StepsSpec } from './engine/batch/api.js';
export { ImgpuError, InvalidArgumentError, FileAccessError, UnsupportedFormatError } from './core/errors.js';

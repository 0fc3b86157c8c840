// Node entry: the public API plus Dawn device acquisition, the worker-thread pool and file I/O.
export * from './index.js';
export { createNodeGpuContext, type NodeGpuOptions } from './node/gpu.js';
export { NodeWorkerPool } from './node/worker-pool.js';
export { decodeNpy, encodeNpy, type ReadOptions, type WriteOptions } from './io/index.js';
// OME-Zarr and chunked execution within a memory budget (docs/volumes.md).
export {
  defaultMemory, isZarrPath, openOmeZarr, readOmeZarr, runChunked, writeOmeZarr,
  type ChunkedOptions, type ChunkedReport, type OmeVersion, type SlabRun, type ZarrCompressor, type ZarrWriteOptions,
} from './io/index.js';
// io's readImage/writeImage, which also read into and write from a resident GpuImage (the GPU JPEG codec is node's).
export { readImage, writeImage, type ReadToGpuOptions, type WriteFromGpuOptions } from './node/gpu-io.js';
export { readClassifier } from './io/classifier.js';
export { parseVec, readBackgrounds, readPositives, train, type TrainFilesOptions, type TrainFilesResult } from './io/train.js';
export {
  decodeJpegToGpu, encodeJpegFromGpu, readJpegToGpu,
  type CodecThreadOptions, type JpegOnGpu, type JpegPath, type JpegPathOption, type JpegToGpuOptions,
} from './node/jpeg-gpu.js';
export { encodeJpegGpu, type JpegEncodePhases, type JpegEntropyPath, type JpegGpuEncodeOptions, type JpegSubsampling } from './node/jpeg-encode-gpu.js';

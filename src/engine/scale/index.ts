// imgpu/scale: batches across many workers on a Redis queue (BullMQ), from code. bullmq and ioredis are optional
// peer dependencies, loaded by the first call (modules.ts): importing this module loads neither.

export { DEFAULT_QUEUE, type QueueTarget, type RedisTls } from './connection.js';
export { DEFAULT_SHARD, type ChunkJob, type ScaleJobData, type ScaleJobProgress, type ScaleJobResult } from './jobs.js';
export { INSTALL_QUEUE } from './modules.js';
export { DEFAULT_VOLUME_SHARD } from './volume-jobs.js';
export { submit, type SubmitOptions, type Submitted } from './submit.js';
export { createWorker, DEFAULT_STALL_MS, type ScaleWorker, type WorkerEvent, type WorkerOptions } from './worker.js';
export { retry, status, watch, type BatchStatus, type BatchTarget, type Failure, type WatchReport } from './status.js';

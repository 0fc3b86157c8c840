// The operation families: one line each. Every operation a family declares with defineOp is found here by the
// registry (ops/registry.ts) — and with it the CLI command, the pipeline stage, the batch job and the playground
// form — and is exported from `imgpu` and `imgpu/browser` (src/index.ts re-exports this module).
export * from './clahe/index.js';
export * from './convolve/index.js';
export * from './equalize/index.js';
export * from './gamma/index.js';
export * from './histogram/index.js';
export * from './morph/index.js';
export * from './threshold/index.js';
export * from './detect/index.js';

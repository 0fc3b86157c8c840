// Counts a process's WebGPU calls (bind groups, buffers, submissions, mapAsync, writeBuffer, dispatches) and prints
// them on stderr at exit, as one line `GPUCALLS {...}`: what an operation costs the main thread per image, compared
// across operations. A preload, from the repository root:
//   node --import ./bench/gpu-calls.mjs bin/imgpu.js equalize in/ out/ --device gpu --jpeg gpu --quiet
import { globals } from 'webgpu';

const counts = {};
function wrap(proto, cls, names) {
  for (const n of names) {
    const f = proto[n];
    if (typeof f !== 'function') continue;
    proto[n] = function counted(...a) {
      counts[`${cls}.${n}`] = (counts[`${cls}.${n}`] ?? 0) + 1;
      return f.apply(this, a);
    };
  }
}
wrap(globals.GPUDevice.prototype, 'device', ['createBindGroup', 'createBuffer', 'createCommandEncoder', 'createComputePipelineAsync', 'createComputePipeline', 'createShaderModule', 'createQuerySet']);
wrap(globals.GPUQueue.prototype, 'queue', ['submit', 'writeBuffer', 'onSubmittedWorkDone']);
wrap(globals.GPUBuffer.prototype, 'buffer', ['mapAsync', 'destroy']);
wrap(globals.GPUComputePassEncoder.prototype, 'pass', ['dispatchWorkgroups', 'setBindGroup']);
wrap(globals.GPUCommandEncoder.prototype, 'enc', ['beginComputePass', 'copyBufferToBuffer', 'clearBuffer']);
// Only the process that created a device: the CLI's codec workers import nothing of webgpu's.
process.on('exit', () => Object.keys(counts).length && process.stderr.write(`GPUCALLS ${JSON.stringify(counts)}\n`));

// The pages' WebGPU device and the status line that describes it (or says why there is none).
import type { GpuContext } from '../src/browser.js';
import { createBrowserGpuContext } from '../src/browser.js';

/**
 * The page's GPU context, or none where WebGPU is missing, and the line saying which. `?maxStorageBufferBindingSize=N`
 * in the page's address runs it as on a GPU that binds less (tests: work split in slabs).
 */
export async function pageGpu(): Promise<{ gpu?: GpuContext; line: string; warn: boolean }> {
  try {
    const binding = Number(new URLSearchParams(location.search).get('maxStorageBufferBindingSize')) || undefined;
    const gpu = await createBrowserGpuContext(binding ? { limits: { maxStorageBufferBindingSize: binding } } : {});
    const line = `WebGPU: ${gpu.adapter.description || gpu.adapter.vendor || 'adapter'}${gpu.adapter.software ? ' (software)' : ''}; CPU path in a Web Worker${crossOriginIsolated ? '' : ' (not cross-origin isolated: no shared memory)'}`;
    return { gpu, line, warn: false };
  } catch (e) {
    return { line: `WebGPU is not available in this browser (${(e as Error).message.split('.')[0]}): running on the CPU only`, warn: true };
  }
}

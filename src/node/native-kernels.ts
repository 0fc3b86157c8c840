import type { PointKernels } from '../core/cpu/native.js';
import { loadNativeModule } from '../io/native-module.js';

/**
 * The native point kernels (native/point.c) for a NodeWorkerPool, or undefined without the built module or with
 * IMGPU_NO_NATIVE_KERNELS=1 (the JavaScript loops run on the workers then).
 */
export function loadPointKernels(): PointKernels | undefined {
  return loadNativeModule<PointKernels>('imgpu-native.node', 'IMGPU_NO_NATIVE_KERNELS');
}

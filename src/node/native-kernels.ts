import { nativeKernels, type PointKernels } from '../core/cpu/native.js';
import { loadNativeModule } from './native.js';

/**
 * Loads the native point kernels (native/point.c) into this thread's kernel table, once; called by the CPU pool
 * on the main thread and by each of its workers. Without the built module (or with IMGPU_NO_NATIVE_KERNELS=1) the
 * JavaScript loops stay. Returns whether they are native.
 */
export function installNativeKernels(): boolean {
  nativeKernels.point ??= loadNativeModule<PointKernels>('imgpu-point.node', 'IMGPU_NO_NATIVE_KERNELS');
  return !!nativeKernels.point;
}

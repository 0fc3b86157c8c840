import { nativeKernels, type PointKernels } from '../core/cpu/native.js';
import { loadNativeModule } from '../io/native-module.js';

/**
 * Loads the native point kernels (native/point.c) into this thread's kernel table, once; called when a
 * NodeWorkerPool is made. Without the built module (or with IMGPU_NO_NATIVE_KERNELS=1) the
 * JavaScript loops stay. Returns whether they are native.
 */
export function installNativeKernels(): boolean {
  nativeKernels.point ??= loadNativeModule<PointKernels>('imgpu-native.node', 'IMGPU_NO_NATIVE_KERNELS');
  return !!nativeKernels.point;
}

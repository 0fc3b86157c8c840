import type { ImageOperation, Operation } from '../core/op.js';
import * as families from './index.js';

export { FILTER_TOLERANCE } from './convolve/index.js';

/** A function made by defineOp (it carries its declaration as `.op`). */
function isDeclared(x: unknown): x is { op: Operation } {
  return typeof x === 'function' && typeof (x as { op?: unknown }).op === 'object';
}

/**
 * Every operation: those the families of ops/index.ts declare with defineOp, found by their exports (a module
 * namespace lists its names sorted, so this is alphabetical). Nothing is registered by hand.
 */
const DECLARED: Operation[] = Object.values(families as Record<string, unknown>).flatMap((f) => (isDeclared(f) ? [f.op] : []));

/** Every operation by name: the CLI's commands. */
export const ALL_OPERATIONS: Readonly<Record<string, Operation>> = Object.fromEntries(DECLARED.map((op) => [op.name, op]));

/** The image → image operations by name (they write an image): pipeline stages, batch jobs, playground forms. */
export const OPERATIONS: Readonly<Record<string, ImageOperation>> = Object.fromEntries(DECLARED.filter((op) => op.writes).map((op) => [op.name, op as ImageOperation]));

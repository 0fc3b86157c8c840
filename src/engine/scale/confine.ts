import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.js';
import { fileParamPaths } from '../../io/params.js';
import { parsePipeline } from '../../ops/pipeline.js';
import { OPERATIONS } from '../../ops/registry.js';
import type { ScaleJobData } from './jobs.js';

// A worker's roots: the folders it may read and write. A job is anyone's who can write to the queue, so a worker
// given roots checks every path a job would touch — each image's input and output, the output folder, the files
// the pipeline names — with `..` and symbolic links resolved, and refuses the job before running any of it.

/** The roots as real paths (links resolved): each must be an existing folder; an InvalidArgumentError otherwise. */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map(async (r) => {
    const real = await realpath(resolve(r)).catch(() => {
      throw new InvalidArgumentError(`option \`roots\`: no such folder ${r}`);
    });
    if (!(await stat(real)).isDirectory()) throw new InvalidArgumentError(`option \`roots\`: ${r} is not a folder`);
    return real;
  }));
}

/**
 * Where `path` really is: its real path, or — for a file or folder not made yet (an output) — the real path of its
 * nearest existing ancestor with the rest of the path after it (a link among the ancestors is followed, so an
 * output folder that is a link out of the roots is seen outside them).
 */
export async function realLocation(path: string): Promise<string> {
  const rest: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    try {
      return join(await realpath(p), ...rest.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // ENOENT: not made yet; ENOTDIR: a file where a folder is named (the job's write fails later, inside).
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(p) === p) return resolve(path);
      rest.push(basename(p));
    }
  }
}

const inside = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** Every path a job would read or write: its images' (or volume's) inputs and outputs, its output folder, its pipeline's files. */
export function jobPaths(d: ScaleJobData): string[] {
  const named = parsePipeline(d.pipeline).flatMap((s) => fileParamPaths(OPERATIONS[s.op].params, s.params));
  const volume = d.chunks ? [d.chunks.input, d.chunks.output] : [];
  return [d.outDir, ...volume, ...d.images.flatMap((i) => [i.input, i.output]), ...named];
}

/**
 * The first path of the job outside the roots (real paths, as realRoots makes them), with where it really is;
 * undefined when every one is inside.
 */
export async function outsideRoots(d: ScaleJobData, roots: readonly string[]): Promise<{ path: string; real: string } | undefined> {
  for (const path of jobPaths(d)) {
    const real = await realLocation(path);
    if (!roots.some((r) => inside(real, r))) return { path, real };
  }
  return undefined;
}

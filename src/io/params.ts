import { readFile } from 'node:fs/promises';
import { FileAccessError } from '../core/errors.js';
import type { FileParam, ParamSpec } from '../core/params.js';
import { formatOf, readImage } from './index.js';

/**
 * Parameters whose value names a file (`mask:FILE`, `kernel:FILE`: a string parameter with a `file` declaration)
 * read and turned into what the operation takes, once, before any image is processed. Other values pass through.
 */
export async function loadFileParams(specs: readonly ParamSpec[], values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...values };
  for (const s of specs) {
    const named = namedFile(s, values[s.name]);
    if (!named) continue;
    const { path, file } = named;
    const v = values[s.name] as string;
    if (file.text?.includes(formatOf(path).toLowerCase())) {
      // A file that cannot be read is a file error (exit 3), as an unreadable image is.
      const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new FileAccessError(e.code === 'ENOENT' ? `no such ${file.what ?? 'file'}: ${path}` : `cannot read ${path}: ${e.message}`);
      });
      out[s.name] = file.load({ path, spec: v, text });
    } else {
      out[s.name] = file.load({ path, spec: v, image: await readImage(path) });
    }
  }
  return out;
}

/** The file a parameter's value names (`mask:FILE` → FILE) and its declaration, or undefined where it names none. */
function namedFile(s: ParamSpec, v: unknown): { path: string; file: FileParam<unknown> } | undefined {
  if (s.kind !== 'string' || !s.file || typeof v !== 'string' || !v.startsWith(s.file.prefix)) return undefined;
  return { path: v.slice(s.file.prefix.length), file: s.file };
}

/** The files the parameters name (what loadFileParams reads): a queue worker checks them against its roots first. */
export function fileParamPaths(specs: readonly ParamSpec[], values: Record<string, unknown>): string[] {
  return specs.map((s) => namedFile(s, values[s.name])?.path).filter((p) => p !== undefined);
}

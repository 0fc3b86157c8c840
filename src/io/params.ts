import { readFile } from 'node:fs/promises';
import { FileAccessError } from '../core/errors.js';
import type { ParamSpec } from '../core/params.js';
import { formatOf, readImage } from './index.js';

/**
 * Parameters whose value names a file (`mask:FILE`, `kernel:FILE`: a string parameter with a `file` declaration)
 * read and turned into what the operation takes, once, before any image is processed. Other values pass through.
 */
export async function loadFileParams(specs: readonly ParamSpec[], values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...values };
  for (const s of specs) {
    const v = values[s.name];
    if (s.kind !== 'string' || !s.file || typeof v !== 'string' || !v.startsWith(s.file.prefix)) continue;
    const path = v.slice(s.file.prefix.length);
    if (s.file.text?.includes(formatOf(path).toLowerCase())) {
      // A file that cannot be read is a file error (exit 3), as an unreadable image is.
      const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new FileAccessError(e.code === 'ENOENT' ? `no such ${s.file?.what ?? 'file'}: ${path}` : `cannot read ${path}: ${e.message}`);
      });
      out[s.name] = s.file.load({ path, spec: v, text });
    } else {
      out[s.name] = s.file.load({ path, spec: v, image: await readImage(path) });
    }
  }
  return out;
}

// File parameters (kernel:FILE, mask:FILE) in the page: a page cannot open a typed path, so the form offers a file
// picker beside such a parameter, and the page and its CPU worker both turn the chosen file into the operation's
// value with the declaration's own `load`, as io/params.ts does for the CLI.
import type { Image } from '../src/browser.js';
import type { ParamSpec } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';

/** A chosen file, read: an image (PNG, .npy) or, for the extensions the declaration reads as text, its text. */
export interface ChosenFile { path: string; spec: string; image?: Image; text?: string }

/** The parameters with each chosen file replaced by what its declaration's `load` makes of it. */
export function withChosenFiles(op: string, params: Record<string, unknown>, files: Record<string, ChosenFile>): Record<string, unknown> {
  const out = { ...params };
  for (const p of OPERATIONS[op].params as readonly ParamSpec[]) {
    if (p.kind === 'string' && p.file && files[p.name]) out[p.name] = p.file.load(files[p.name]);
  }
  return out;
}

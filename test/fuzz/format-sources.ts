import { readdirSync } from 'node:fs';
import { fixture } from '../helpers/fixtures.js';
import { fuzzFormat } from './format-differential.js';

/**
 * The real files the format fuzzer mutates (scripts/make_fuzz_format_fixtures.py: small crops written by OpenCV, PIL,
 * tifffile, nibabel, pydicom and NumPy), by format: `formats` picks some (e.g. ['.png']), all by default.
 */
export function formatSources(formats?: readonly string[]): string[] {
  const dir = fixture('fuzz');
  return readdirSync(dir).sort().map((f) => `${dir}/${f}`).filter((p) => !formats || formats.includes(fuzzFormat(p)));
}

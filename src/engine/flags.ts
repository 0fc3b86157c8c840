// Library errors name API options (core/errors.ts: CPU_PATH, optionRef) and a few advice phrases of their own;
// the CLI prints them in its own words, its flags. One table, used wherever the CLI prints an error or warning.
import { CPU_PATH } from '../core/errors.js';
import { RAW_LAYOUT } from '../io/index.js';
import { ATOMIC_HISTOGRAM } from '../ops/histogram/gpu.js';

/** Library phrases and the CLI's words for them. */
const PHRASES: readonly (readonly [string, string])[] = [
  [CPU_PATH, '--device cpu'],
  [ATOMIC_HISTOGRAM, '--hist atomic'],
  [RAW_LAYOUT, '--shape WxH[xD] --dtype uint8|uint16|float32'],
];

/** An option's flag: its name in kebab case (minSize → --min-size), as the parameter declarations name flags. */
const flagOf = (option: string): string => option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A library message as the CLI says it: option `minSize` → --min-size, option `impl: 'tiled'` → --impl tiled. */
export function cliWording(message: string): string {
  let m = message;
  for (const [phrase, words] of PHRASES) m = m.split(phrase).join(words);
  return m.replace(/option `(\w+)(?:: '?([^`']*)'?)?`/g, (_, name: string, value?: string) => `--${flagOf(name)}${value ? ` ${value}` : ''}`);
}

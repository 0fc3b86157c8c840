import { InvalidArgumentError } from '../core/errors.js';
import { flagName, parseParamValue, type ParamSpec } from '../core/params.js';

/** Where a command runs: every command that computes takes them (context.ts acquire reads them). */
export const DEVICE_FLAGS = ['device', 'adapter', 'backend', 'threads'] as const;
/** How a command runs and reports: every command that computes takes them. */
export const RUN_FLAGS = ['repeat', 'json', 'help', 'quiet'] as const;
/** The flags of RUN_FLAGS that take no value. */
export const RUN_BOOLEANS = ['json', 'help', 'quiet'] as const;

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string>;
}

/** `--name value`, `--name=value` and bare boolean `--name`; `booleans` lists flags that take no value. */
export function parseArgs(argv: string[], booleans: ReadonlySet<string>): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--') || a === '--') {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (eq >= 0) flags.set(name, a.slice(eq + 1));
    else if (booleans.has(name)) flags.set(name, 'true');
    else if (i + 1 < argv.length) flags.set(name, argv[++i]);
    else throw new InvalidArgumentError(`--${name} needs a value`);
  }
  return { positional, flags };
}

/**
 * Values of an operation's declared parameters taken from the flags, under the parameters' names (a flag is the
 * name in kebab case: core/params.ts flagName).
 */
export function paramFlags(specs: readonly ParamSpec[], flags: Map<string, string>): Record<string, ReturnType<typeof parseParamValue>> {
  const out: Record<string, ReturnType<typeof parseParamValue>> = {};
  for (const s of specs) {
    for (const name of [s.name, ...(s.aliases ?? [])]) {
      const v = flags.get(flagName(name));
      if (v !== undefined) out[name] = parseParamValue(s, v); // resolveParams reconciles a name and its aliases
    }
  }
  return out;
}

/** The flags of declared parameters: each name and its aliases (old names kept when one was renamed), in kebab case. */
export function flagNames(specs: readonly ParamSpec[]): string[] {
  return specs.flatMap((s) => [s.name, ...(s.aliases ?? [])].map(flagName));
}

/** Rejects flags nobody declared (a typo must not silently fall back to a default). */
export function rejectUnknown(flags: Map<string, string>, known: Iterable<string>): void {
  const ok = new Set(known);
  for (const k of flags.keys()) if (!ok.has(k)) throw new InvalidArgumentError(`unknown option --${k} (see --help)`);
}

import { InvalidArgumentError, shownValue } from './errors.js';

/**
 * Each operation parameter is declared once — name, kind, range, default, doc — and the CLI flags, the
 * help text and the validation are derived from that declaration (the libvips VIPS_ARG_* idea).
 */
export type ParamSpec = (
  | { kind: 'int'; default?: number; min?: number; max?: number }
  | { kind: 'float'; default?: number; min?: number; max?: number; /** Values must be > this (e.g. a scale factor > 1). */ exclusiveMin?: number }
  | { kind: 'ints'; default?: readonly number[]; min?: number }
  | { kind: 'enum'; default?: string; choices: readonly string[]; valueAliases?: Readonly<Record<string, string>> }
  | { kind: 'bool'; default?: boolean }
  | { kind: 'rect'; default?: undefined }
  | { kind: 'size'; default?: Size; min?: number }
  | { kind: 'string'; default?: string; file?: FileParam<unknown> }
  | { kind: 'image'; default?: undefined }
  /** A look-up table (applyLut's): library callers only, no command-line form. */
  | { kind: 'table'; default?: undefined }
) & {
  name: string;
  doc: string;
  /** Other names accepted for the option and the flag (a parameter renamed for one vocabulary keeps its old name). */
  aliases?: readonly string[];
};

/**
 * A string parameter whose value may name a file (`mask:FILE`, `kernel:FILE`): io reads the file after the prefix
 * (as an image, or as text for the extensions in `text`) and `load` turns it into the value the operation takes.
 * Library callers pass that value directly.
 */
export interface FileParam<T> {
  prefix: string;
  /** Extensions read as UTF-8 text instead of an image (e.g. ['.json']). */
  text?: readonly string[];
  /** What the file is, in messages (e.g. 'classifier file'). @default 'file' */
  what?: string;
  load(file: { path: string; spec: string; image?: import('./image.js').Image; text?: string }): T;
}

/** The value type of one parameter declaration. */
export type ValueOf<P> = P extends { kind: 'int' | 'float' } ? number
  : P extends { kind: 'ints' } ? number[]
  : P extends { kind: 'enum'; choices: readonly (infer C)[] } ? C
  : P extends { kind: 'bool' } ? boolean
  : P extends { kind: 'rect' } ? Rect
  : P extends { kind: 'size' } ? Size
  : P extends { kind: 'string'; file: FileParam<infer T> } ? string | T
  : P extends { kind: 'image' } ? import('./image.js').Image | import('./gpu/gpu-image.js').GpuImage
  : P extends { kind: 'table' } ? Uint32Array
  : string;

/** Other vocabularies' names an enum accepts for its choices (e.g. a border's OpenCV and scipy names). */
type ValueAliasOf<P> = P extends { valueAliases: Readonly<Record<infer A extends string, string>> } ? A : never;

type AliasOf<P> = P extends { aliases: readonly (infer A extends string)[] } ? A : never;

/**
 * The options object a declaration accepts, derived from it: every parameter (and its aliases) optional, typed
 * by its kind. `OptionsOf<typeof equalizeParams>` is `{ impl?: 'atomic' | 'subhist'; hist?: … }`.
 */
export type OptionsOf<S extends readonly ParamSpec[]> =
  & { [P in S[number] as P['name']]?: ValueOf<P> | ValueAliasOf<P> }
  & { [P in S[number] as AliasOf<P>]?: ValueOf<P> | ValueAliasOf<P> };

/** The parameters after resolveParams: those with a default are always set. */
export type ResolvedOf<S extends readonly ParamSpec[]> =
  & { [P in S[number] as P extends { default: NonNullable<unknown> } ? P['name'] : never]: ValueOf<P> }
  & { [P in S[number] as P extends { default: NonNullable<unknown> } ? never : P['name']]?: ValueOf<P> };

/** A width × height pair (tile grids, kernel sizes), written `WxH` on the command line. */
export interface Size {
  width: number;
  height: number;
}

/** A rectangle in pixels: x, y of the top-left corner, width, height. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type ParamValues = Record<string, number | string | boolean | Rect | Size | object | undefined>;

/** The value given for a parameter under its name or one of its aliases (two different values are an error). */
function valueOf(s: ParamSpec, values: ParamValues): ParamValues[string] {
  let found = values[s.name];
  for (const a of s.aliases ?? []) {
    const v = values[a];
    if (v === undefined) continue;
    if (found !== undefined && found !== v) throw new InvalidArgumentError(`${s.name} and ${a} (another name for it) are both given, with different values`);
    found = v;
  }
  return found;
}

/** The declaration of `name` (a parameter's name or one of its aliases). */
export function findParam(specs: readonly ParamSpec[], name: string): ParamSpec | undefined {
  return specs.find((s) => s.name === name || s.aliases?.includes(name));
}

/** Checks `values` against `specs`, fills in defaults, and throws InvalidArgumentError naming the parameter. */
export function resolveParams<T = ParamValues>(op: string, specs: readonly ParamSpec[], values: object): T {
  const out: ParamValues = {};
  for (const s of specs) {
    const v = valueOf(s, values as ParamValues) ?? s.default;
    // A parameter accepted under several names is named by all of them (the caller may have used any).
    const label = [s.name, ...(s.aliases ?? [])].join('/');
    if (v === undefined) {
      out[s.name] = undefined;
      continue;
    }
    switch (s.kind) {
      case 'int':
      case 'float': {
        if (typeof v !== 'number' || !Number.isFinite(v) || (s.kind === 'int' && !Number.isInteger(v))) {
          throw new InvalidArgumentError(`${op}: ${label} must be ${s.kind === 'int' ? 'an integer' : 'a finite number'}, got ${shownValue(v)}`);
        }
        if (s.min !== undefined && v < s.min) throw new InvalidArgumentError(`${op}: ${label} must be ≥ ${s.min}, got ${v}`);
        if (s.kind === 'float' && s.exclusiveMin !== undefined && !(v > s.exclusiveMin)) throw new InvalidArgumentError(`${op}: ${label} must be > ${s.exclusiveMin}, got ${v}`);
        if (s.max !== undefined && v > s.max) throw new InvalidArgumentError(`${op}: ${label} must be ≤ ${s.max}, got ${v}`);
        break;
      }
      case 'enum': {
        // Other vocabularies' names for a choice (scipy's 'mirror' for reflect101) resolve to the choice.
        const c = typeof v === 'string' && s.valueAliases && Object.hasOwn(s.valueAliases, v) ? s.valueAliases[v] : v;
        if (typeof c !== 'string' || !s.choices.includes(c)) {
          const aka = s.valueAliases ? ` (or ${Object.keys(s.valueAliases).join('|')})` : '';
          throw new InvalidArgumentError(`${op}: ${label} must be one of ${s.choices.join('|')}${aka}, got ${shownValue(v)}`);
        }
        out[s.name] = c;
        continue;
      }
      case 'ints': {
        const lo = s.min ?? -Infinity;
        const list: unknown[] | undefined = Array.isArray(v) ? v : undefined;
        if (!list?.length || !list.every((n) => Number.isInteger(n) && (n as number) >= lo)) {
          throw new InvalidArgumentError(`${op}: ${s.name} must be a list of integers${s.min !== undefined ? ` ≥ ${s.min}` : ''}, got ${shownValue(v)}`);
        }
        out[s.name] = [...(list as number[])];
        continue;
      }
      case 'bool':
        if (typeof v !== 'boolean') throw new InvalidArgumentError(`${op}: ${label} must be true or false`);
        break;
      case 'rect': {
        const r = v as Rect;
        if (![r.x, r.y, r.width, r.height].every((n) => Number.isInteger(n) && n >= 0) || r.width < 1 || r.height < 1) {
          throw new InvalidArgumentError(`${op}: ${label} must be non-negative integers x,y,width,height with width, height ≥ 1`);
        }
        break;
      }
      case 'string':
        // A file parameter's loaded value (e.g. a structuring element from mask:FILE) is an object.
        if (s.file && typeof v === 'object') break;
        if (typeof v !== 'string' || v === '') throw new InvalidArgumentError(`${op}: ${label} must be a non-empty string`);
        break;
      case 'image':
        if (typeof v !== 'object' || !('shape' in v)) throw new InvalidArgumentError(`${op}: ${label} must be an image`);
        break;
      case 'table':
        if (!(v instanceof Uint32Array)) throw new InvalidArgumentError(`${op}: ${label} must be a Uint32Array`);
        break;
      case 'size': {
        const z = v as Size;
        const lo = s.min ?? 1;
        if (typeof z !== 'object' || ![z.width, z.height].every((n) => Number.isInteger(n) && n >= lo)) {
          throw new InvalidArgumentError(`${op}: ${label} must be WxH with integers ≥ ${lo}, got ${typeof z === 'object' ? `${z.width}x${z.height}` : String(z)}`);
        }
        break;
      }
    }
    out[s.name] = v;
  }
  return out as T;
}

/**
 * The command-line flag of a parameter or alias: camelCase names written in kebab case (`minNeighbors` →
 * `--min-neighbors`), the one rule by which flags and API options agree.
 */
export function flagName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Parses a CLI string into the parameter's kind (numbers stay strings only when they fail to parse). */
export function parseParamValue(s: ParamSpec, text: string): number | number[] | string | boolean | Rect | Size {
  const flag = flagName(s.name);
  if (s.kind === 'image') throw new InvalidArgumentError(`--${flag} is an image: give a path (read by the command line), not '${text}'`);
  if (s.kind === 'table') throw new InvalidArgumentError(`--${flag} is a look-up table: the library's, not a command-line value`);
  switch (s.kind) {
    case 'size': {
      const m = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/i.exec(text);
      if (!m) throw new InvalidArgumentError(`--${flag} expects WxH (e.g. 8x8), got '${text}'`);
      return { width: Number(m[1]), height: Number(m[2]) };
    }
    case 'rect': {
      const n = text.split(',').map(Number);
      if (n.length !== 4 || n.some(Number.isNaN)) throw new InvalidArgumentError(`--${flag} expects x,y,width,height, got '${text}'`);
      return { x: n[0], y: n[1], width: n[2], height: n[3] };
    }
    case 'int':
    case 'float': {
      const v = Number(text);
      if (text.trim() === '' || Number.isNaN(v)) throw new InvalidArgumentError(`--${flag} expects a number, got '${text}'`);
      return v;
    }
    case 'ints': {
      const v = text.split(',').map((x) => Number(x.trim()));
      if (text.trim() === '' || v.some((n) => !Number.isInteger(n))) throw new InvalidArgumentError(`--${flag} expects integers separated by commas (e.g. 4,12,24), got '${text}'`);
      return v;
    }
    case 'bool':
      if (text === 'true' || text === '1' || text === '') return true;
      if (text === 'false' || text === '0') return false;
      throw new InvalidArgumentError(`--${flag} expects true or false, got '${text}'`);
    default:
      return text;
  }
}

/** One help line per parameter: `--name <kind>  doc (default …)`. */
export function paramHelp(specs: readonly ParamSpec[]): string {
  return specs
    .map((s) => {
      const arg = s.kind === 'enum' ? `<${s.choices.join('|')}>` : s.kind === 'bool' ? '' : s.kind === 'rect' ? '<x,y,w,h>' : s.kind === 'size' ? '<WxH>' : s.kind === 'string' ? '<spec>' : s.kind === 'image' ? '<path>' : s.kind === 'ints' ? '<n,n,…>' : `<${s.kind}>`;
      const d = s.default;
      const def = d === undefined ? '' : ` (default ${typeof d === 'object' ? ('width' in d ? `${d.width}x${d.height}` : d.join(',')) : d})`;
      const aka = s.aliases?.length ? ` (also --${s.aliases.map(flagName).join(', --')})` : '';
      const values = s.kind === 'enum' && s.valueAliases ? `; also ${Object.keys(s.valueAliases).join(', ')}` : '';
      const flag = `  --${flagName(s.name)} ${arg}`;
      // At least two spaces between a flag and its doc, however long the flag.
      return `${flag.length < 32 ? flag.padEnd(34) : `${flag}  `}${s.doc}${rangeHelp(s)}${def}${values}${aka}`;
    })
    .join('\n');
}

/** A numeric parameter's range as help shows it: [min..max], ( for an exclusive bound, ≥ min for lists. */
function rangeHelp(s: ParamSpec): string {
  if (s.kind === 'ints') return s.min !== undefined ? ` [each ≥ ${s.min}]` : '';
  if (s.kind !== 'int' && s.kind !== 'float') return '';
  const open = s.kind === 'float' && s.exclusiveMin !== undefined;
  if (s.min === undefined && s.max === undefined && !open) return '';
  return ` ${open ? `(${s.exclusiveMin}` : `[${s.min ?? ''}`}..${s.max ?? ''}]`;
}

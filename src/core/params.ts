import { InvalidArgumentError, shownValue } from './errors.js';

/**
 * Each operation parameter is declared once — name, kind, range, default, doc — and the CLI flags, the
 * help text and the validation are derived from that declaration (the libvips VIPS_ARG_* idea).
 */
export type ParamSpec =
  | { name: string; kind: 'int'; default?: number; min?: number; max?: number; doc: string }
  | { name: string; kind: 'float'; default?: number; min?: number; max?: number; doc: string }
  | { name: string; kind: 'enum'; default?: string; choices: readonly string[]; doc: string }
  | { name: string; kind: 'bool'; default?: boolean; doc: string }
  | { name: string; kind: 'rect'; default?: undefined; doc: string }
  | { name: string; kind: 'size'; default?: Size; min?: number; doc: string }
  | { name: string; kind: 'string'; default?: string; doc: string };

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

export type ParamValues = Record<string, number | string | boolean | Rect | Size | undefined>;

/** Checks `values` against `specs`, fills in defaults, and throws InvalidArgumentError naming the parameter. */
export function resolveParams<T extends ParamValues>(op: string, specs: readonly ParamSpec[], values: Partial<T>): T {
  const out: ParamValues = {};
  for (const s of specs) {
    const v = (values as ParamValues)[s.name] ?? s.default;
    if (v === undefined) {
      out[s.name] = undefined;
      continue;
    }
    switch (s.kind) {
      case 'int':
      case 'float': {
        if (typeof v !== 'number' || !Number.isFinite(v) || (s.kind === 'int' && !Number.isInteger(v))) {
          throw new InvalidArgumentError(`${op}: ${s.name} must be ${s.kind === 'int' ? 'an integer' : 'a finite number'}, got ${shownValue(v)}`);
        }
        if (s.min !== undefined && v < s.min) throw new InvalidArgumentError(`${op}: ${s.name} must be ≥ ${s.min}, got ${v}`);
        if (s.max !== undefined && v > s.max) throw new InvalidArgumentError(`${op}: ${s.name} must be ≤ ${s.max}, got ${v}`);
        break;
      }
      case 'enum':
        if (typeof v !== 'string' || !s.choices.includes(v)) {
          throw new InvalidArgumentError(`${op}: ${s.name} must be one of ${s.choices.join('|')}, got ${shownValue(v)}`);
        }
        break;
      case 'bool':
        if (typeof v !== 'boolean') throw new InvalidArgumentError(`${op}: ${s.name} must be true or false`);
        break;
      case 'rect': {
        const r = v as Rect;
        if (![r.x, r.y, r.width, r.height].every((n) => Number.isInteger(n) && n >= 0) || r.width < 1 || r.height < 1) {
          throw new InvalidArgumentError(`${op}: ${s.name} must be non-negative integers x,y,width,height with width, height ≥ 1`);
        }
        break;
      }
      case 'string':
        if (typeof v !== 'string' || v === '') throw new InvalidArgumentError(`${op}: ${s.name} must be a non-empty string`);
        break;
      case 'size': {
        const z = v as Size;
        const lo = s.min ?? 1;
        if (typeof z !== 'object' || ![z.width, z.height].every((n) => Number.isInteger(n) && n >= lo)) {
          throw new InvalidArgumentError(`${op}: ${s.name} must be WxH with integers ≥ ${lo}, got ${typeof z === 'object' ? `${z.width}x${z.height}` : String(z)}`);
        }
        break;
      }
    }
    out[s.name] = v;
  }
  return out as T;
}

/** Parses a CLI string into the parameter's kind (numbers stay strings only when they fail to parse). */
export function parseParamValue(s: ParamSpec, text: string): number | string | boolean | Rect | Size {
  switch (s.kind) {
    case 'size': {
      const m = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/i.exec(text);
      if (!m) throw new InvalidArgumentError(`--${s.name} expects WxH (e.g. 8x8), got '${text}'`);
      return { width: Number(m[1]), height: Number(m[2]) };
    }
    case 'rect': {
      const n = text.split(',').map(Number);
      if (n.length !== 4 || n.some(Number.isNaN)) throw new InvalidArgumentError(`--${s.name} expects x,y,width,height, got '${text}'`);
      return { x: n[0], y: n[1], width: n[2], height: n[3] };
    }
    case 'int':
    case 'float': {
      const v = Number(text);
      if (text.trim() === '' || Number.isNaN(v)) throw new InvalidArgumentError(`--${s.name} expects a number, got '${text}'`);
      return v;
    }
    case 'bool':
      if (text === 'true' || text === '1' || text === '') return true;
      if (text === 'false' || text === '0') return false;
      throw new InvalidArgumentError(`--${s.name} expects true or false, got '${text}'`);
    default:
      return text;
  }
}

/** One help line per parameter: `--name <kind>  doc (default …)`. */
export function paramHelp(specs: readonly ParamSpec[]): string {
  return specs
    .map((s) => {
      const arg = s.kind === 'enum' ? `<${s.choices.join('|')}>` : s.kind === 'bool' ? '' : s.kind === 'rect' ? '<x,y,w,h>' : s.kind === 'size' ? '<WxH>' : s.kind === 'string' ? '<spec>' : `<${s.kind}>`;
      const range = (s.kind === 'int' || s.kind === 'float') && (s.min !== undefined || s.max !== undefined) ? ` [${s.min ?? ''}..${s.max ?? ''}]` : '';
      const d = s.default;
      const def = d === undefined ? '' : ` (default ${typeof d === 'object' ? `${d.width}x${d.height}` : d})`;
      return `  --${s.name} ${arg}`.padEnd(34) + `${s.doc}${range}${def}`;
    })
    .join('\n');
}

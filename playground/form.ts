// An operation's parameter form, made from its declared ParamSpecs (core/params.ts): the main page and the volume
// page build their forms with these, so that every page offers and parses parameters as the CLI does.
import { parseParamValue, type ParamSpec } from '../src/browser.js';

/** A parameter's default as the CLI would take it typed: `WxH` for sizes, comma-separated lists, '' for none. */
function defaultText(p: ParamSpec): string {
  const d = p.default;
  if (d === undefined) return '';
  if (Array.isArray(d)) return d.join(',');
  return typeof d === 'object' ? ('width' in d ? `${d.width}x${d.height}` : '') : String(d);
}

/**
 * One parameter's row: its name, a field (a select for enums, a checkbox for flags, else a text field holding the
 * default) with id `<prefix>NAME`, `extra` (e.g. a file picker) and its doc line.
 */
export function paramRow(p: ParamSpec, extra: Node[] = [], prefix = 'param-'): HTMLLabelElement {
  const label = document.createElement('label');
  label.append(`${p.name} `);
  let field: HTMLInputElement | HTMLSelectElement;
  if (p.kind === 'enum') {
    field = document.createElement('select');
    for (const c of p.choices) field.append(new Option(c, c, c === p.default, c === p.default));
  } else if (p.kind === 'bool') {
    field = document.createElement('input');
    field.type = 'checkbox';
    field.checked = p.default === true;
  } else {
    field = document.createElement('input');
    field.value = defaultText(p);
    field.placeholder = p.kind === 'size' ? 'WxH' : p.kind === 'rect' ? 'x,y,w,h' : p.default === undefined ? '(not set)' : '';
  }
  field.name = p.name;
  field.id = `${prefix}${p.name}`;
  label.append(field, ...(extra.length ? [' ', ...extra] : []));
  label.append(Object.assign(document.createElement('span'), { className: 'doc', textContent: ` ${p.doc}` }));
  return label;
}

/** A parameter's field (id `<prefix>NAME`) as typed: its text (trimmed), and the value parsed by its declaration (undefined: empty, the default). */
export function paramValue(p: ParamSpec, prefix = 'param-'): { text: string; value: unknown } {
  const f = document.getElementById(`${prefix}${p.name}`) as HTMLInputElement;
  const text = f.value.trim();
  if (p.kind === 'bool') return { text, value: f.checked };
  return { text, value: text === '' ? undefined : parseParamValue(p, text) };
}

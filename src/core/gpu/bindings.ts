/**
 * Bindings by name: a dispatch names the buffers it binds by the WGSL variables of the kernel
 * (`@group(0) @binding(n) var<…> name`), never by number. GpuContext.pipeline() reads a module's declarations
 * once per source text (parseBindings) and attaches the name → number map to every pipeline it makes of it;
 * a recording turns `{ src: buf, P: params }` into bind group entries with a few map reads.
 */

/** What a binding of @group(0) takes: a whole buffer, or a range of one (work split to fit the binding limit). */
export type Binding = GPUBuffer | GPUBufferBinding;

/**
 * The buffers of a dispatch by WGSL variable name. Numeric keys (the binding numbers) are a type error, so no
 * call site can go back to numbering bindings by hand.
 */
export type Bindings<B = Binding> = { readonly [name: string]: B } & { readonly [n: number]: never };

/** The @group(0) bindings a WGSL module declares, and which of them each of its entry points uses. */
export interface ModuleBindings {
  /** Binding number by variable name. */
  readonly numbers: ReadonlyMap<string, number>;
  /**
   * For an entry point (absent if the module has no such function): `mentions`, the bindings its body and the
   * functions it calls name anywhere (one not among them is certainly unused: not in an 'auto' layout), and
   * `uses`, those of them that no local variable or parameter of the same name may hide (certainly used).
   */
  entry(name: string): EntryUse | undefined;
}

export interface EntryUse {
  readonly mentions: ReadonlySet<string>;
  readonly uses: ReadonlySet<string>;
}

interface FnInfo {
  mentions: Set<string>;
  uses: Set<string>;
  calls: Set<string>;
}

const IDENT = /(\.\s*)?\b([A-Za-z_]\w*)\b(\s*\()?/g;

/** Reads a WGSL module's @group(0) binding declarations and the functions that use them. */
export function parseBindings(code: string): ModuleBindings {
  const src = stripComments(code);
  const numbers = declaredBindings(src);
  const fns = functions(src, numbers);
  const entries = new Map<string, EntryUse | undefined>();
  return {
    numbers,
    entry(name) {
      if (!entries.has(name)) entries.set(name, fns.has(name) ? reachableUse(name, fns) : undefined);
      return entries.get(name);
    },
  };
}

function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
}

/** `@group(0) @binding(n) var<…> name` (attributes in either order) → name ↦ n. */
function declaredBindings(src: string): Map<string, number> {
  const numbers = new Map<string, number>();
  const decl = /((?:@\w+\s*(?:\([^)]*\))?\s*)+)var\s*(?:<[^>]*>)?\s*([A-Za-z_]\w*)/g;
  for (const [, attrs, name] of src.matchAll(decl)) {
    const group = /@group\s*\(\s*(\d+)\s*\)/.exec(attrs)?.[1];
    const binding = /@binding\s*\(\s*(\d+)\s*\)/.exec(attrs)?.[1];
    if (group === '0' && binding !== undefined) numbers.set(name, Number(binding));
  }
  return numbers;
}

/** Every `fn name(params) -> T { body }`: the bindings it names, and the functions it calls. */
function functions(src: string, numbers: ReadonlyMap<string, number>): Map<string, FnInfo> {
  const raw: { name: string; params: string; body: string }[] = [];
  for (const m of src.matchAll(/\bfn\s+([A-Za-z_]\w*)\s*\(/g)) {
    const paramsEnd = closing(src, m.index + m[0].length - 1, '(', ')');
    const open = src.indexOf('{', paramsEnd);
    if (paramsEnd < 0 || open < 0) continue;
    const end = closing(src, open, '{', '}');
    if (end < 0) continue;
    raw.push({ name: m[1], params: src.slice(m.index + m[0].length, paramsEnd), body: src.slice(open, end) });
  }
  const names = new Set(raw.map((f) => f.name));
  const fns = new Map<string, FnInfo>();
  for (const f of raw) {
    const locals = new Set([...f.params.matchAll(/([A-Za-z_]\w*)\s*:/g), ...f.body.matchAll(/\b(?:let|const|var\s*(?:<[^>]*>)?)\s*([A-Za-z_]\w*)/g)].map((m) => m[1]));
    const info: FnInfo = { mentions: new Set(), uses: new Set(), calls: new Set() };
    for (const [, member, id, call] of f.body.matchAll(IDENT)) {
      if (member) continue; // a struct member (`P.src`), not the variable
      if (call && names.has(id)) info.calls.add(id);
      else if (numbers.has(id)) {
        info.mentions.add(id);
        if (!locals.has(id)) info.uses.add(id);
      }
    }
    fns.set(f.name, info);
  }
  return fns;
}

/** The index of the bracket closing the one at `open`, or −1. */
function closing(src: string, open: number, o: string, c: string): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    if (src[i] === o) depth++;
    else if (src[i] === c && --depth === 0) return i;
  }
  return -1;
}

/** The bindings an entry point and everything it calls name. */
function reachableUse(entry: string, fns: ReadonlyMap<string, FnInfo>): EntryUse {
  const mentions = new Set<string>(), uses = new Set<string>();
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const f = fns.get(name);
    if (!f || seen.has(name)) return;
    seen.add(name);
    for (const n of f.mentions) mentions.add(n);
    for (const n of f.uses) uses.add(n);
    for (const callee of f.calls) visit(callee);
  };
  visit(entry);
  return { mentions, uses };
}

interface PipelineBindings {
  readonly label: string;
  readonly numbers: ReadonlyMap<string, number>;
  readonly use: EntryUse | undefined;
}

/** The binding names of the pipelines GpuContext.pipeline() made (GPUComputePipeline itself stays the handle). */
const named = new WeakMap<GPUComputePipeline, PipelineBindings>();

/** Attaches the binding names of `module`'s entry point `entry` to `pipeline` (GpuContext.pipeline does this). */
export function nameBindings(pipeline: GPUComputePipeline, label: string, module: ModuleBindings, entry: string): void {
  named.set(pipeline, { label, numbers: module.numbers, use: module.entry(entry) });
}

/**
 * The bind group entries of `bindings` for @group(0) of `pipeline`. A name the module does not declare, a
 * binding the entry point never names (an 'auto' layout has no slot for it), or one it uses but was not given
 * is an Error naming the pipeline and its bindings: a bug in the caller, reported before WebGPU validation
 * would report it as an anonymous layout mismatch.
 */
export function bindGroupEntries(pipeline: GPUComputePipeline, dispatch: string, bindings: Bindings): GPUBindGroupEntry[] {
  const known = named.get(pipeline);
  if (!known) throw new Error(`${dispatch}: pipeline '${pipeline.label}' was not made by GpuContext.pipeline(), so its binding names are unknown`);
  const entries: GPUBindGroupEntry[] = [];
  for (const name of Object.keys(bindings)) {
    const binding = known.numbers.get(name);
    if (binding === undefined) throw bindingError(dispatch, known, `has no binding '${name}'`);
    if (known.use && !known.use.mentions.has(name)) throw bindingError(dispatch, known, `does not use binding '${name}'`);
    const b = bindings[name];
    entries.push({ binding, resource: 'buffer' in b ? b : { buffer: b } });
  }
  for (const name of known.use?.uses ?? []) {
    if (!Object.hasOwn(bindings, name)) throw bindingError(dispatch, known, `uses binding '${name}', which was not given`);
  }
  return entries;
}

function bindingError(dispatch: string, known: PipelineBindings, what: string): Error {
  const all = [...known.numbers].map(([n, i]) => `${n} (${i})`).join(', ');
  const used = known.use ? `; its entry point uses ${[...known.use.mentions].join(', ') || 'none'}` : '';
  return new Error(`${dispatch}: pipeline '${known.label}' ${what} (the module's bindings: ${all}${used})`);
}

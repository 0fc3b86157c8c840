/**
 * Uniform structs declared once: `defineUniforms(name, fields)` gives both the WGSL struct text (interpolated into
 * a kernel's source) and the packer of its words for Recording.uniform, so the order and types of a kernel's
 * parameters cannot drift apart between the shader and the host. Layout as WGSL's uniform address space lays it
 * out: 4-byte scalars, vec2 aligned to 8 bytes, vec4 to 16; the struct rounded up to 16 bytes with explicit
 * padding fields (`_pN`) so its size equals the words packed.
 */

/** The field types a uniform struct may have. */
export type UniformType = 'u32' | 'i32' | 'f32' | 'vec2u' | 'vec2i' | 'vec2f' | 'vec4u' | 'vec4i' | 'vec4f';

type ValueOf<T extends UniformType> = T extends 'u32' | 'i32' | 'f32' ? number : readonly number[];

/** The values `pack` takes: one per declared field (numbers; arrays of 2 or 4 for vectors). */
export type UniformValues<F extends Record<string, UniformType>> = { readonly [K in keyof F]: ValueOf<F[K]> };

export interface UniformStruct<F extends Record<string, UniformType>> {
  readonly name: string;
  /** The declared fields (name → type), in order. */
  readonly fields: F;
  /** `struct Name { … }`, padding included. */
  readonly wgsl: string;
  /** Size in 32-bit words (a multiple of 4). */
  readonly words: number;
  /** The struct's words: u32 as is, i32 as two's complement, f32 as its float bits. */
  pack(values: UniformValues<F>): Uint32Array;
}

const LANES: Record<UniformType, number> = { u32: 1, i32: 1, f32: 1, vec2u: 2, vec2i: 2, vec2f: 2, vec4u: 4, vec4i: 4, vec4f: 4 };

interface Slot {
  name: string;
  type: UniformType;
  /** Offset in words. */
  at: number;
}

const f32 = new Float32Array(1);
const f32Words = new Uint32Array(f32.buffer);

/** Declares a uniform struct (field order is the WGSL order). */
export function defineUniforms<F extends Record<string, UniformType>>(name: string, fields: F): UniformStruct<F> {
  const slots: Slot[] = [];
  const decl: string[] = [];
  let at = 0, pad = 0;
  for (const [field, type] of Object.entries(fields) as [string, UniformType][]) {
    const lanes = LANES[type];
    for (; at % lanes !== 0; at++) decl.push(`_p${pad++}: u32`);
    slots.push({ name: field, type, at });
    decl.push(`${field}: ${type}`);
    at += lanes;
  }
  for (; at % 4 !== 0; at++) decl.push(`_p${pad++}: u32`);
  const words = at;
  return {
    name,
    fields,
    words,
    wgsl: `struct ${name} { ${decl.join(', ')} }`,
    pack(values) {
      const out = new Uint32Array(words);
      for (const s of slots) {
        const v = values[s.name];
        if (v === undefined) throw new Error(`uniform ${name}: no value for '${s.name}'`);
        const lanes = LANES[s.type];
        if (lanes > 1 && (v as readonly number[]).length !== lanes) throw new Error(`uniform ${name}: '${s.name}' needs ${lanes} values`);
        for (let i = 0; i < lanes; i++) out[s.at + i] = word(s.type, lanes === 1 ? (v as number) : (v as readonly number[])[i]);
      }
      return out;
    },
  };
}

/** One 32-bit word of a scalar of `type` (the element type of a vector). */
function word(type: UniformType, x: number): number {
  if (type === 'f32' || type === 'vec2f' || type === 'vec4f') {
    f32[0] = x;
    return f32Words[0];
  }
  return x >>> 0; // u32 as is, i32 as two's complement
}

import { InvalidArgumentError } from '../../core/errors.js';
import { roundHalfEven } from '../../core/rounding.js';

/**
 * Structuring elements. A box (rect, line, box) is separable into one 1-D window per axis and runs with
 * van Herk/Gil-Werman; any other shape (cross, ellipse, user mask) runs with the direct kernel. Sizes are
 * [d, h, w] (d = 1 for 2D). Anchors follow OpenCV: the centre ⌊size/2⌋ of each axis.
 */
export interface StructuringElement {
  /** 'box' when every element of the [d, h, w] block is set: the separable fast path applies. */
  kind: 'box' | 'mask';
  size: [d: number, h: number, w: number];
  /** Row-major d·h·w flags (1 = part of the element); for boxes all ones. */
  mask: Uint8Array;
  /** How it was written, for messages and JSON. */
  spec: string;
}

/**
 * The most cells (d·h·w) of an element that is not a box — cross, ellipse, mask files — and of a box run with the
 * direct kernel (method 'naive'): the direct kernels visit every set cell for every pixel and keep their offsets
 * in one GPU buffer (12 bytes each). Boxes of any size run with van Herk/Gil-Werman, clamped to the image.
 */
export const MAX_MASK_CELLS = 2048 * 2048;

/** Refuses, before anything is allocated, a mask element of more than MAX_MASK_CELLS cells. */
export function checkMaskCells(size: readonly number[], spec: string, why = 'an element that is not a box'): void {
  const cells = size.reduce((a, b) => a * b, 1);
  if (cells > MAX_MASK_CELLS) {
    throw new InvalidArgumentError(`structuring element ${spec}: ${size.slice().reverse().join('×')} = ${cells} cells, more than ${MAX_MASK_CELLS} (2048×2048) for ${why}; rect/line/box elements have no size limit`);
  }
}

/** A box; its mask (all ones) is made only when asked for (the direct kernel), so a huge box costs nothing. */
function box(d: number, h: number, w: number, spec: string): StructuringElement {
  let mask: Uint8Array | undefined;
  return {
    kind: 'box', size: [d, h, w], spec,
    get mask() {
      checkMaskCells([d, h, w], spec, 'the direct kernel (method naive)');
      return (mask ??= new Uint8Array(d * h * w).fill(1));
    },
  };
}

/** A mask; all-ones masks become boxes (so `mask:` of a full block also takes the fast path). */
export function maskElement(mask: Uint8Array, size: [number, number, number], spec: string): StructuringElement {
  if (size.some((n) => !Number.isInteger(n) || n < 1)) throw new InvalidArgumentError(`structuring element ${spec}: sizes must be ≥ 1, got ${size.join('×')}`);
  checkMaskCells(size, spec);
  if (!mask.some((v) => v !== 0)) throw new InvalidArgumentError(`structuring element ${spec} is empty (no non-zero element)`);
  const flags = Uint8Array.from(mask, (v) => (v ? 1 : 0));
  return flags.every((v) => v === 1) ? box(size[0], size[1], size[2], spec) : { kind: 'mask', size, mask: flags, spec };
}

/** OpenCV getStructuringElement(MORPH_CROSS, (n, n)): the anchor row and column. */
export function crossElement(w: number, h: number): Uint8Array {
  const m = new Uint8Array(w * h);
  const ax = Math.floor(w / 2), ay = Math.floor(h / 2);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) m[y * w + x] = y === ay || x === ax ? 1 : 0;
  return m;
}

/** OpenCV getStructuringElement(MORPH_ELLIPSE, (w, h)), its rasterization exactly (cvRound of c·√(…)). */
export function ellipseElement(w: number, h: number): Uint8Array {
  const m = new Uint8Array(w * h);
  const r = Math.floor(h / 2), c = Math.floor(w / 2);
  const invR2 = r ? 1 / (r * r) : 0;
  for (let i = 0; i < h; i++) {
    const dy = i - r;
    let j1 = 0, j2 = 0;
    if (Math.abs(dy) <= r) {
      const dx = roundHalfEven(c * Math.sqrt((r * r - dy * dy) * invR2));
      j1 = Math.max(c - dx, 0);
      j2 = Math.min(c + dx + 1, w);
    }
    for (let j = j1; j < j2; j++) m[i * w + j] = 1;
  }
  return m;
}

const dims = (text: string, n: number, spec: string): number[] => {
  const parts = text.split(/[x×]/i).map((p) => Number(p));
  if (parts.length !== n || parts.some((p) => !Number.isInteger(p) || p < 1)) {
    throw new InvalidArgumentError(`structuring element '${spec}': expected ${n === 1 ? 'N' : n === 2 ? 'WxH' : 'WxHxD'} with integers ≥ 1`);
  }
  return parts;
};

/**
 * Parses `rect:WxH`, `line:LEN:h|v|d`, `box:WxHxD`, `cross:N`, `ellipse:WxH`; `mask:FILE` is read by the caller
 * (io/) and passed to maskElement.
 */
export function parseElement(spec: string): StructuringElement {
  const [kind, a, b] = spec.split(':');
  switch (kind) {
    case 'rect': {
      const [w, h] = dims(a ?? '', 2, spec);
      return box(1, h, w, spec);
    }
    case 'box': {
      const [w, h, d] = dims(a ?? '', 3, spec);
      return box(d, h, w, spec);
    }
    case 'line': {
      const [n] = dims(a ?? '', 1, spec);
      if (b === 'h') return box(1, 1, n, spec);
      if (b === 'v') return box(1, n, 1, spec);
      if (b === 'd') return box(n, 1, 1, spec);
      throw new InvalidArgumentError(`structuring element '${spec}': a line is line:LEN:h, line:LEN:v or line:LEN:d (depth)`);
    }
    case 'cross': {
      const [n] = dims(a ?? '', 1, spec);
      checkMaskCells([1, n, n], spec);
      return maskElement(crossElement(n, n), [1, n, n], spec);
    }
    case 'ellipse': {
      const [w, h] = dims(a ?? '', 2, spec);
      checkMaskCells([1, h, w], spec);
      return maskElement(ellipseElement(w, h), [1, h, w], spec);
    }
    default:
      throw new InvalidArgumentError(`unknown structuring element '${spec}': use rect:WxH, line:LEN:h|v|d, box:WxHxD, cross:N, ellipse:WxH or mask:FILE`);
  }
}

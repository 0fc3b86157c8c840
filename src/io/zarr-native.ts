import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as zlib from 'node:zlib';
import type { Dtype } from '../core/image.js';

/**
 * Chunk files read and written without zarrita, for the layouts Node's own zlib covers (raw, gzip, zlib and zstd
 * chunks, C order, little endian, a regular grid: what imgpu writes and what zarr-python writes by default but
 * blosc): the chunk threads' route (zarr-worker.ts). Profiled before (docs/volumes.md): zstd through numcodecs'
 * wasm build spent a third of its time in the Emscripten copy of each chunk into wasm memory (`toWireType`),
 * zarrita's per-row copies and the async file and gzip calls (libuv's pool: four threads for all the chunk
 * threads) the rest. Here a chunk is one synchronous file read or write (each chunk thread is a thread of its own),
 * one native codec call and one byte copy per row. Blosc, lz4, F order, sharding and the rest stay on zarrita.
 *
 * The encodings are those of zarrita with imgpu's codecs (zarr.ts registers the same Node codecs there), so a file
 * is byte for byte what the main thread writes.
 */

/**
 * Whether this Node has zstd in zlib (22.15 and later; imgpu asks for Node 22): without it zstd chunks go through
 * zarrita's wasm codec as before (a named import of zstdCompressSync would fail the whole module there).
 */
export const NODE_ZSTD = typeof zlib.zstdCompressSync === 'function';

/** A chunk codec Node's zlib runs natively. */
export type NativeCodec =
  | { id: 'raw' }
  | { id: 'gzip' | 'zlib'; level: number }
  | { id: 'zstd'; level: number; checksum: boolean };

/** What reading or writing a level's chunk files natively needs, from its metadata. */
export interface NativeLayout {
  /** the level's folder */
  dir: string;
  /** the chunk file of chunk coordinates (all axes), relative to `dir` */
  key: (coords: number[]) => string;
  codec: NativeCodec;
  /** bytes per voxel */
  size: number;
  /** the array's rank (2–5) and the [z, y, x] view of its shape and chunks (leading axes of size 1) */
  rank: number;
  shape: [number, number, number];
  chunks: [number, number, number];
  /** one chunk of the fill value, as bytes (a missing chunk, the outside of an edge chunk) */
  fill: Uint8Array;
}

const V2_TYPES: Record<string, Dtype> = { '|u1': 'uint8', '<u1': 'uint8', '|i1': 'uint8', '<u2': 'uint16', '<f4': 'float32' };
const SIZES: Record<Dtype, number> = { uint8: 1, uint16: 2, float32: 4 };
const CTORS = { uint8: Uint8Array, uint16: Uint16Array, float32: Float32Array } as const;

type Json = Record<string, unknown>;

/** A v2 compressor (`.zarray`'s `compressor`) Node runs, or undefined. */
function v2Codec(c: Json | null): NativeCodec | undefined {
  if (c === null) return { id: 'raw' };
  if (c.id === 'gzip' || c.id === 'zlib') return { id: c.id, level: Number(c.level ?? 1) };
  if (c.id === 'zstd' && NODE_ZSTD) return { id: 'zstd', level: Number(c.level ?? 0), checksum: c.checksum === true };
  return undefined;
}

/** v3 codecs: `bytes` (little endian), then at most one gzip or zstd — or undefined. */
function v3Codec(codecs: Json[]): NativeCodec | undefined {
  const [bytes, comp, ...rest] = codecs;
  const endian = (bytes?.configuration as Json | undefined)?.endian;
  if (bytes?.name !== 'bytes' || (endian !== undefined && endian !== 'little') || rest.length) return undefined;
  if (!comp) return { id: 'raw' };
  const cfg = (comp.configuration ?? {}) as Json;
  if (comp.name === 'gzip') return { id: 'gzip', level: Number(cfg.level ?? 1) };
  if (comp.name === 'zstd' && NODE_ZSTD) return { id: 'zstd', level: Number(cfg.level ?? 0), checksum: cfg.checksum === true };
  return undefined;
}

/** Keys of chunk coordinates: v2's `1.2.3` (or `/`), v3's default `c/1/2/3` or its `v2` encoding. */
function keyOf(prefix: string, sep: string): (coords: number[]) => string {
  return (coords) => prefix + coords.join(sep);
}

/** The [z, y, x] view of an array's shape or chunks (a 2D array as one plane). */
const last3 = (a: number[]) => (a.length === 2 ? [1, ...a] : a.slice(-3)) as [number, number, number];

/** The layout of a level from its parsed metadata, or undefined where it needs zarrita. */
function layoutOf(dir: string, meta: Json, v3: boolean): NativeLayout | undefined {
  let dtype: Dtype | undefined, codec: NativeCodec | undefined, chunks: number[], key: NativeLayout['key'];
  if (!v3) {
    dtype = V2_TYPES[String(meta.dtype)];
    const plain = (meta.order ?? 'C') === 'C' && (meta.filters === null || meta.filters === undefined || (meta.filters as unknown[]).length === 0);
    codec = plain ? v2Codec(meta.compressor as Json | null) : undefined;
    chunks = meta.chunks as number[];
    key = keyOf('', (meta.dimension_separator as string | undefined) ?? '.');
  } else {
    dtype = ({ uint8: 'uint8', uint16: 'uint16', float32: 'float32' } as Record<string, Dtype>)[String(meta.data_type)];
    const grid = meta.chunk_grid as Json, enc = (meta.chunk_key_encoding ?? { name: 'default' }) as Json;
    const sep = (enc.configuration as Json | undefined)?.separator as string | undefined;
    const transformers = meta.storage_transformers as unknown[] | undefined;
    codec = grid?.name === 'regular' && !transformers?.length ? v3Codec(meta.codecs as Json[]) : undefined;
    chunks = (grid?.configuration as Json | undefined)?.chunk_shape as number[];
    if (enc.name === 'default') key = keyOf(`c${sep ?? '/'}`, sep ?? '/');
    else if (enc.name === 'v2') key = keyOf('', sep ?? '.');
    else return undefined;
  }
  const shape = meta.shape as number[];
  if (!dtype || !codec || !Array.isArray(shape) || shape.length < 2 || shape.length > 5 || chunks?.length !== shape.length || typeof meta.fill_value !== 'number') return undefined;
  const size = SIZES[dtype], c3 = last3(chunks);
  const fill = new CTORS[dtype](c3[0] * c3[1] * c3[2]).fill(meta.fill_value);
  return { dir, key, codec, size, rank: shape.length, shape: last3(shape), chunks: c3, fill: new Uint8Array(fill.buffer) };
}

/**
 * The native layout of the level at `path` of the store at `root` (its `.zarray` or `zarr.json`, read now), or
 * undefined where zarrita must read it (blosc, lz4, filters, F order, sharding, big endian, another data type).
 */
export function nativeLayout(root: string, path: string): NativeLayout | undefined {
  const dir = join(root, path);
  for (const [file, v3] of [['.zarray', false], ['zarr.json', true]] as const) {
    let text: string;
    try {
      text = readFileSync(join(dir, file), 'utf8');
    } catch {
      continue;
    }
    try {
      return layoutOf(dir, JSON.parse(text) as Json, v3);
    } catch {
      return undefined; // malformed: zarrita's messages say what is wrong
    }
  }
  return undefined;
}

/**
 * Decodes a chunk file's bytes, `expected` long: zlib's output buffer sized for it (its default, 16 KiB pieces
 * concatenated, took half of a zstd chunk's decode here).
 */
export function decodeNative(codec: NativeCodec, bytes: Uint8Array, expected: number): Uint8Array {
  const o = { chunkSize: Math.max(64, expected + 64) };
  switch (codec.id) {
    case 'raw': return bytes;
    case 'gzip': return zlib.gunzipSync(bytes, o);
    case 'zlib': return zlib.inflateSync(bytes, o);
    case 'zstd': return zlib.zstdDecompressSync(bytes, o);
  }
}

/**
 * zstd's options for `bytes` bytes as numcodecs' Zstd writes a frame: the level, the checksum flag, and the content
 * size in the frame's header — python's numcodecs (0.11, Debian's) refuses a frame without it ("invalid input
 * data"), and Node's asynchronous zstdCompress leaves it out unless the size is pledged.
 */
export function zstdParams(level: number, checksum: boolean, bytes: number) {
  return { params: { [zlib.constants.ZSTD_c_compressionLevel]: level, [zlib.constants.ZSTD_c_checksumFlag]: checksum ? 1 : 0 }, pledgedSrcSize: bytes };
}

/** Encodes a chunk's bytes. */
export function encodeNative(codec: NativeCodec, bytes: Uint8Array): Uint8Array {
  switch (codec.id) {
    case 'raw': return bytes;
    case 'gzip': return zlib.gzipSync(bytes, { level: codec.level });
    case 'zlib': return zlib.deflateSync(bytes, { level: codec.level });
    case 'zstd': return zlib.zstdCompressSync(bytes, zstdParams(codec.level, codec.checksum, bytes.byteLength));
  }
}

/** Chunk coordinates over all the array's axes (leading axes of size 1: chunk 0; a 2D array: y, x only). */
function coordsOf(l: NativeLayout, [cz, cy, cx]: readonly number[]): number[] {
  return l.rank === 2 ? [cy, cx] : [...Array.from({ length: l.rank - 3 }, () => 0), cz, cy, cx];
}

/** The voxels of chunk c, [z, y, x] ranges clipped to the level. */
export function boxOf(l: NativeLayout, c: readonly number[]): [number, number][] {
  return c.map((i, a) => [i * l.chunks[a], Math.min(l.shape[a], (i + 1) * l.chunks[a])] as [number, number]);
}

/** A chunk's voxels as bytes: its file decoded, or the fill value where it has none. A file of the wrong size is an error. */
function chunkBytes(l: NativeLayout, c: readonly number[]): Uint8Array {
  let file: Buffer;
  try {
    file = readFileSync(join(l.dir, l.key(coordsOf(l, c))));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return l.fill;
    throw e;
  }
  const raw = decodeNative(l.codec, file, l.fill.byteLength);
  if (raw.byteLength !== l.fill.byteLength) throw new Error(`chunk ${c.join(',')} holds ${raw.byteLength} bytes, ${l.fill.byteLength} expected`);
  return raw;
}

/**
 * Copies rows between a chunk ([cz, cy, cx] voxels, as bytes) and a block of whole planes ([·, h, w], as bytes),
 * for the chunk's voxels in box [z0, z1) × [y0, y1) × [x0, x1) (the chunk's first voxel at level voxel `origin`):
 * block plane `plane0` is level plane z0.
 */
function copyRows(l: NativeLayout, chunk: Uint8Array, block: Uint8Array, box: [number, number][], [oz, oy, ox]: number[], plane0: number, toBlock: boolean): void {
  const [[z0, z1], [y0, y1], [x0, x1]] = box, [, cy, cx] = l.chunks, [, h, w] = l.shape, s = l.size;
  const n = (x1 - x0) * s;
  for (let z = z0; z < z1; z++) {
    for (let y = y0; y < y1; y++) {
      const b = (((plane0 + z - z0) * h + y) * w + x0) * s, c = (((z - oz) * cy + y - oy) * cx + x0 - ox) * s;
      if (toBlock) block.set(chunk.subarray(c, c + n), b);
      else chunk.set(block.subarray(b, b + n), c);
    }
  }
}

/**
 * Decodes chunk `c` (cz, cy, cx) and copies its planes in [a, b) into `dst` (bytes of a [·, h, w] block whose
 * plane `dstPlane` is level plane a).
 */
export function readChunkNative(l: NativeLayout, c: readonly number[], [a, b]: [number, number], dst: Uint8Array, dstPlane: number): void {
  const box = boxOf(l, c);
  box[0] = [Math.max(a, box[0][0]), Math.min(b, box[0][1])];
  if (box[0][0] >= box[0][1]) return;
  copyRows(l, chunkBytes(l, c), dst, box, originOf(l, c), dstPlane + box[0][0] - a, true);
}

/**
 * Writes a chunk file atomically: a temporary file (AtomicFsStore's name pattern) renamed over it. The chunk's folder
 * is made when the write finds none (not remembered: a store may be removed and made again between runs of a pool).
 */
function writeAtomic(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    try {
      writeFileSync(tmp, bytes);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(tmp, bytes);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

let scratchBuffer: Uint8Array | undefined;

/**
 * This thread's chunk buffer, reused chunk after chunk (a job encodes and writes it synchronously, and nothing keeps
 * it): a fresh buffer per chunk was fresh memory to touch and to collect each time.
 */
function scratch(bytes: number): Uint8Array {
  // Not Buffer.allocUnsafe: a small chunk from its shared pool may start at an odd offset (no Uint16Array over it).
  if (scratchBuffer?.byteLength !== bytes) scratchBuffer = new Uint8Array(bytes);
  return scratchBuffer;
}

/** The level voxel of a chunk's first voxel. */
export const originOf = (l: NativeLayout, c: readonly number[]) => c.map((i, a) => i * l.chunks[a]);

/**
 * A chunk to set the voxels of `box` in: uninitialised where the box covers it, the fill value where the box
 * covers the chunk's part inside the level (an edge chunk: zarrita writes such a new chunk's outside as the fill
 * value), else a copy of the chunk as it is (planes of it set, the others kept, as zarrita does).
 */
export function blankChunk(l: NativeLayout, c: readonly number[], box: [number, number][]): Uint8Array {
  if (box.every(([lo, hi], a) => hi - lo === l.chunks[a])) return scratch(l.fill.byteLength);
  const inside = boxOf(l, c);
  return new Uint8Array(box[0][0] === inside[0][0] && box[0][1] === inside[0][1] ? l.fill : chunkBytes(l, c));
}

/**
 * Encodes chunk `c` of a level from `src` (bytes of a [·, h, w] block of `planes` planes whose plane 0 is level
 * plane `srcZ0`) and writes its file atomically. An edge chunk's outside is the fill value, as zarrita writes a
 * chunk that did not exist.
 */
export function writeChunkNative(l: NativeLayout, c: readonly number[], src: Uint8Array, srcZ0: number, planes: number): void {
  const box = boxOf(l, c);
  box[0] = [Math.max(box[0][0], srcZ0), Math.min(box[0][1], srcZ0 + planes)];
  const chunk = blankChunk(l, c, box);
  copyRows(l, chunk, src, box, originOf(l, c), box[0][0] - srcZ0, false);
  writeChunkEncoded(l, c, chunk);
}

/** Encodes a chunk's voxels (bytes, the whole chunk) and writes its file atomically. */
export function writeChunkEncoded(l: NativeLayout, c: readonly number[], chunk: Uint8Array): void {
  writeAtomic(join(l.dir, l.key(coordsOf(l, c))), encodeNative(l.codec, chunk));
}

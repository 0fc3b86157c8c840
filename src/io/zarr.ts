import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import type * as Zarr from 'zarrita';
import { InvalidArgumentError, optionRef, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Geometry, type Image } from '../core/image.js';
import { IDENTITY, openOmeStore } from './ome-zarr-meta.js';
import type { ZarrArrayHandle, ZarrLevel } from './zarr-types.js';
import { NODE_ZSTD, zstdParams } from './zarr-native.js';

export type { ZarrArrayHandle, ZarrLevel } from './zarr-types.js';

/**
 * OME-Zarr volumes on the filesystem through zarrita: Zarr v2 with OME-Zarr 0.4 metadata (the default, which more
 * viewers read) or Zarr v3 with 0.5; chunks raw, gzip (zlib here: zarrita's own gzip codec only decodes), zstd or
 * blosc (numcodecs' wasm builds, through zarrita's registry). One 3D scalar array per level, axes z, y, x in the
 * geometry's units (millimetres, as NIfTI and DICOM give them), a multiscale pyramid whose level i has scale
 * 2^i · spacing and the half-voxel translation origin + (2^i − 1)/2 · spacing of a 2×2×2 mean.
 *
 * Chunk files are written atomically (a temporary file renamed over the chunk: zarrita's filesystem store writes in
 * place), so an interrupted writer leaves whole chunks or none.
 */

export const ZARR_COMPRESSORS = ['raw', 'gzip', 'zstd', 'blosc'] as const;
export type ZarrCompressor = (typeof ZARR_COMPRESSORS)[number];
export const OME_VERSIONS = ['0.4', '0.5'] as const;
export type OmeVersion = (typeof OME_VERSIONS)[number];

const V2_DTYPES: Record<Dtype, string> = { uint8: '|u1', uint16: '<u2', float32: '<f4' };

const gzipAsync = promisify(zlib.gzip), gunzipAsync = promisify(zlib.gunzip);

/**
 * gzip that encodes too (zarrita's GzipCodec decodes only): Node's zlib, level from the metadata, on libuv's
 * threads (zarrita encodes and decodes a slab's chunks concurrently, so they deflate in parallel).
 */
class ZlibGzipCodec {
  readonly kind = 'bytes_to_bytes';
  constructor(private readonly level: number) {}
  static fromConfig(c: { level?: number }) {
    return new ZlibGzipCodec(c.level ?? 1);
  }
  async encode(b: Uint8Array): Promise<Uint8Array> {
    return gzipAsync(b, { level: this.level });
  }
  async decode(b: Uint8Array): Promise<Uint8Array> {
    return wholeBuffer(await gunzipAsync(b));
  }
}
/**
 * zstd through Node's zlib (libzstd, since Node 22.15) instead of numcodecs' wasm build, whose copies of each chunk
 * into wasm memory (`toWireType`) took a third of its time (docs/volumes.md): the chunk threads' native route
 * (zarr-native.ts) writes the same bytes. Frames as numcodecs' Zstd writes them: the content size in the header
 * (python's numcodecs needs it to decode), no checksum unless the metadata asks for one.
 */
class NodeZstdCodec {
  readonly kind = 'bytes_to_bytes';
  constructor(private readonly level: number, private readonly checksum: boolean) {}
  static fromConfig(c: { level?: number; checksum?: boolean }) {
    return new NodeZstdCodec(c.level ?? 0, c.checksum === true);
  }
  async encode(b: Uint8Array): Promise<Uint8Array> {
    return promisify(zlib.zstdCompress)(b, zstdParams(this.level, this.checksum, b.byteLength));
  }
  async decode(b: Uint8Array): Promise<Uint8Array> {
    return wholeBuffer(await promisify(zlib.zstdDecompress)(b));
  }
}

/**
 * Bytes in an ArrayBuffer of their own: zarrita's bytes codec encodes a decoded chunk's whole `buffer`, so a chunk
 * read back (an edge chunk partly rewritten) from a view into a larger buffer (zlib's output, Node's pooled reads)
 * would be written with that buffer's other bytes after it — a larger, different file each time.
 */
function wholeBuffer(b: Uint8Array): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b);
}


let zarrita: Promise<typeof Zarr> | undefined;

/**
 * zarrita, loaded with the first Zarr opened and given Node's gzip (which encodes) and zstd codecs: its 36 modules took ~40 ms of
 * every command's start-up (issue 40 item 5), and a command that touches no Zarr never needs them.
 */
function loadZarrita(): Promise<typeof Zarr> {
  return (zarrita ??= import('zarrita').then((zarr) => {
    zarr.registry.set('gzip', () => ZlibGzipCodec as never);
    zarr.registry.set('numcodecs.gzip', () => ZlibGzipCodec as never);
    if (NODE_ZSTD) {
      zarr.registry.set('zstd', () => NodeZstdCodec as never);
      zarr.registry.set('numcodecs.zstd', () => NodeZstdCodec as never);
    }
    return zarr;
  }));
}

/** zarrita's filesystem store with atomic writes: each chunk goes to a temporary file renamed over its name. */
export class AtomicFsStore {
  constructor(readonly root: string) {}
  private path(key: string): string {
    return join(this.root, key.replace(/^\//, ''));
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    return readFile(this.path(key)).then((b) => wholeBuffer(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)), (e) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    });
  }
  async set(key: string, value: Uint8Array): Promise<void> {
    const p = this.path(key);
    await mkdir(dirname(p), { recursive: true });
    const tmp = `${p}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await writeFile(tmp, value);
      await rename(tmp, p);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }
  async delete(key: string): Promise<boolean> {
    await unlink(this.path(key));
    return true;
  }
}

/** A temporary file of AtomicFsStore.set: `<chunk>.tmp-<pid>-<base36>`. */
const TEMP = /\.tmp-\d+-[0-9a-z]+$/;

/**
 * Removes the temporary files a writer killed mid-write left among the chunk files of rows [r0, r1) along z of
 * level `level` (Zarr v2 keys `<level>/<z>/…`, v3 `<level>/c/<z>/…`): the caller owns those rows now.
 */
export async function removeStrayTemps(root: string, level: number, [r0, r1]: [number, number]): Promise<void> {
  for (let z = r0; z < r1; z++) {
    for (const dir of [join(root, String(level), String(z)), join(root, String(level), 'c', String(z))]) {
      const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
      for (const e of entries) if (TEMP.test(e)) await rm(join(dir, e), { force: true });
    }
  }
}

type ZarrArray = Zarr.Array<Zarr.DataType, AtomicFsStore>;

/** An OME-Zarr (or a plain 3D Zarr array) opened for reading or writing. */
export interface OmeZarr {
  root: string;
  /** This opening's name, unique in the process: chunk threads (zarr-pool.ts) open a level once per opening, so a store recreated at the same path is never read through stale metadata. */
  opened: string;
  dtype: Dtype;
  levels: ZarrLevel[];
  geometry?: Geometry;
  ome: OmeVersion | undefined;
}

/** How a new OME-Zarr is laid out. */
export interface ZarrWriteOptions {
  /** Chunk shape [z, y, x] (default [64, 64, 64] clipped to the volume). */
  chunks?: [number, number, number];
  compressor?: ZarrCompressor;
  /** Compression level (gzip 1–9, default 1; zstd 1–22, default 3; blosc 1–9, default 5). */
  level?: number;
  /** OME-Zarr version: 0.4 (Zarr v2, default) or 0.5 (Zarr v3). */
  ome?: OmeVersion;
  /** Levels of the multiscale pyramid, 1 = the full resolution only (default 1). */
  levels?: number;
}

/** Whether a path names a Zarr store (by extension: .zarr, .ome.zarr, a trailing slash allowed). */
export function isZarrPath(path: string): boolean {
  return /\.zarr\/?$/i.test(path);
}

/** Checks write options before any work (typed errors naming the option). */
export function checkZarrWriteOptions(o: ZarrWriteOptions): void {
  if (o.compressor && !(ZARR_COMPRESSORS as readonly string[]).includes(o.compressor)) throw new InvalidArgumentError(`${optionRef('compressor')} must be one of ${ZARR_COMPRESSORS.join(', ')}, got '${o.compressor}'`);
  if (o.ome && !(OME_VERSIONS as readonly string[]).includes(o.ome)) throw new InvalidArgumentError(`${optionRef('ome')} must be 0.4 or 0.5, got '${o.ome}'`);
  if (o.levels !== undefined && (!Number.isInteger(o.levels) || o.levels < 1 || o.levels > 16)) throw new InvalidArgumentError(`${optionRef('levels')} must be an integer 1–16, got ${o.levels}`);
  if (o.chunks && (o.chunks.length !== 3 || o.chunks.some((c) => !Number.isInteger(c) || c < 1))) throw new InvalidArgumentError(`${optionRef('chunks')} must be three positive integers z, y, x, got ${o.chunks.join(',')}`);
}

/** The shape of pyramid level `i` of a [z, y, x] volume: each axis halved (rounded up) i times. */
export function levelShape(shape: readonly number[], i: number): [number, number, number] {
  return shape.map((n) => Math.ceil(n / 2 ** i)) as [number, number, number];
}

/** OME-Zarr coordinate transformations of level i: scale 2^i · spacing, translation origin + (2^i − 1)/2 · spacing. */
function transformsOf(g: Geometry, i: number) {
  const sp = [g.spacing[2], g.spacing[1], g.spacing[0]];
  const org = [g.origin[2], g.origin[1], g.origin[0]];
  const f = 2 ** i;
  return [
    { type: 'scale', scale: sp.map((s) => s * f) },
    { type: 'translation', translation: org.map((o, a) => o + ((f - 1) / 2) * sp[a]) },
  ];
}

/** The multiscales attribute of OME-Zarr 0.4/0.5 for `levels` levels, with the geometry as scale and translation. */
function multiscales(levels: number, g: Geometry, ome: OmeVersion) {
  const axis = (name: string) => ({ name, type: 'space', unit: 'millimeter' });
  return [{
    ...(ome === '0.4' ? { version: '0.4' } : {}),
    name: 'image',
    axes: [axis('z'), axis('y'), axis('x')],
    datasets: Array.from({ length: levels }, (_, i) => ({ path: String(i), coordinateTransformations: transformsOf(g, i) })),
    type: 'mean',
    metadata: { method: 'imgpu 2x2x2 mean (odd edges: the mean of the voxels present)' },
  }];
}

function v2Compressor(c: ZarrCompressor, level?: number) {
  if (c === 'raw') return null;
  if (c === 'gzip') return { id: 'gzip', level: level ?? 1 };
  if (c === 'zstd') return { id: 'zstd', level: level ?? 3 };
  return { id: 'blosc', cname: 'lz4', clevel: level ?? 5, shuffle: 1, blocksize: 0 };
}

function v3Codecs(c: ZarrCompressor, level: number | undefined, typesize: number) {
  const bytes = { name: 'bytes', configuration: { endian: 'little' } };
  if (c === 'raw') return [bytes];
  if (c === 'gzip') return [bytes, { name: 'gzip', configuration: { level: level ?? 1 } }];
  if (c === 'zstd') return [bytes, { name: 'zstd', configuration: { level: level ?? 3, checksum: false } }];
  return [bytes, { name: 'blosc', configuration: { cname: 'lz4', clevel: level ?? 5, shuffle: typesize > 1 ? 'shuffle' : 'noshuffle', typesize, blocksize: 0 } }];
}

/** JSON in ASCII (non-ASCII characters escaped): zarr-python 2 decodes metadata as ASCII. */
const json = (o: unknown) => new TextEncoder().encode(JSON.stringify(o, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

/**
 * Creates an OME-Zarr for a [z, y, x] volume of `dtype` (its levels' arrays empty: chunks are written later, a
 * missing chunk reads as 0), replacing whatever was at `root`. Returns it opened.
 */
export async function createOmeZarr(root: string, shape: [number, number, number], dtype: Dtype, geometry: Geometry | undefined, o: ZarrWriteOptions = {}): Promise<OmeZarr> {
  checkZarrWriteOptions(o);
  const ome = o.ome ?? '0.4', levels = o.levels ?? 1, comp = o.compressor ?? 'gzip';
  const g = geometry ?? IDENTITY;
  const store = new AtomicFsStore(root);
  await rm(root, { recursive: true, force: true });
  const attrs = { multiscales: multiscales(levels, g, ome), imgpu: { geometry: g } };
  const size = { uint8: 1, uint16: 2, float32: 4 }[dtype];
  if (ome === '0.4') {
    await store.set('/.zgroup', json({ zarr_format: 2 }));
    await store.set('/.zattrs', json(attrs));
  } else {
    await store.set('/zarr.json', json({ zarr_format: 3, node_type: 'group', attributes: { ome: { version: '0.5', multiscales: attrs.multiscales }, imgpu: attrs.imgpu } }));
  }
  for (let i = 0; i < levels; i++) {
    const s = levelShape(shape, i);
    const chunks = (o.chunks ?? [64, 64, 64]).map((c, a) => Math.min(c, s[a]));
    if (ome === '0.4') {
      await store.set(`/${i}/.zarray`, json({
        zarr_format: 2, shape: s, chunks, dtype: V2_DTYPES[dtype], compressor: v2Compressor(comp, o.level), fill_value: 0,
        order: 'C', filters: null, dimension_separator: '/',
      }));
    } else {
      await store.set(`/${i}/zarr.json`, json({
        zarr_format: 3, node_type: 'array', shape: s, data_type: dtype, chunk_grid: { name: 'regular', configuration: { chunk_shape: chunks } },
        chunk_key_encoding: { name: 'default', configuration: { separator: '/' } }, codecs: v3Codecs(comp, o.level, size), fill_value: 0,
        dimension_names: ['z', 'y', 'x'], attributes: {},
      }));
    }
  }
  return openOmeZarr(root);
}

/**
 * Opens an OME-Zarr 0.4/0.5 image (every multiscale level) or a plain Zarr array (one level): typed errors for a
 * missing store, a data type other than uint8/uint16/float32, or a codec zarrita cannot decode (first chunk read).
 */
export async function openOmeZarr(root: string): Promise<OmeZarr> {
  return { root, opened: `${++openings}`, ...(await openOmeStore(await loadZarrita(), new AtomicFsStore(root), root)) };
}

let openings = 0;

/** A level's array opened on its own (a chunk thread's: zarr-worker.ts), zarrita's codecs and the atomic store as openOmeZarr gives them. */
export async function openLevelArray(root: string, path: string): Promise<ZarrArrayHandle> {
  const zarr = await loadZarrita();
  const location = zarr.root(new AtomicFsStore(root));
  return zarr.open(path ? location.resolve(path) : location, { kind: 'array' });
}

/** The element type of a level (uint8, uint16, float32), as its planes are held. */
type Pixels = Uint8Array | Uint16Array | Float32Array;

/** A chunk's coordinates among an array's (leading axes of size 1: chunk 0; a 2D array: y, x only). */
function chunkCoords(array: ZarrArrayHandle, [cz, cy, cx]: readonly number[]): number[] {
  return array.shape.length === 2 ? [cy, cx] : [...array.shape.slice(0, -3).map(() => 0), cz, cy, cx];
}

/** The voxels of chunk (cz, cy, cx) of a level, [z, y, x] ranges clipped to the level's shape. */
function chunkBox(shape: readonly number[], chunks: readonly number[], c: readonly number[]): [number, number][] {
  return c.map((i, a) => [i * chunks[a], Math.min(shape[a], (i + 1) * chunks[a])] as [number, number]);
}

/**
 * Decodes chunk `c` (cz, cy, cx) of a level and copies its planes in [a, b) into `dst`, a [·, h, w] block whose
 * plane `dstPlane` is level plane a (a missing chunk reads as the fill value, as zarrita gives it).
 */
export async function readChunkInto(array: ZarrArrayHandle, c: readonly number[], [a, b]: [number, number], dst: Pixels, dstPlane: number): Promise<void> {
  const arr = array as ZarrArray;
  const shape = arr.shape.length === 2 ? [1, ...arr.shape] : arr.shape.slice(-3);
  const chunks = arr.chunks.length === 2 ? [1, ...arr.chunks] : arr.chunks.slice(-3);
  const [[z0, z1], [y0, y1], [x0, x1]] = chunkBox(shape, chunks, c);
  const chunk = await arr.getChunk(chunkCoords(array, c));
  const src = chunk.data as Pixels;
  const [sz, sy, sx] = chunk.stride.slice(-3).length === 3 ? chunk.stride.slice(-3) : [0, ...chunk.stride];
  const [, h, w] = shape, n = x1 - x0;
  for (let z = Math.max(a, z0); z < Math.min(b, z1); z++) {
    for (let y = y0; y < y1; y++) {
      const d = ((dstPlane + z - a) * h + y) * w + x0, s = (z - z0) * sz + (y - y0) * sy;
      // Rows are contiguous in a C-order chunk (zarrita's default); an F-order chunk is copied voxel by voxel.
      if (sx === 1) dst.set(src.subarray(s, s + n), d);
      else for (let x = 0; x < n; x++) dst[d + x] = src[s + x * sx];
    }
  }
}

/**
 * Encodes chunk `c` (cz, cy, cx) of a level from `src`, a [·, h, w] block whose plane 0 is level plane `srcZ0`,
 * and writes its file atomically (AtomicFsStore). zarrita's set does it — the bytes and the fill of an edge chunk's
 * outside are what writePlanes writes — given a strided view of the chunk's voxels in the block, not a copy.
 */
export async function writeChunkFrom(array: ZarrArrayHandle, c: readonly number[], src: Pixels, srcZ0: number, planes: number): Promise<void> {
  const zarr = await loadZarrita();
  const arr = array as Zarr.Array<'uint16', AtomicFsStore>;
  const shape = arr.shape.length === 2 ? [1, ...arr.shape] : arr.shape.slice(-3);
  const chunks = arr.chunks.length === 2 ? [1, ...arr.chunks] : arr.chunks.slice(-3);
  const box = chunkBox(shape, chunks, c);
  box[0] = [Math.max(box[0][0], srcZ0), Math.min(box[0][1], srcZ0 + planes)];
  const [[z0, z1], [y0, y1], [x0, x1]] = box, [, h, w] = shape;
  const sel = box.map(([lo, hi]) => zarr.slice(lo, hi));
  const lead = arr.shape.length === 2 ? [] : arr.shape.slice(0, -3).map(() => 0);
  const dims = [z1 - z0, y1 - y0, x1 - x0];
  const view = src.subarray(((z0 - srcZ0) * h + y0) * w + x0) as Uint16Array;
  await zarr.set(arr, arr.shape.length === 2 ? sel.slice(1) : [...lead, ...sel], {
    data: view, shape: arr.shape.length === 2 ? dims.slice(1) : [...lead.map(() => 1), ...dims],
    stride: arr.shape.length === 2 ? [w, 1] : [...lead.map(() => h * w * dims[0]), h * w, w, 1],
  });
}

/** Planes [z0, z1) of a level as a host image (decoded chunk by chunk by zarrita). */
export async function readPlanes(level: ZarrLevel, dtype: Dtype, z0: number, z1: number, name = 'zarr'): Promise<Image> {
  const zarr = await loadZarrita();
  const [, h, w] = level.shape;
  const array = level.array as ZarrArray;
  const lead = array.shape.slice(0, -3).map(() => 0);
  const sel = array.shape.length === 2 ? [null, null] : [...lead, zarr.slice(z0, z1), null, null];
  let chunk: { data: unknown };
  try {
    chunk = await zarr.get(array, sel);
  } catch (e) {
    throw new UnsupportedFormatError(`${name}: chunks of level ${level.path || '0'} cannot be decoded (${(e as Error).message}); imgpu reads raw, gzip, zlib, zstd, blosc and lz4 chunks`);
  }
  const data = allocPixels(dtype, (z1 - z0) * h * w);
  data.set(chunk.data as ArrayLike<number>);
  return { data, shape: [z1 - z0, h, w], channels: 1, dtype };
}

/** Writes the planes of `img` ([n, h, w], the level's dtype) at plane z0 of a level: whole chunks, each file atomically. */
export async function writePlanes(level: ZarrLevel, img: Image, z0: number): Promise<void> {
  const [n, h, w] = img.shape.length === 3 ? img.shape : [1, ...img.shape];
  const zarr = await loadZarrita();
  const array = level.array as Zarr.Array<'uint16', AtomicFsStore>;
  const lead = array.shape.slice(0, -3).map(() => 0);
  const sel = [...lead, zarr.slice(z0, z0 + n), null, null];
  const shape = [...lead.map(() => 1), n, h, w];
  await zarr.set(array, sel, { data: img.data as Uint16Array, shape, stride: shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1)) });
}

/** The whole of level 0 in memory (a volume that fits: convert to NIfTI, small inputs), its geometry attached. */
export async function readOmeZarr(root: string): Promise<Image> {
  const z = await openOmeZarr(root);
  const l = z.levels[0];
  const img = await readPlanes(l, z.dtype, 0, l.shape[0], root);
  const shape = l.shape[0] > 1 ? l.shape : [l.shape[1], l.shape[2]];
  return { ...img, shape: shape as Image['shape'], geometry: z.geometry };
}

/** The level below `src` (2×2×2 mean) for planes [z0, z1) of the coarser level, from the finer level's planes. */
export function downsample(fine: Image, fineShape: readonly number[], z0: number, z1: number): Image {
  const [, H, W] = fineShape, h = Math.ceil(H / 2), w = Math.ceil(W / 2);
  const out = allocPixels(fine.dtype, (z1 - z0) * h * w);
  // fine holds planes [2·z0, min(D, 2·z1))
  meanBox(fine.data, fineShape, 2 * z0, [[z0, z1], [0, h], [0, w]], out, [z0, 0, 0], [h, w]);
  return { data: out, shape: [z1 - z0, h, w], channels: 1, dtype: fine.dtype };
}

/**
 * Voxels [z0, z1) × [y0, y1) × [x0, x1) of the level below a finer one of shape `fineShape` (2×2×2 means; at an odd
 * edge the mean of the voxels present), from `src` (fine planes, plane 0 being fine plane `srcZ0`) into `out`, a
 * block of planes of `oh` rows of `ow` voxels whose first voxel is coarse voxel `origin` — the whole planes of
 * `downsample`, or one chunk (a chunk thread's job: zarr-worker.ts). Integers: the mean rounded half up (exact: sums
 * of at most 8 voxels); floats: the float64 mean (the voxels summed in z, y, x order), stored float32.
 */
export function meanBox(src: Pixels, fineShape: readonly number[], srcZ0: number, box: [number, number][], out: Pixels, origin: readonly number[], [oh, ow]: [number, number]): void {
  const [D, H, W] = fineShape, int = !(src instanceof Float32Array);
  const [[z0, z1], [y0, y1], [x0, x1]] = box;
  // Interior voxels (a whole 2×2×2 block) run without the edge tests: x up to xi, then the odd edge if any.
  const xi = Math.min(x1, Math.floor(W / 2));
  for (let z = z0; z < z1; z++) {
    for (let y = y0; y < y1; y++) {
      const o = ((z - origin[0]) * oh + y - origin[1]) * ow - origin[2];
      let x = x0;
      if (2 * z + 1 < D && 2 * y + 1 < H) {
        const r0 = ((2 * z - srcZ0) * H + 2 * y) * W, r1 = r0 + W, r2 = r0 + H * W, r3 = r2 + W;
        for (; x < xi; x++) {
          const i = 2 * x;
          // 0 + first, as edgeMean sums from 0 (−0 voxels give +0 there).
          const sum = 0 + src[r0 + i] + src[r0 + i + 1] + src[r1 + i] + src[r1 + i + 1] + src[r2 + i] + src[r2 + i + 1] + src[r3 + i] + src[r3 + i + 1];
          out[o + x] = int ? (sum + 4) >> 3 : sum / 8;
        }
      }
      for (; x < x1; x++) out[o + x] = edgeMean(src, D, H, W, srcZ0, z, y, x, int);
    }
  }
}

/** The mean of the fine voxels present of coarse voxel (z, y, x) (meanBox at the level's odd edges). */
function edgeMean(src: Pixels, D: number, H: number, W: number, srcZ0: number, z: number, y: number, x: number, int: boolean): number {
  let sum = 0, n = 0;
  for (let dz = 0; dz < 2 && 2 * z + dz < D; dz++) {
    for (let dy = 0; dy < 2 && 2 * y + dy < H; dy++) {
      const row = ((2 * z + dz - srcZ0) * H + 2 * y + dy) * W;
      for (let dx = 0; dx < 2 && 2 * x + dx < W; dx++) { sum += src[row + 2 * x + dx]; n++; }
    }
  }
  return int ? Math.floor((sum + n / 2) / n) : sum / n;
}

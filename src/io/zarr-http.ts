import type * as Zarr from 'zarrita';
import { FileAccessError, InvalidArgumentError, UnsupportedFormatError } from '../core/errors.js';
import { allocPixels, type Dtype, type Geometry, type Image } from '../core/image.js';
import { IDENTITY, openOmeStore } from './ome-zarr-meta.js';
import type { ZarrLevel } from './zarr-types.js';

/**
 * An OME-Zarr read over HTTP (zarrita's FetchStore), lazily: opening reads the metadata only, and each region read
 * fetches and decodes only the chunks that region touches, a bounded number at a time — so a page can show slices
 * of a volume far larger than its memory. Platform-neutral (fetch, DecompressionStream): browsers and Node.
 * zarrita is imported with the first URL opened, so `import 'imgpu'` never loads it.
 */

/** A half-open voxel range [start, end) along z, y and x of one level. */
export interface ZarrRegion {
  z: [number, number];
  y: [number, number];
  x: [number, number];
}

/** One level of a remote OME-Zarr: its path in the group, shape [z, y, x] and chunk shape [z, y, x]. */
export interface RemoteZarrLevel {
  path: string;
  shape: [number, number, number];
  chunks: [number, number, number];
}

export interface RemoteZarrReadOptions {
  /** Cancels the chunk fetches still to come (a page moving on to another slice). */
  signal?: AbortSignal;
}

/** An OME-Zarr opened over HTTP: metadata in hand, voxels read region by region. */
export interface RemoteOmeZarr {
  url: string;
  dtype: Dtype;
  /** Finest first, as the multiscales metadata lists them. */
  levels: RemoteZarrLevel[];
  /** Level 0's geometry (spacing in the OME axes' unit, millimetres for imgpu's own). */
  geometry?: Geometry;
  ome: '0.4' | '0.5' | undefined;
  /** The voxels of `region` of level `level` as a [dz, dy, dx] image, its geometry the region's own. */
  readRegion(level: number, region: ZarrRegion, opts?: RemoteZarrReadOptions): Promise<Image>;
}

export interface OpenZarrUrlOptions {
  /** Chunks fetched and decoded at once (default 8): bounds the memory a read holds beyond its output. */
  concurrency?: number;
  /** The fetch to use (default: the global one), e.g. to sign requests. */
  fetch?: (request: Request) => Promise<Response>;
}

let zarrita: Promise<typeof Zarr> | undefined;
const loadZarrita = (): Promise<typeof Zarr> => (zarrita ??= import('zarrita'));

/**
 * A queue for zarrita's chunk reads that runs at most `limit` at once: zarrita's own starts every chunk of a
 * selection together, so a sagittal slice through a large volume would hold all its chunks decoded at the same time.
 */
function boundedQueue(limit: number): Zarr.GetOptions['createQueue'] {
  return () => {
    const tasks: (() => Promise<void>)[] = [];
    const worker = async (): Promise<void> => {
      for (let t = tasks.shift(); t; t = tasks.shift()) await t();
    };
    return {
      add: (fn) => { tasks.push(fn); },
      onIdle: () => Promise.all(Array.from({ length: limit }, worker)),
    };
  };
}

/** The geometry of a region of level `i`: voxels 2^i times level 0's, origin at the region's first voxel's centre. */
function regionGeometry(g: Geometry, i: number, r: ZarrRegion): Geometry {
  const f = 2 ** i;
  const spacing = g.spacing.map((s) => s * f) as Geometry['spacing'];
  // Voxel v of level i is centred at level-0 index f·v + (f − 1)/2 (the 2×2×2 mean's half-voxel shift).
  const at = [r.x[0], r.y[0], r.z[0]].map((v, a) => (f * v + (f - 1) / 2) * g.spacing[a]);
  const d = g.direction;
  const origin = [0, 1, 2].map((row) => g.origin[row] + d[3 * row] * at[0] + d[3 * row + 1] * at[1] + d[3 * row + 2] * at[2]) as Geometry['origin'];
  return { spacing, origin, direction: [...d] };
}

/** Checks a level index and a region against the level's shape (integers, non-empty, inside). */
function checkRegion(levels: readonly RemoteZarrLevel[], level: number, r: ZarrRegion): void {
  if (!Number.isInteger(level) || level < 0 || level >= levels.length) throw new InvalidArgumentError(`level must be an integer 0–${levels.length - 1}, got ${level}`);
  const shape = levels[level].shape;
  (['z', 'y', 'x'] as const).forEach((axis, a) => {
    const [s, e] = r[axis];
    if (!Number.isInteger(s) || !Number.isInteger(e) || s < 0 || e <= s || e > shape[a]) throw new InvalidArgumentError(`region ${axis} [${s}, ${e}) is not a non-empty range inside level ${level}'s 0–${shape[a]}`);
  });
}

/** Reads one region of a level, chunk by chunk (typed errors: a chunk that does not decode, a fetch that fails). */
async function readLevelRegion(zarr: typeof Zarr, url: string, l: ZarrLevel, dtype: Dtype, r: ZarrRegion, queue: Zarr.GetOptions['createQueue'], signal?: AbortSignal): Promise<Image> {
  const array = l.array as Zarr.Array<Zarr.DataType, Zarr.Readable>;
  const lead = array.shape.slice(0, -3).map(() => 0);
  const sel = [zarr.slice(...r.z), zarr.slice(...r.y), zarr.slice(...r.x)];
  let chunk: { data: unknown };
  try {
    chunk = await zarr.get(array, array.shape.length === 2 ? sel.slice(1) : [...lead, ...sel], { createQueue: queue, signal });
  } catch (e) {
    if (signal?.aborted) throw e;
    const why = (e as Error).message;
    if (zarr.isZarritaError(e)) throw new UnsupportedFormatError(`${url}: chunks of level ${l.path || '0'} cannot be decoded (${why})`);
    throw new FileAccessError(`${url}: chunks of level ${l.path || '0'} cannot be fetched (${why})`);
  }
  const shape: [number, number, number] = [r.z[1] - r.z[0], r.y[1] - r.y[0], r.x[1] - r.x[0]];
  const data = allocPixels(dtype, shape[0] * shape[1] * shape[2]);
  data.set(chunk.data as ArrayLike<number>);
  return { data, shape, channels: 1, dtype };
}

/**
 * Opens the OME-Zarr 0.4 (Zarr v2) or 0.5 (Zarr v3) image at `url` — or a plain 3D Zarr array — reading its
 * metadata only. The server must allow the page's origin to read it (CORS) when it is another origin.
 */
export async function openZarrUrl(url: string, opts: OpenZarrUrlOptions = {}): Promise<RemoteOmeZarr> {
  const concurrency = opts.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new InvalidArgumentError(`concurrency must be a positive integer, got ${concurrency}`);
  const zarr = await loadZarrita();
  const store = new zarr.FetchStore(url, opts.fetch ? { fetch: opts.fetch } : {});
  const s = await openOmeStore(zarr, store, url);
  const levels = s.levels.map(({ path, shape, chunks }) => ({ path, shape, chunks }));
  const queue = boundedQueue(concurrency);
  return {
    url, dtype: s.dtype, levels, geometry: s.geometry, ome: s.ome,
    async readRegion(level, region, o = {}) {
      checkRegion(levels, level, region);
      const img = await readLevelRegion(zarr, url, s.levels[level], s.dtype, region, queue, o.signal);
      return { ...img, geometry: regionGeometry(s.geometry ?? IDENTITY, level, region) };
    },
  };
}

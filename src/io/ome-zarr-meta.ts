import type * as Zarr from 'zarrita';
import { UnsupportedFormatError } from '../core/errors.js';
import type { Dtype, Geometry } from '../core/image.js';
import type { OmeZarrStructure, ZarrLevel } from './zarr-types.js';

/**
 * Reading an OME-Zarr's structure from any zarrita store — the filesystem in Node (io/zarr.ts), HTTP in browsers
 * and Node (io/zarr-http.ts): the multiscale levels, the data type and the geometry. Platform-neutral: zarrita is
 * passed in by the caller, who loads it lazily (a command or page that opens no Zarr never loads it).
 */

/** Zarr data types imgpu keeps as they are (others are refused: it processes uint8, uint16 and float32 volumes). */
const ZARR_DTYPES: Record<string, Dtype> = { uint8: 'uint8', uint16: 'uint16', float32: 'float32' };

export const IDENTITY: Geometry = { spacing: [1, 1, 1], origin: [0, 0, 0], direction: [1, 0, 0, 0, 1, 0, 0, 0, 1] };

type Transform = { type: string; scale?: number[]; translation?: number[] };
type Multiscale = { datasets: { path: string; coordinateTransformations?: Transform[] }[] };

/** The geometry of level 0 from OME-Zarr transformations (identity direction), or imgpu's own record of it. */
function geometryFrom(attrs: Record<string, unknown>, ms: Multiscale | undefined): Geometry | undefined {
  const own = (attrs.imgpu as { geometry?: Geometry } | undefined)?.geometry;
  if (own) return own;
  const t = ms?.datasets[0]?.coordinateTransformations;
  if (!t) return undefined;
  const sc = t.find((x) => x.type === 'scale')?.scale?.slice(-3) ?? [1, 1, 1];
  const tr = t.find((x) => x.type === 'translation')?.translation?.slice(-3) ?? [0, 0, 0];
  return { spacing: [sc[2], sc[1], sc[0]], origin: [tr[2], tr[1], tr[0]], direction: [...IDENTITY.direction] };
}

/** A level's array, its leading axes of size 1 (OME's t, c) dropped: [z, y, x] (a 2D array as one plane). */
function levelOf(array: Zarr.Array<Zarr.DataType, Zarr.Readable>, path: string, name: string): ZarrLevel {
  const lead = array.shape.slice(0, -3);
  if (array.shape.length < 2 || lead.some((n) => n !== 1)) throw new UnsupportedFormatError(`${name}: array ${path} has shape ${array.shape.join('×')}; imgpu reads one 3D scalar volume (z, y, x; leading axes of size 1)`);
  const last3 = (a: number[]) => (a.length === 2 ? [1, ...a] : a.slice(-3)) as [number, number, number];
  return { array, path, shape: last3(array.shape), chunks: last3(array.chunks) };
}

/**
 * The structure of the OME-Zarr 0.4/0.5 image (every multiscale level) or plain Zarr array (one level) in `store`,
 * `name` (its path or URL) in messages: typed errors for a store that holds no Zarr, a group without multiscales, a
 * level that cannot be opened, a data type other than uint8/uint16/float32.
 */
export async function openOmeStore(zarr: typeof Zarr, store: Zarr.Readable, name: string): Promise<OmeZarrStructure> {
  let node: Zarr.Array<Zarr.DataType, Zarr.Readable> | Zarr.Group<Zarr.Readable>;
  try {
    node = await zarr.open(store);
  } catch (e) {
    throw new UnsupportedFormatError(`${name} is not a Zarr store (${(e as Error).message})`);
  }
  let levels: ZarrLevel[];
  let attrs: Record<string, unknown> = {};
  let ome: OmeZarrStructure['ome'];
  let ms: Multiscale | undefined;
  if (node instanceof zarr.Array) {
    levels = [levelOf(node, '', name)];
  } else {
    attrs = node.attrs as Record<string, unknown>;
    const omeAttr = attrs.ome as { version?: string; multiscales?: unknown[] } | undefined;
    ms = ((omeAttr?.multiscales ?? attrs.multiscales) as Multiscale[] | undefined)?.[0];
    if (!ms) throw new UnsupportedFormatError(`${name}: a Zarr group without OME-Zarr multiscales metadata`);
    ome = omeAttr ? '0.5' : '0.4';
    levels = [];
    for (const d of ms.datasets) {
      const a = await zarr.open(node.resolve(d.path), { kind: 'array' }).catch((e: Error) => {
        throw new UnsupportedFormatError(`${name}: level ${d.path} cannot be opened (${e.message})`);
      });
      levels.push(levelOf(a, d.path, name));
    }
  }
  const dtype = ZARR_DTYPES[(levels[0].array as Zarr.Array<Zarr.DataType>).dtype];
  if (!dtype) throw new UnsupportedFormatError(`${name}: Zarr data type ${(levels[0].array as Zarr.Array<Zarr.DataType>).dtype} is not supported (uint8, uint16, float32)`);
  // Opaque from here on (ZarrArrayHandle): the readers and writers take the zarrita array back.
  return { dtype, levels, geometry: geometryFrom(attrs, ms), ome };
}

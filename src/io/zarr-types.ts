import type { Dtype, Geometry } from '../core/image.js';

// The shapes of an opened OME-Zarr, apart from the code that opens one (io/ome-zarr-meta.ts): that code's signature
// names zarrita's types, and the package's declarations must not reach them (see ZarrArrayHandle).

/**
 * A level's zarrita array, opaque outside the Zarr modules: the package's declarations then do not reach zarrita's
 * and numcodecs' own, which do not compile under a user's strict NodeNext settings (test/package).
 */
export interface ZarrArrayHandle {
  readonly shape: number[];
  readonly chunks: number[];
}

/** One level of an opened OME-Zarr: its array, shape [z, y, x], chunk shape, and its path in the group. */
export interface ZarrLevel {
  array: ZarrArrayHandle;
  path: string;
  shape: [number, number, number];
  chunks: [number, number, number];
}

/** What a store holds: its levels (finest first), data type, level 0's geometry, OME version (none: a plain array). */
export interface OmeZarrStructure {
  dtype: Dtype;
  levels: ZarrLevel[];
  geometry?: Geometry;
  ome: '0.4' | '0.5' | undefined;
}

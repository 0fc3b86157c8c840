import type { ImageFormat } from './format.js';
import { startsWith } from './samples.js';

/**
 * Photo formats only libvips (sharp) reads here: WebP, GIF (first frame) and AVIF. They have no portable codec, so
 * they are read in Node only (io/formats/node.ts gives them sharp's decoder) and never written; before the registry,
 * every file imgpu did not know went to sharp, so these were read — they stay readable by name.
 */
function vipsRaster(name: string, title: string, extensions: string[], sniff: (bytes: Uint8Array) => boolean): ImageFormat {
  return { name, title, holds: '8-bit gray, RGB, RGBA (read only, through libvips)', extensions, sniff, volume: 'never', inFolders: true, platforms: ['node'] };
}

const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

/** WebP: "RIFF" size "WEBP". */
export const webp = vipsRaster('webp', 'WebP', ['.webp'], (b) => startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8));
/** GIF87a / GIF89a. */
export const gif = vipsRaster('gif', 'GIF', ['.gif'], (b) => startsWith(b, ascii('GIF87a')) || startsWith(b, ascii('GIF89a')));
/** AVIF: an ISO-BMFF "ftyp" box of brand avif or avis. */
export const avif = vipsRaster('avif', 'AVIF', ['.avif'], (b) => startsWith(b, ascii('ftypavif'), 4) || startsWith(b, ascii('ftypavis'), 4));

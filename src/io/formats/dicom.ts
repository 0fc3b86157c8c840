import { decodeDicom } from '../dicom.js';
import type { ImageFormat } from './format.js';

/** "DICM" after DICOM Part 10's 128-byte preamble. */
const sniffDicom = (bytes: Uint8Array): boolean => bytes.length > 132 && String.fromCharCode(...bytes.subarray(128, 132)) === 'DICM';

/**
 * DICOM (io/dicom.ts): one file is a slice, read with its geometry; a folder holding one series is a volume (Node:
 * io/index.ts readImage; the playground gives the files of a series together). Read only: results go out as NIfTI.
 */
export const dicom: ImageFormat = {
  name: 'dicom',
  title: 'DICOM',
  holds: 'a slice, or a folder of one series as a float32 volume; read only',
  extensions: ['.dcm'],
  sniff: sniffDicom,
  byExtension: true,
  volume: 'always',
  inFolders: true,
  platforms: ['node', 'browser'],
  decode: (bytes, name) => decodeDicom(bytes, name),
};

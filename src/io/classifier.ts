import { readFile } from 'node:fs/promises';
import { FileAccessError } from '../core/errors.js';
import type { Classifier } from '../ops/detect/classifier.js';
import { parseClassifierXml } from '../ops/detect/classifier-xml.js';

export { parseClassifierXml, waldBoostXml } from '../ops/detect/classifier-xml.js';

/** Reads a classifier file (OpenCV LBP cascade or WaldBoost XML). */
export async function readClassifier(path: string): Promise<Classifier> {
  const xml = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new FileAccessError(e.code === 'ENOENT' ? `no such classifier file: ${path}` : `cannot read ${path}: ${e.message}`);
  });
  return parseClassifierXml(xml, path);
}

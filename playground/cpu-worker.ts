// The playground's CPU path, off the page's thread: runs a registry operation on the image it is sent.
import { imageFrom, type Image, type PixelArray } from '../src/core/image.js';
import { OPERATIONS } from '../src/ops/registry.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';

interface Request { id: number; op: string; params: Record<string, unknown>; image: Pick<Image, 'data' | 'shape' | 'channels' | 'geometry'>; files: Record<string, ChosenFile> }

self.onmessage = async (e: MessageEvent<Request>) => {
  const { id, op, params, image, files } = e.data;
  try {
    // A volume's geometry travels with it: the result has the geometry the operation gives it (as in Node).
    const img = { ...imageFrom(image.data as PixelArray, image.shape, image.channels), geometry: image.geometry };
    const r = await OPERATIONS[op].run(img, withChosenFiles(op, params, files), {});
    const o = r.output;
    self.postMessage({ id, output: { data: o.data, shape: o.shape, channels: o.channels, dtype: o.dtype, geometry: o.geometry }, timings: r.timings });
  } catch (err) {
    self.postMessage({ id, error: (err as Error).message ?? String(err) });
  }
};

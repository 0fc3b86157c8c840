// The playground's CPU path, off the page's thread: runs a registry operation, or a pipeline, on the image it is sent.
import { imageFrom, type Image, type PixelArray } from '../src/browser.js';
import { OPERATIONS } from '../src/browser.js';
import { parseChain, runChain } from './chain.js';
import { withChosenFiles, type ChosenFile } from './file-params.js';

type Sent = Pick<Image, 'data' | 'shape' | 'channels' | 'geometry'>;
interface Request { id: number; op?: string; chain?: string; params?: Record<string, unknown>; image: Sent; files?: Record<string, ChosenFile> }

/** An image as posted back: its plain fields (what structured clone keeps), a volume's geometry included. */
const plain = (o: Image) => ({ data: o.data, shape: o.shape, channels: o.channels, dtype: o.dtype, geometry: o.geometry });

self.onmessage = async (e: MessageEvent<Request>) => {
  const { id, op, chain, params, image, files } = e.data;
  try {
    // A volume's geometry travels with it: the result has the geometry the operation gives it (as in Node).
    const img = { ...imageFrom(image.data as PixelArray, image.shape, image.channels), geometry: image.geometry };
    if (chain !== undefined) {
      const r = await runChain(img, parseChain(chain));
      self.postMessage({ id, output: plain(r.output), timings: r.timings, stages: r.stages.map((s) => ({ ...s, image: plain(s.image) })) });
      return;
    }
    const r = await OPERATIONS[op!].run(img, withChosenFiles(op!, params ?? {}, files ?? {}), {});
    self.postMessage({ id, output: plain(r.output), timings: r.timings });
  } catch (err) {
    self.postMessage({ id, error: (err as Error).message ?? String(err) });
  }
};

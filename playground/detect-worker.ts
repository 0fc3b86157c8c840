// The detection page's CPU path, off the page's thread: a Detector (the detect operation's CPU path) for the
// classifier and options it was last sent, run on each frame it is sent. The classifier is parsed here once per
// change, with the same code as Node (parseClassifierXml), not once per frame.
import { imageFrom, type Channels } from '../src/browser.js';
import { Detector, type DetectOptions } from '../src/browser.js';
import { parseClassifierXml } from '../src/browser.js';

export type DetectRequest =
  | { id: number; type: 'classifier'; name: string; xml: string; options: DetectOptions }
  | { id: number; type: 'frame'; data: Uint8Array; width: number; height: number; channels: Channels };

let detector: Detector | undefined;

self.onmessage = async (e: MessageEvent<DetectRequest>) => {
  const m = e.data;
  try {
    if (m.type === 'classifier') {
      detector = new Detector(parseClassifierXml(m.xml, m.name), m.options);
      self.postMessage({ id: m.id });
      return;
    }
    if (!detector) throw new Error('no classifier loaded');
    const r = await detector.runCpu(imageFrom(m.data, [m.height, m.width], m.channels));
    self.postMessage({ id: m.id, detections: r.output.detections, timings: r.timings });
  } catch (err) {
    self.postMessage({ id: m.id, error: (err as Error).message ?? String(err) });
  }
};

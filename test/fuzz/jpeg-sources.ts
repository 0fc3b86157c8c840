import { fixture } from '../helpers/fixtures.js';

/**
 * The real JPEGs the fuzzer mutates: small ones (a case decodes in milliseconds on lavapipe) covering what the GPU
 * decoder takes — 4:2:0, 4:2:2, 4:4:4 baseline, gray, restart markers, progressive — and a cv2.imwrite file.
 */
export const FUZZ_SOURCES: readonly string[] = [
  fixture('jpeg-damaged', 'base.jpg'),
  fixture('jpeg-gpu', 'tiny420.jpg'),
  fixture('jpeg-gpu', 'tiny422.jpg'),
  fixture('jpeg-gpu', 'c420_rst.jpg'),
  fixture('jpeg-gpu', 'c420_prog.jpg'),
  fixture('jpeg-gpu', 'c444.jpg'),
  fixture('jpeg-gpu', 'gray.jpg'),
  fixture('jpeg', 'crop_o1.jpg'),
];

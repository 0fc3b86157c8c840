import { readImage } from '../src/io/index.js';
import type { Image } from '../src/core/image.js';
import { resizeLinearExact } from '../src/ops/detect/index.js';

/**
 * A frame of real photographs: the astronaut photograph at the frame's height, repeated (mirrored) across the
 * width, and the strip of 30 lfw faces scaled to half the frame's width over its lower right part.
 */
export async function frame(W: number, H: number): Promise<Image> {
  const astro = await readImage('test/fixtures/detect/astronaut.png');
  const lfw = await readImage('test/fixtures/detect/lfw_mosaic.png');
  const out = new Uint8Array(W * H);
  const scaled = (src: Image, w: number, h: number) => {
    const [sh, sw] = src.shape as [number, number];
    const px = new Uint8Array(w * h);
    resizeLinearExact(src.data as Uint8Array, sw, sh, w, h, px);
    return px;
  };
  const a = scaled(astro, H, H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const k = Math.floor(x / H), u = x % H;
      out[y * W + x] = a[y * H + (k % 2 ? H - 1 - u : u)];
    }
  }
  const fw = Math.floor(W / 2), fh = Math.round((fw * 192) / 640);
  const f = scaled(lfw, fw, fh);
  for (let y = 0; y < fh; y++) out.set(f.subarray(y * fw, (y + 1) * fw), (H - fh + y) * W + (W - fw));
  return { data: out, shape: [H, W], channels: 1, dtype: 'uint8' };
}


// `node dist/bench/detect-frame.js WxH out.png`: writes the frame (the detection fixture frame_640x352.png is one).
if (process.argv[1]?.endsWith('detect-frame.js') && process.argv.length === 4) {
  const [W, H] = process.argv[2].split('x').map(Number);
  const { writeImage } = await import('../src/io/index.js');
  await writeImage(process.argv[3], await frame(W, H));
}

import { type Image } from '../../core/image.js';
import type { Detection } from './group.js';

/**
 * A colour copy of an 8-bit image with each detection outlined (2-pixel green boxes, clipped to the image):
 * the picture `--output x.png` and annotated video frames show.
 */
export function annotate(img: Image, boxes: Detection[], thickness = 2): Image {
  const [h, w] = img.shape as [number, number];
  const out = new Uint8Array(w * h * 3);
  const src = img.data as Uint8Array, c = img.channels;
  if (c === 3) out.set(src);
  else for (let i = 0, j = 0; i < w * h; i++, j += 3) {
    const k = i * c;
    out[j] = src[k]; out[j + 1] = src[c === 1 ? k : k + 1]; out[j + 2] = src[c === 1 ? k : k + 2];
  }
  const paint = (x0: number, y0: number, x1: number, y1: number) => {
    for (let y = Math.max(0, y0); y < Math.min(h, y1); y++) {
      for (let x = Math.max(0, x0); x < Math.min(w, x1); x++) {
        const j = 3 * (y * w + x);
        out[j] = 0; out[j + 1] = 255; out[j + 2] = 0;
      }
    }
  };
  for (const b of boxes) {
    paint(b.x, b.y, b.x + b.width, b.y + thickness);
    paint(b.x, b.y + b.height - thickness, b.x + b.width, b.y + b.height);
    paint(b.x, b.y, b.x + thickness, b.y + b.height);
    paint(b.x + b.width - thickness, b.y, b.x + b.width, b.y + b.height);
  }
  return { data: out, shape: [h, w], channels: 3, dtype: 'uint8' };
}

/** The pyramid levels side by side (as they are scanned), for --show-pyramid: one gray image, rows of levels. */
export function pyramidMontage(levels: { width: number; height: number; pixels: Uint8Array }[]): Image {
  const W = Math.max(...levels.map((l) => l.width));
  const rows: { y: number; items: { x: number; l: (typeof levels)[number] }[]; h: number }[] = [];
  let row = { y: 0, items: [] as { x: number; l: (typeof levels)[number] }[], h: 0 }, x = 0;
  for (const l of levels) {
    if (x + l.width > W && row.items.length) {
      rows.push(row);
      row = { y: row.y + row.h + 2, items: [], h: 0 };
      x = 0;
    }
    row.items.push({ x, l });
    row.h = Math.max(row.h, l.height);
    x += l.width + 2;
  }
  rows.push(row);
  const H = row.y + row.h;
  const out = new Uint8Array(W * H);
  for (const r of rows) for (const { x: x0, l } of r.items) for (let y = 0; y < l.height; y++) out.set(l.pixels.subarray(y * l.width, (y + 1) * l.width), (r.y + y) * W + x0);
  return { data: out, shape: [H, W], channels: 1, dtype: 'uint8' };
}

#!/usr/bin/python3
"""Fixtures of the training tests (test/train), from data that ships with scikit-image (Debian python3-skimage):

- faces.vec: the first 80 faces of skimage.data.lfw_subset() (25×25) resized to 24×24 (cv2 INTER_AREA), in OpenCV's
  .vec format (int32 count, int32 w·h, two int16 zeros; per sample a zero byte and w·h int16 pixels);
- backgrounds/: 8-bit gray images without faces: the 100 non-face crops of lfw_subset as a 10×10 mosaic, and
  scikit-image photographs of textures and objects downscaled;
- scene.png + scene.json: the 20 held-out faces (80–99) pasted at known boxes and sizes on a photograph not used
  for training (the cat of 'chelsea', gray), for detection on held-out data.
Run: /usr/bin/python3 scripts/make_train_fixtures.py
"""
import json
import os
import struct

import cv2
import numpy as np
from skimage import data

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'train')


def gray8(img):
    img = np.asarray(img)
    if img.ndim == 3:
        img = cv2.cvtColor(img[..., :3].astype(np.uint8), cv2.COLOR_RGB2GRAY)
    if img.dtype != np.uint8:
        img = (np.clip(img, 0, 1) * 255).round().astype(np.uint8) if img.max() <= 1 else img.astype(np.uint8)
    return img


def write_vec(path, samples, w, h):
    with open(path, 'wb') as f:
        f.write(struct.pack('<iihh', len(samples), w * h, 0, 0))
        for s in samples:
            f.write(b'\x00')
            f.write(s.astype('<i2').tobytes())


def main():
    os.makedirs(os.path.join(OUT, 'backgrounds'), exist_ok=True)
    lfw = data.lfw_subset()  # 200 × 25 × 25 float in [0, 1]: 100 faces, then 100 non-faces
    faces = [cv2.resize(gray8(f), (24, 24), interpolation=cv2.INTER_AREA) for f in lfw[:100]]
    write_vec(os.path.join(OUT, 'faces.vec'), faces[:80], 24, 24)
    mosaic = np.vstack([np.hstack([gray8(lfw[100 + 10 * r + c]) for c in range(10)]) for r in range(10)])
    cv2.imwrite(os.path.join(OUT, 'backgrounds', 'lfw_nonfaces.png'), mosaic)
    for name in ['brick', 'grass', 'gravel', 'rocket', 'coffee', 'text', 'moon', 'coins']:
        img = gray8(getattr(data, name)())
        s = 140 / max(img.shape)
        cv2.imwrite(os.path.join(OUT, 'backgrounds', f'{name}.png'), cv2.resize(img, (round(img.shape[1] * s), round(img.shape[0] * s)), interpolation=cv2.INTER_AREA))
    scene = cv2.resize(gray8(data.chelsea()), (320, 212), interpolation=cv2.INTER_AREA)
    boxes = []
    rng = np.random.default_rng(37)
    for i, face in enumerate(faces[80:]):
        size = int(rng.choice([24, 30, 36]))
        x, y = 8 + (i % 5) * 62, 8 + (i // 5) * 50
        scene[y:y + size, x:x + size] = cv2.resize(face, (size, size), interpolation=cv2.INTER_LINEAR)
        boxes.append([x, y, size, size])
    cv2.imwrite(os.path.join(OUT, 'scene.png'), scene)
    with open(os.path.join(OUT, 'scene.json'), 'w') as f:
        json.dump({'boxes': boxes, 'note': 'held-out lfw faces 80-99 pasted on chelsea (gray), x y w h'}, f)


if __name__ == '__main__':
    main()

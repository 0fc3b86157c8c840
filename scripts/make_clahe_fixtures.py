#!/usr/bin/python3
"""CLAHE reference outputs from Debian's OpenCV 4.6 (cv2.createCLAHE(clip, tiles).apply), on real photographs
shipped with scikit-image. Run from the repository root: /usr/bin/python3 scripts/make_clahe_fixtures.py
Colour references are what an OpenCV user writes: RGB -> YCrCb, CLAHE of Y, back to RGB (cv2.cvtColor)."""
import os
import shutil

import cv2
import numpy as np
import skimage.data

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')
IMAGES = os.path.join(ROOT, 'images')
OUT = os.path.join(ROOT, 'clahe')
os.makedirs(OUT, exist_ok=True)
DATA = os.path.dirname(skimage.data.__file__)


def gray(name):
    return cv2.imread(os.path.join(IMAGES, name), cv2.IMREAD_UNCHANGED)


def save(name, img):
    assert cv2.imwrite(os.path.join(OUT, name), img), name


# (input, clip, tiles W×H, why)
CASES = [
    ('camera.png', 2.0, (8, 8), 'sizes divide: no padding'),
    ('moon.png', 3.0, (7, 5), '512 % 7, 512 % 5: REFLECT_101 padding on both sides'),
    ('coins.png', 2.0, (8, 8), '303×384: height does not divide'),
    ('coins.png', 40.0, (16, 16), "OpenCV's default clip, 16×16 tiles"),
    ('page.png', 1.0, (4, 3), 'document scan, low clip'),
]
for name, clip, tiles, _ in CASES:
    out = cv2.createCLAHE(clip, tiles).apply(gray(name))
    save(f'{name[:-4]}-{tiles[0]}x{tiles[1]}-{clip:g}.png', out)

# Width divides, height does not: OpenCV pads a whole extra tile column too (both sides padded).
cam = gray('camera.png')[:301, :256].copy()
cv2.imwrite(os.path.join(IMAGES, 'camera_301x256.png'), cam)
save('camera_301x256-8x8-2.png', cv2.createCLAHE(2.0, (8, 8)).apply(cam))

# 16-bit (OpenCV uses 65536 bins).
m16 = gray('moon16.png')
assert m16.dtype == np.uint16
save('moon16-8x8-2.png', cv2.createCLAHE(2.0, (8, 8)).apply(m16))
save('moon16-5x3-4.png', cv2.createCLAHE(4.0, (5, 3)).apply(m16))
# 32×32 tiles of 65536 bins: 256 MiB of tile histograms, beyond a 128 MiB GPU binding (the GPU splits them).
save('moon16-32x32-2.png', cv2.createCLAHE(2.0, (32, 32)).apply(m16))


def colour_clahe(rgb, clip, tiles):
    ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
    ycc[:, :, 0] = cv2.createCLAHE(clip, tiles).apply(np.ascontiguousarray(ycc[:, :, 0]))
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)


# Colour, 8-bit: the cat photograph (files are BGR on disk for cv2.imwrite).
rgb = cv2.cvtColor(cv2.imread(os.path.join(IMAGES, 'chelsea.png'), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
save('chelsea-8x8-2.png', cv2.cvtColor(colour_clahe(rgb, 2.0, (8, 8)), cv2.COLOR_RGB2BGR))
# Colour, 16-bit: the same photograph widened to 16 bits with deterministic low bits.
rgb16 = (rgb.astype(np.uint32) * 257 + (np.arange(rgb.size).reshape(rgb.shape) * 7919 % 257)).astype(np.uint16)
cv2.imwrite(os.path.join(IMAGES, 'chelsea16.png'), cv2.cvtColor(rgb16, cv2.COLOR_RGB2BGR))
save('chelsea16-8x8-2.png', cv2.cvtColor(colour_clahe(rgb16, 2.0, (8, 8)), cv2.COLOR_RGB2BGR))
# More tiles than pixels along an axis: OpenCV pads with REFLECT_101 (reflecting more than once where the padding is
# longer than the image) and returns a result; tiles of one pixel and whole images of one pixel included.
# Inputs beside their references: tiny-<W>x<H>[-16].png, tiny-<W>x<H>[-16]-<tx>x<ty>-<clip>.png.
TINY = [
    ((4, 4), 8, [(2, 10), (10, 10), (10, 2), (8, 8), (3, 3)]),
    ((1, 1), 8, [(8, 8), (1, 1), (3, 1)]),
    ((5, 3), 8, [(7, 2), (2, 7), (5, 3)]),
    ((4, 4), 16, [(2, 10), (10, 10)]),
]
for (w, h), bits, grids in TINY:
    n = np.arange(w * h, dtype=np.uint32).reshape(h, w)
    img = ((n * 13 + 7) % 256).astype(np.uint8) if bits == 8 else ((n * 4001 + 123) % 65536).astype(np.uint16)
    stem = f'tiny-{w}x{h}' + ('-16' if bits == 16 else '')
    save(f'{stem}.png', img)
    for tx, ty in grids:
        save(f'{stem}-{tx}x{ty}-2.png', cv2.createCLAHE(2.0, (tx, ty)).apply(img))

print('clahe fixtures written to', os.path.normpath(OUT))

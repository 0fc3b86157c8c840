#!/usr/bin/python3
"""Morphology reference outputs: Debian's OpenCV 4.6 (cv2.erode/dilate/morphologyEx, default border and
anchor) and SciPy (scipy.ndimage.grey_erosion/grey_dilation/grey_opening/grey_closing, default mode 'reflect'),
on real photographs shipped with scikit-image. Run from the repository root:
/usr/bin/python3 scripts/make_morph_fixtures.py"""
import os

import cv2
import numpy as np
from scipy import ndimage

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')
IMAGES = os.path.join(ROOT, 'images')
OUT = os.path.join(ROOT, 'morph')
os.makedirs(OUT, exist_ok=True)


def save(name, img):
    if name.endswith('.npy'):
        np.save(os.path.join(OUT, name), img)
    else:
        assert cv2.imwrite(os.path.join(OUT, name), img), name


cam = cv2.imread(os.path.join(IMAGES, 'camera.png'), cv2.IMREAD_UNCHANGED)
# 300×451: a width that is not a multiple of 4 (the GPU's packed words straddle rows).
cat = cv2.imread(os.path.join(IMAGES, 'chelsea_gray_cv2.png'), cv2.IMREAD_UNCHANGED)
rect = lambda w, h: cv2.getStructuringElement(cv2.MORPH_RECT, (w, h))

# OpenCV, rectangles of the sizes and lines.
for k in (3, 7, 15, 27, 51):
    save(f'cv-camera-erode-rect{k}.png', cv2.erode(cam, rect(k, k)))
for k in (3, 51):
    save(f'cv-camera-dilate-rect{k}.png', cv2.dilate(cam, rect(k, k)))
save('cv-cat-erode-rect7x5.png', cv2.erode(cat, rect(7, 5)))
save('cv-cat-dilate-rect4x6.png', cv2.dilate(cat, rect(4, 6)))
save('cv-cat-erode-lineh15.png', cv2.erode(cat, rect(15, 1)))
save('cv-cat-dilate-linev15.png', cv2.dilate(cat, rect(1, 15)))
save('cv-cat-erode-rect5x5-it3.png', cv2.erode(cat, rect(5, 5), iterations=3))
for op, code in [('open', cv2.MORPH_OPEN), ('close', cv2.MORPH_CLOSE), ('gradient', cv2.MORPH_GRADIENT),
                 ('tophat', cv2.MORPH_TOPHAT), ('blackhat', cv2.MORPH_BLACKHAT)]:
    save(f'cv-cat-{op}-rect5x5-it2.png', cv2.morphologyEx(cat, code, rect(5, 5), iterations=2))
# Non-separable elements (OpenCV's own rasterization).
save('cv-cat-erode-cross5.png', cv2.erode(cat, cv2.getStructuringElement(cv2.MORPH_CROSS, (5, 5))))
save('cv-cat-dilate-ellipse7x7.png', cv2.dilate(cat, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))))
save('cv-cat-erode-ellipse9x5-it2.png', cv2.erode(cat, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 5)), iterations=2))
for name, shape in [('ellipse7x7', (7, 7)), ('ellipse9x5', (9, 5)), ('ellipse6x4', (6, 4))]:
    save(f'se-{name}.npy', cv2.getStructuringElement(cv2.MORPH_ELLIPSE, shape).astype(np.uint8))

# SciPy mode: u8 photograph (even sizes shift dilation), float32 image, 3D volumes.
save('sp-cat-erode-5x4.png', ndimage.grey_erosion(cat, size=(4, 5)))
save('sp-cat-dilate-4x6.png', ndimage.grey_dilation(cat, size=(6, 4)))
save('sp-cat-open-5x5.png', ndimage.grey_opening(cat, size=(5, 5)))
save('sp-cat-close-6x3.png', ndimage.grey_closing(cat, size=(3, 6)))
rng = np.random.default_rng(5)
f = (cam[100:228, 200:360].astype(np.float32) / 255.0 + rng.normal(0, 0.05, (128, 160))).astype(np.float32)
np.save(os.path.join(IMAGES, 'camera_f32.npy'), f)
save('sp-f32-erode-5x5.npy', ndimage.grey_erosion(f, size=(5, 5)))
save('sp-f32-dilate-6x3.npy', ndimage.grey_dilation(f, size=(3, 6)))
vol = ndimage.gaussian_filter(rng.normal(0, 1, (20, 30, 41)), 1.5).astype(np.float32)
np.save(os.path.join(IMAGES, 'volume_f32.npy'), vol)
save('sp-vol-erode-4x5x3.npy', ndimage.grey_erosion(vol, size=(3, 5, 4)))
save('sp-vol-dilate-5x3x4.npy', ndimage.grey_dilation(vol, size=(4, 3, 5)))
vol8 = np.clip(vol * 60 + 128, 0, 255).astype(np.uint8)
np.save(os.path.join(IMAGES, 'volume_u8.npy'), vol8)
save('sp-vol8-open-3x3x3.npy', ndimage.grey_opening(vol8, size=(3, 3, 3)))
# Elements far longer than the image (issue 24: rect:100000x100000 failed to compile on the GPU) on a 29×45 crop:
# windows clamped to the image must change nothing. (OpenCV allocates the element: 100000 along one axis only.)
small = np.ascontiguousarray(cat[100:129, 200:245])
cv2.imwrite(os.path.join(IMAGES, 'cat_29x45.png'), small)
save('cv-small-erode-rect100000x1.png', cv2.erode(small, rect(100000, 1)))
save('cv-small-dilate-rect3x100000-it2.png', cv2.dilate(small, rect(3, 100000), iterations=2))
save('cv-small-erode-rect3000x3000.png', cv2.erode(small, rect(3000, 3000)))
save('cv-small-open-rect40x70.png', cv2.morphologyEx(small, cv2.MORPH_OPEN, rect(40, 70)))
save('sp-small-erode-100000x70.png', ndimage.grey_erosion(small, size=(70, 100000)))
save('sp-small-dilate-60x50.png', ndimage.grey_dilation(small, size=(50, 60)))
print('morph fixtures written to', os.path.normpath(OUT))

# The denoising example of docs/morphology.md: the coins photograph binarized with Otsu, 8 % salt-and-pepper noise.
coins = cv2.imread(os.path.join(IMAGES, 'coins.png'), cv2.IMREAD_UNCHANGED)
_, binary = cv2.threshold(coins, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
noise = np.random.default_rng(8).random(binary.shape)
binary[noise < 0.04] = 0
binary[noise > 0.96] = 255
docs = os.path.join(os.path.dirname(__file__), '..', 'docs', 'images')
os.makedirs(docs, exist_ok=True)
cv2.imwrite(os.path.join(docs, 'morph-noisy.png'), binary)

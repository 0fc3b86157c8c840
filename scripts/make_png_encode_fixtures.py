#!/usr/bin/python3
"""PNGs written by cv2.imwrite for the libpng encoder's tests (test/io/png-encode.test.ts). Run from the repository root:
/usr/bin/python3 scripts/make_png_encode_fixtures.py  (Debian's python3-opencv 4.6 on libpng 1.6.39, zlib 1.2.13)
Input: crops of odd sizes of the Chelsea photograph (colour, test/fixtures/images/chelsea.png, 8 bits, and chelsea16.png)
and of the camera and moon pictures (gray, 8 and 16 bits), an RGBA image (Chelsea with a gradient alpha), one pixel
and one column. Each is written by cv2.imwrite as it is called in a batch anchor: no parameters (cv2's default: Sub
filter, zlib level 1, Z_RLE), for a smaller crop of the colour photograph with IMWRITE_PNG_COMPRESSION 0, 1 and 6
(libpng's adaptive filters, the default strategy), and gray8's cv2.equalizeHist (the CLI's test). The larger crops span several deflate blocks (zlib ends one every 16383
symbols) and several IDAT chunks (libpng's 8192-byte buffer), so block boundaries are compared too. The test reads
each file (its pixels are cv2.imread's: test/io/png-libpng.test.ts), writes it again and compares the bytes; no
other reference is needed. Writes test/fixtures/png-encode/NAME.png (about 200 KB in all).
"""
import os

import cv2
import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), '..')
IMAGES = os.path.join(ROOT, 'test', 'fixtures', 'images')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'png-encode')
os.makedirs(OUT, exist_ok=True)

bgr8 = cv2.imread(os.path.join(IMAGES, 'chelsea.png'), cv2.IMREAD_COLOR)
bgr16 = cv2.imread(os.path.join(IMAGES, 'chelsea16.png'), cv2.IMREAD_UNCHANGED)
gray8 = cv2.imread(os.path.join(IMAGES, 'camera.png'), cv2.IMREAD_GRAYSCALE)
gray16 = cv2.imread(os.path.join(IMAGES, 'moon16.png'), cv2.IMREAD_UNCHANGED)
assert bgr16.dtype == np.uint16 and gray16.dtype == np.uint16 and gray16.ndim == 2

H, W = 131, 149  # odd, and 58 KB of RGB: four deflate blocks, several IDAT chunks
alpha = ((np.arange(37)[:, None] * 7 + np.arange(53)[None, :] * 5) % 256).astype(np.uint8)
IMAGES_TO_WRITE = {
    'rgb8': bgr8[60:60 + H, 100:100 + W],
    'rgb16': bgr16[100:167, 150:251],
    'gray8': gray8[150:347, 180:391],
    'gray16': gray16[150:251, 180:313],
    'rgba8': np.dstack([bgr8[100:137, 150:203], alpha]),
    'rgba16': np.dstack([bgr16[100:137, 150:203], alpha.astype(np.uint16) * 257]),
    'gray8_1x1': gray8[200:201, 200:201],
    'rgb8_column': bgr8[0:97, 200:201],
}
for name, img in IMAGES_TO_WRITE.items():
    assert cv2.imwrite(os.path.join(OUT, name + '.png'), np.ascontiguousarray(img))
for level in (0, 1, 6):
    assert cv2.imwrite(os.path.join(OUT, f'rgb8_level{level}.png'), np.ascontiguousarray(bgr8[60:127, 100:171]), [cv2.IMWRITE_PNG_COMPRESSION, level])
# The CLI's output: `imgpu equalize gray8.png out.png` against cv2.imwrite(cv2.equalizeHist(...)).
assert cv2.imwrite(os.path.join(OUT, 'gray8_equalized.png'), cv2.equalizeHist(IMAGES_TO_WRITE['gray8']))
print(cv2.__version__, sorted(os.listdir(OUT)))

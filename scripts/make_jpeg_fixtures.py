#!/usr/bin/python3
"""JPEG fixtures for imgpu's native codec tests (test/io/jpeg.test.ts), made with Debian's python3-opencv 4.6
(libjpeg-turbo 2.1.5). Run from the repository root: /usr/bin/python3 scripts/make_jpeg_fixtures.py
Input: the Chelsea photograph (scikit-image, test/fixtures/images/chelsea.png) and the camera man (gray).
Writes into test/fixtures/jpeg/:
  chelsea_q90.jpg            cv2.imwrite at quality 90 (4:2:0): the file the decoder is tested on
  chelsea_q90_gray.png       cv2.imread(chelsea_q90.jpg, IMREAD_GRAYSCALE)   (the file's luma)
  chelsea_q90_rgb.png        cv2.imread(chelsea_q90.jpg) (an RGB PNG)
  crop_o{1..8}.jpg           a 151×100 crop of it (odd width: 4:2:0 edges), quality 90, with an EXIF
                             orientation tag 1..8 inserted (APP1, big-endian TIFF)
  crop_o{1..8}_gray.png / _rgb.png   cv2.imread of each (cv2 applies the orientation)
  camera_gray.jpg            cv2.imwrite of the gray camera man (one component)
  chelsea_q95_cv2.jpg        cv2.imwrite(chelsea_q90_rgb) at the default quality 95: the encoder's byte reference
  camera_q95_cv2.jpg         cv2.imwrite(camera) at quality 95, gray
"""
import os
import struct

import cv2
import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures')
OUT = os.path.join(ROOT, 'jpeg')
os.makedirs(OUT, exist_ok=True)


def out(name):
    return os.path.join(OUT, name)


def with_orientation(jpeg: bytes, orientation: int) -> bytes:
    # TIFF header (MM, 42, IFD at 8), one IFD entry: 0x0112 SHORT count 1 value, next IFD 0.
    tiff = b'MM\x00\x2a' + struct.pack('>I', 8) + struct.pack('>H', 1) + struct.pack('>HHIHH', 0x0112, 3, 1, orientation, 0) + struct.pack('>I', 0)
    payload = b'Exif\x00\x00' + tiff
    app1 = b'\xff\xe1' + struct.pack('>H', len(payload) + 2) + payload
    return jpeg[:2] + app1 + jpeg[2:]


bgr = cv2.imread(os.path.join(ROOT, 'images', 'chelsea.png'), cv2.IMREAD_COLOR)
cv2.imwrite(out('chelsea_q90.jpg'), bgr, [cv2.IMWRITE_JPEG_QUALITY, 90])
cv2.imwrite(out('chelsea_q90_gray.png'), cv2.imread(out('chelsea_q90.jpg'), cv2.IMREAD_GRAYSCALE))
decoded = cv2.imread(out('chelsea_q90.jpg'), cv2.IMREAD_COLOR)
cv2.imwrite(out('chelsea_q90_rgb.png'), decoded)
cv2.imwrite(out('crop.jpg'), bgr[100:200, 150:301], [cv2.IMWRITE_JPEG_QUALITY, 90])
base = open(out('crop.jpg'), 'rb').read()
os.remove(out('crop.jpg'))
for o in range(1, 9):
    name = f'crop_o{o}'
    open(out(name + '.jpg'), 'wb').write(with_orientation(base, o))
    cv2.imwrite(out(name + '_gray.png'), cv2.imread(out(name + '.jpg'), cv2.IMREAD_GRAYSCALE))
    cv2.imwrite(out(name + '_rgb.png'), cv2.imread(out(name + '.jpg'), cv2.IMREAD_COLOR))
camera = cv2.imread(os.path.join(ROOT, 'images', 'camera.png'), cv2.IMREAD_GRAYSCALE)
cv2.imwrite(out('camera_gray.jpg'), camera)
cv2.imwrite(out('chelsea_q95_cv2.jpg'), decoded)
cv2.imwrite(out('camera_q95_cv2.jpg'), camera)
# The PNG references must hold what cv2 decoded (lossless round trip).
assert np.array_equal(cv2.imread(out('chelsea_q90_rgb.png')), decoded)
print('wrote', len(os.listdir(OUT)), 'files to', OUT)
